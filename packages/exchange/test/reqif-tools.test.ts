import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { FormComponent } from '../../contract/src/form.js';
import {
  ImportFileError,
  importRecords,
  openRowSource,
  type ImportOptions,
  type OpenSourceOptions,
} from '../src/index.js';
import { EMPTY_TOPIC_REVISION, emptyTopic } from './support/empty-topic.js';

/**
 * ReqIF as the tools write it: enumerations whose key or label names the option, objects
 * named by their LONG-NAME, chapter name or text, and messages that say what is wrong with the file
 * that was given. Files of other tools are in fixtures/reqif (their sources in SOURCES.md).
 */
const dir = mkdtempSync(join(tmpdir(), 'rxs-reqif-tools-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const fixture = (name: string) => new URL(`./fixtures/reqif/${name}`, import.meta.url).pathname;

const REVISION = EMPTY_TOPIC_REVISION;

async function importFile(
  file: string,
  components: FormComponent[],
  options: Partial<ImportOptions> & { source?: OpenSourceOptions } = {},
) {
  const { client, created } = emptyTopic('Requirements', components);
  const report = await importRecords(client, openRowSource(file, options.source), {
    revisionId: REVISION,
    ...options,
  });
  return { report, created: created.map(({ name, data }) => ({ name, data })) };
}

async function refusal(file: string, options: OpenSourceOptions = {}): Promise<string> {
  try {
    for await (const row of openRowSource(file, options).rows()) void row;
  } catch (error) {
    expect(error).toBeInstanceOf(ImportFileError);
    return (error as Error).message;
  }
  throw new Error(`${file} was read`);
}

const select = (key: string, label: string, options: string[]): FormComponent => ({
  type: 'select',
  key,
  label,
  values: options.map((option) => ({ label: option, value: option.toLowerCase() })),
});

/** A ReqIF document of one spec object type: its datatypes, attribute definitions and objects. */
function reqif(tool: string, datatypes: string, attributes: string, objects: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<REQ-IF xmlns="http://www.omg.org/spec/ReqIF/20110401/reqif.xsd" xmlns:xhtml="http://www.w3.org/1999/xhtml">
  <THE-HEADER>
    <REQ-IF-HEADER IDENTIFIER="header">
      <REQ-IF-TOOL-ID>${tool}</REQ-IF-TOOL-ID>
      <REQ-IF-VERSION>1.0</REQ-IF-VERSION>
      <SOURCE-TOOL-ID>${tool}</SOURCE-TOOL-ID>
    </REQ-IF-HEADER>
  </THE-HEADER>
  <CORE-CONTENT>
    <REQ-IF-CONTENT>
      <DATATYPES>
        <DATATYPE-DEFINITION-STRING IDENTIFIER="dt-string" LONG-NAME="String" MAX-LENGTH="4000"/>
        <DATATYPE-DEFINITION-XHTML IDENTIFIER="dt-xhtml" LONG-NAME="Text"/>
${datatypes}
      </DATATYPES>
      <SPEC-TYPES>
        <SPEC-OBJECT-TYPE IDENTIFIER="type-req" LONG-NAME="Requirement">
          <SPEC-ATTRIBUTES>
${attributes}
          </SPEC-ATTRIBUTES>
        </SPEC-OBJECT-TYPE>
      </SPEC-TYPES>
      <SPEC-OBJECTS>
${objects}
      </SPEC-OBJECTS>
    </REQ-IF-CONTENT>
  </CORE-CONTENT>
</REQ-IF>
`;
}

const stringAttribute = (id: string, name: string) =>
  `            <ATTRIBUTE-DEFINITION-STRING IDENTIFIER="${id}" LONG-NAME="${name}"><TYPE><DATATYPE-DEFINITION-STRING-REF>dt-string</DATATYPE-DEFINITION-STRING-REF></TYPE></ATTRIBUTE-DEFINITION-STRING>`;
const xhtmlAttribute = (id: string, name: string) =>
  `            <ATTRIBUTE-DEFINITION-XHTML IDENTIFIER="${id}" LONG-NAME="${name}"><TYPE><DATATYPE-DEFINITION-XHTML-REF>dt-xhtml</DATATYPE-DEFINITION-XHTML-REF></TYPE></ATTRIBUTE-DEFINITION-XHTML>`;
const stringValue = (definition: string, value: string) =>
  `            <ATTRIBUTE-VALUE-STRING THE-VALUE="${value}"><DEFINITION><ATTRIBUTE-DEFINITION-STRING-REF>${definition}</ATTRIBUTE-DEFINITION-STRING-REF></DEFINITION></ATTRIBUTE-VALUE-STRING>`;
const xhtmlValue = (definition: string, xhtml: string) =>
  `            <ATTRIBUTE-VALUE-XHTML><DEFINITION><ATTRIBUTE-DEFINITION-XHTML-REF>${definition}</ATTRIBUTE-DEFINITION-XHTML-REF></DEFINITION><THE-VALUE>${xhtml}</THE-VALUE></ATTRIBUTE-VALUE-XHTML>`;
const specObject = (identifier: string, values: string[], longName?: string) =>
  `        <SPEC-OBJECT IDENTIFIER="${identifier}"${longName === undefined ? '' : ` LONG-NAME="${longName}"`} LAST-CHANGE="2024-05-02T10:00:00Z">
          <TYPE><SPEC-OBJECT-TYPE-REF>type-req</SPEC-OBJECT-TYPE-REF></TYPE>
          <VALUES>
${values.join('\n')}
          </VALUES>
        </SPEC-OBJECT>`;

describe('enumerations name an option by their key or by their label, whichever is one', () => {
  it('Capella: the key is a colour ("Navy"), the LONG-NAME the option ("Requirement")', async () => {
    const { report, created } = await importFile(fixture('capella-requirements-vp.reqif'), [
      { type: 'textfield', key: 'puid', label: 'IE PUID' },
      select('object_type', 'IE Object Type', ['Requirement', 'Function', 'Capability']),
    ]);
    expect(report.rowProblems).toEqual([]);
    expect(created).toEqual([
      { name: 'Requirement-1', data: { puid: 'PUID-1', object_type: 'requirement' } },
    ]);
  });

  it('Enterprise Architect: every key is "foo", the values are named by their IDENTIFIER', async () => {
    const { report, created } = await importFile(
      fixture('enterprise-architect-8.reqif'),
      [
        { type: 'textarea', key: 'description', label: 'Description' },
        select('status', 'Status', ['Proposed', 'Accepted', 'Rejected', 'Implemented', 'Approved']),
      ],
      {
        source: { specType: 'Functional Requirement' },
        renames: new Map([
          ['FUNC-REQ-TXT', 'Description'],
          ['FUNC-REQ-STATUS', 'Status'],
        ]),
      },
    );
    expect(report.rowProblems).toEqual([]);
    expect(created).toEqual([
      {
        name: 'Observe earths surface.',
        data: { description: 'The system shall observe the earths surface.', status: 'proposed' },
      },
      {
        name: 'Spotting fire',
        data: {
          description: 'The system shall alert the control center if it spots a fire in a forest.',
          status: 'proposed',
        },
      },
    ]);
  });

  it('fmStudio-like keys ("1"): the label names the option; a key that is an option wins; neither is a row error naming both', async () => {
    const enumValue = (id: string, key: string, label: string) =>
      `            <ENUM-VALUE IDENTIFIER="${id}" LONG-NAME="${label}"><PROPERTIES><EMBEDDED-VALUE KEY="${id.slice(3)}" OTHER-CONTENT="${key}"/></PROPERTIES></ENUM-VALUE>`;
    const priority = (ref: string) =>
      `            <ATTRIBUTE-VALUE-ENUMERATION><DEFINITION><ATTRIBUTE-DEFINITION-ENUMERATION-REF>a-priority</ATTRIBUTE-DEFINITION-ENUMERATION-REF></DEFINITION><VALUES><ENUM-VALUE-REF>${ref}</ENUM-VALUE-REF></VALUES></ATTRIBUTE-VALUE-ENUMERATION>`;
    const file = join(dir, 'fmstudio.reqif');
    writeFileSync(
      file,
      reqif(
        'fmStudio',
        `        <DATATYPE-DEFINITION-ENUMERATION IDENTIFIER="dt-priority" LONG-NAME="Priority">
          <SPECIFIED-VALUES>
${enumValue('ev-1', '1', 'High')}
${enumValue('ev-2', 'low', 'Minor')}
${enumValue('ev-3', '4', 'Critical')}
          </SPECIFIED-VALUES>
        </DATATYPE-DEFINITION-ENUMERATION>`,
        `${stringAttribute('a-name', 'ReqIF.Name')}
            <ATTRIBUTE-DEFINITION-ENUMERATION IDENTIFIER="a-priority" LONG-NAME="Priority" MULTI-VALUED="false"><TYPE><DATATYPE-DEFINITION-ENUMERATION-REF>dt-priority</DATATYPE-DEFINITION-ENUMERATION-REF></TYPE></ATTRIBUTE-DEFINITION-ENUMERATION>`,
        [
          specObject('fm-1', [stringValue('a-name', 'Pressure hold'), priority('ev-1')]),
          specObject('fm-2', [stringValue('a-name', 'Door lock'), priority('ev-2')]),
          specObject('fm-3', [stringValue('a-name', 'Drying'), priority('ev-3')]),
        ].join('\n'),
      ),
    );
    const { report, created } = await importFile(file, [select('priority', 'Priority', ['High', 'Low'])], {
      continueOnError: true,
    });
    expect(created).toEqual([
      { name: 'Pressure hold', data: { priority: 'high' } },
      { name: 'Door lock', data: { priority: 'low' } },
    ]);
    expect(report.rowProblems.map(({ where, problems }) => ({ where, problems }))).toEqual([
      {
        where: 'spec object 3 (fm-3)',
        problems: [
          '"Priority" (priority, select) takes one of "high" (High), "low" (Low), not the enumeration value "Critical" (key "4").',
        ],
      },
    ]);
  });
});

describe('record names of objects without ReqIF.Name', () => {
  it('are the LONG-NAME, else ReqIF.ChapterName, else the first line of ReqIF.Text, and the report says which', async () => {
    const longText =
      'The pump shall hold the pressure of the sterilisation chamber within 2 bar of the set point in every phase of the cycle.';
    const file = join(dir, 'polarion.reqif');
    writeFileSync(
      file,
      reqif(
        'Polarion',
        '',
        [
          stringAttribute('a-name', 'ReqIF.Name'),
          stringAttribute('a-chapter', 'ReqIF.ChapterName'),
          xhtmlAttribute('a-text', 'ReqIF.Text'),
          stringAttribute('a-owner', 'Owner'),
        ].join('\n'),
        [
          specObject('P-1', [stringValue('a-chapter', 'Introduction')]),
          specObject('P-2', [
            xhtmlValue(
              'a-text',
              `<xhtml:div><xhtml:p>\n  ${longText}\n</xhtml:p><xhtml:p>Second paragraph.</xhtml:p></xhtml:div>`,
            ),
          ]),
          specObject('P-3', [stringValue('a-chapter', '1.2 Scope')], 'Scope'),
          specObject(
            'P-4',
            [stringValue('a-name', 'Named'), stringValue('a-chapter', 'Ignored')],
            'Ignored too',
          ),
          specObject('P-5', [stringValue('a-owner', 'qa')]),
        ].join('\n'),
      ),
    );
    const { report } = await importFile(file, [{ type: 'textfield', key: 'owner', label: 'Owner' }], {
      dryRun: true,
      previewRows: 10,
    });
    expect(report.preview.map(({ where, name }) => [where, name])).toEqual([
      ['spec object 1 (P-1)', 'Introduction'],
      [
        'spec object 2 (P-2)',
        'The pump shall hold the pressure of the sterilisation chamber within 2 bar of…',
      ],
      ['spec object 3 (P-3)', 'Scope'],
      ['spec object 4 (P-4)', 'Named'],
      ['spec object 5 (P-5)', undefined],
    ]);
    expect(report.notes).toEqual(
      expect.arrayContaining([
        "spec object 3 (P-3): no ReqIF.Name; the record is named by the spec object's LONG-NAME.",
        'spec object 1 (P-1): no ReqIF.Name or LONG-NAME; the record is named by its ReqIF.ChapterName.',
        'spec object 2 (P-2): no ReqIF.Name, LONG-NAME or ReqIF.ChapterName; the record is named by the first line of its ReqIF.Text (at most 80 characters).',
        "spec object 5 (P-5): no ReqIF.Name, LONG-NAME, ReqIF.ChapterName or ReqIF.Text to name the record by; without a name from another column (the topic's title field) the row is refused.",
      ]),
    );
    expect(report.notes.filter((note) => note.includes('P-4'))).toEqual([]);
    expect(report.rowProblems.map(({ where }) => where)).toEqual(['spec object 5 (P-5)']);
    expect(report).toMatchObject({ rows: 5, planned: { created: 4 }, rejected: 1 });
  });
});

describe('messages that fit the file', () => {
  it('a DOORS fragment (spec objects without their types) is said to be one', async () => {
    const file = fixture('doors-fragment.reqif');
    const { client } = emptyTopic('System Requirements', []);
    const failure = await importRecords(client, openRowSource(file), { revisionId: REVISION }).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(ImportFileError);
    expect((failure as Error).message).toBe(
      `${file} holds 1 spec object but no SPEC-OBJECT-TYPE, no attribute definitions and no SPECIFICATION: it is a fragment of a ReqIF exchange (a partial export, as DOORS writes them), whose types are in another file, so its values have no attribute names to import by. ` +
        'Export the module again as a whole ReqIF document, with its types and specification, and import that file.',
    );
    expect((failure as Error).message).not.toContain('undefined');
  });

  /** A ReqIF text of `count` objects; the object `bad` (from 0) carries `value` as its name. */
  const named = (count: number, bad: number, value: string) =>
    reqif(
      'DOORS',
      '',
      [stringAttribute('a-name', 'ReqIF.Name'), xhtmlAttribute('a-text', 'ReqIF.Text')].join('\n'),
      Array.from({ length: count }, (_, i) =>
        specObject(`D-${i}`, [
          stringValue('a-name', i === bad ? value : `Requirement ${i}`),
          xhtmlValue('a-text', '<xhtml:div>Feed water &amp; steam &lt;5 &#181;S/cm<!-- R&D --></xhtml:div>'),
        ]),
      ).join('\n'),
    );
  const lineAndColumn = (text: string, needle: string) => {
    const before = text.slice(0, text.indexOf(needle)).split('\n');
    return { line: before.length, column: before[before.length - 1]!.length + 1 };
  };

  it('a bare "&" is reported where it is, not as a tag left open at the end of the file', async () => {
    const text = named(12, 6, 'R&D budget');
    const file = join(dir, 'ampersand.reqif');
    writeFileSync(file, text);
    const { line, column } = lineAndColumn(text, '&D budget');
    expect(line).toBeGreaterThan(60);
    expect(await refusal(file)).toBe(
      `${file} is not well-formed XML at line ${line}, column ${column}: an "&" that starts no character or entity reference (XML writes it as "&amp;"). Correct it there, or export the file again.`,
    );
  });

  it("other errors at the parser's own line and column; a file cut short says so", async () => {
    const entity = join(dir, 'nbsp.reqif');
    const nbsp = named(4, 2, 'Dose&nbsp;rate');
    writeFileSync(entity, nbsp);
    const { line } = lineAndColumn(nbsp, '&nbsp;');
    expect(await refusal(entity)).toMatch(
      new RegExp(
        `is not well-formed XML at line ${line}, column \\d+: undefined entity \\(XML knows only &amp;`,
      ),
    );

    const mismatched = join(dir, 'mismatched.reqif');
    const wrong = named(4, -1, '').replace('</VALUES>', '</VALUE>');
    writeFileSync(mismatched, wrong);
    const at = lineAndColumn(wrong, '</VALUE>');
    expect(await refusal(mismatched)).toBe(
      `${mismatched} is not well-formed XML at line ${at.line}, column ${at.column + '</VALUE>'.length - 1}: unexpected close tag. Correct it there, or export the file again.`,
    );

    const cut = join(dir, 'cut.reqif');
    writeFileSync(cut, named(4, -1, '').slice(0, 2000));
    expect(await refusal(cut)).toMatch(
      /is not well-formed XML: it ends at line \d+, column \d+ before its XML is complete \(unclosed tag: [A-Z-]+\)\. The file may be cut short: export it again\.$/,
    );
  });
});

describe('source identity', () => {
  it('each record keeps its spec object IDENTIFIER, or the attribute --key names (a custom one, or ReqIF.ForeignID)', async () => {
    const file = join(dir, 'identity.reqif');
    writeFileSync(
      file,
      reqif(
        'DOORS',
        '',
        [
          stringAttribute('a-name', 'ReqIF.Name'),
          stringAttribute('a-foreign', 'ReqIF.ForeignID'),
          stringAttribute('a-number', 'Absolute Number'),
        ].join('\n'),
        [
          specObject('_d1c2', [
            stringValue('a-name', 'One'),
            stringValue('a-foreign', 'REQ-1'),
            stringValue('a-number', '17'),
          ]),
          specObject('_e3f4', [
            stringValue('a-name', 'Two'),
            stringValue('a-foreign', 'REQ-2'),
            stringValue('a-number', '18'),
          ]),
        ].join('\n'),
      ),
    );
    const sourceIds = async (options: Partial<ImportOptions>) => {
      const { client, created } = emptyTopic('Requirements', []);
      const report = await importRecords(client, openRowSource(file), { revisionId: REVISION, ...options });
      expect(report.rowProblems).toEqual([]);
      expect(report.problems).toEqual([]);
      return created.map((record) => record.context.global_element_id);
    };
    expect(await sourceIds({ ignoreUnknownColumns: true })).toEqual(['_d1c2', '_e3f4']);
    // "Absolute Number" names no field: as the key, it is no unknown column.
    expect(await sourceIds({ keyColumn: 'Absolute Number' })).toEqual(['17', '18']);
    expect(await sourceIds({ keyColumn: 'ReqIF.ForeignID', ignoreUnknownColumns: true })).toEqual([
      'REQ-1',
      'REQ-2',
    ]);
  });
});

describe('standard attributes are columns too: left out unless mapped, then they fill their field', () => {
  const file = join(dir, 'standard-attributes.reqif');
  writeFileSync(
    file,
    reqif(
      'DOORS',
      '',
      [
        stringAttribute('a-name', 'ReqIF.Name'),
        stringAttribute('a-foreign', 'ReqIF.ForeignID'),
        stringAttribute('a-chapter', 'ReqIF.ChapterName'),
        xhtmlAttribute('a-text', 'ReqIF.Text'),
      ].join('\n'),
      [
        specObject('_a1', [
          stringValue('a-name', 'Pressure hold'),
          stringValue('a-foreign', 'REQ-7'),
          stringValue('a-chapter', '2.1 Pressure'),
          xhtmlValue('a-text', '<xhtml:div>The pump shall hold 2 bar.</xhtml:div>'),
        ]),
      ].join('\n'),
    ),
  );
  const fields: FormComponent[] = [
    { type: 'textfield', key: 'foreign_id', label: 'Foreign ID' },
    { type: 'textfield', key: 'title', label: 'Title' },
    { type: 'textfield', key: 'chapter', label: 'Chapter' },
    { type: 'textarea', key: 'text', label: 'Text' },
  ];

  it('not mapped: no field is filled and no column is unknown; the record keeps its name and readable id', async () => {
    const { report, created } = await importFile(file, fields, { previewRows: 1 });
    expect(report.problems).toEqual([]);
    expect(report.complete).toBe(true);
    expect(report.columns).toEqual(
      ['ReqIF.Name', 'ReqIF.ForeignID', 'ReqIF.ChapterName', 'ReqIF.Text'].map((column) => ({
        column,
        as: 'ignored',
      })),
    );
    expect(report.preview[0]).toMatchObject({ name: 'Pressure hold', readableId: 'REQ-7' });
    expect(created).toEqual([{ name: 'Pressure hold', data: {} }]);
  });

  it('mapped (--rename): each fills its field, and the name and readable id are still read from them', async () => {
    const { report, created } = await importFile(file, fields, {
      previewRows: 1,
      renames: new Map([
        ['ReqIF.ForeignID', 'Foreign ID'],
        ['ReqIF.Name', 'Title'],
        ['ReqIF.ChapterName', 'Chapter'],
        ['ReqIF.Text', 'Text'],
      ]),
    });
    expect(report.problems).toEqual([]);
    expect(report.complete).toBe(true);
    expect(report.columns.map(({ column, field }) => [column, field?.name])).toEqual([
      ['ReqIF.Name', 'Title'],
      ['ReqIF.ForeignID', 'Foreign ID'],
      ['ReqIF.ChapterName', 'Chapter'],
      ['ReqIF.Text', 'Text'],
    ]);
    expect(report.preview[0]).toMatchObject({ name: 'Pressure hold', readableId: 'REQ-7' });
    expect(created).toEqual([
      {
        name: 'Pressure hold',
        data: {
          foreign_id: 'REQ-7',
          title: 'Pressure hold',
          chapter: '2.1 Pressure',
          text: 'The pump shall hold 2 bar.',
        },
      },
    ]);
  });
});
