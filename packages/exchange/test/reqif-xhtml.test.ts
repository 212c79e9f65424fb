import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { FormComponent } from '../../contract/src/form.js';
import { importRecords, openRowSource } from '../src/index.js';
import { EMPTY_TOPIC_REVISION, emptyTopic } from './support/empty-topic.js';

/**
 * ReqIF in: XHTML becomes text with its paragraphs, lists, tables and line breaks, and an
 * embedded object is a warning on its row naming the file; date-times in date fields become the date
 * they state in their own offset (in CSV too), and the report says so once a field.
 */
const dir = mkdtempSync(join(tmpdir(), 'rxs-reqif-xhtml-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const REVISION = EMPTY_TOPIC_REVISION;

const COMPONENTS: FormComponent[] = [
  { type: 'textarea', key: 'text', label: 'Text' },
  { type: 'datetime', key: 'due', subtype: 'date', dateLabel: 'Due', label: 'Due' },
  { type: 'datetime', key: 'at', subtype: 'datetime', label: 'At' },
];

/** Imports `file` (dry run) into an empty topic of COMPONENTS; the records it creates when written. */
async function importFile(file: string, dryRun = false) {
  const { client, created } = emptyTopic('Requirements', COMPONENTS);
  const report = await importRecords(client, openRowSource(file), { revisionId: REVISION, dryRun });
  return { report, created: created.map(({ name, data }) => ({ name, data })) };
}

const definition = (kind: 'STRING' | 'XHTML' | 'DATE', id: string, name: string) =>
  `<ATTRIBUTE-DEFINITION-${kind} IDENTIFIER="${id}" LONG-NAME="${name}"><TYPE><DATATYPE-DEFINITION-${kind}-REF>dt-${kind}</DATATYPE-DEFINITION-${kind}-REF></TYPE></ATTRIBUTE-DEFINITION-${kind}>`;
const ref = (kind: string, id: string) =>
  `<DEFINITION><ATTRIBUTE-DEFINITION-${kind}-REF>${id}</ATTRIBUTE-DEFINITION-${kind}-REF></DEFINITION>`;
const name = (value: string) =>
  `<ATTRIBUTE-VALUE-STRING THE-VALUE="${value}">${ref('STRING', 'a-name')}</ATTRIBUTE-VALUE-STRING>`;
const xhtml = (value: string) =>
  `<ATTRIBUTE-VALUE-XHTML>${ref('XHTML', 'a-text')}<THE-VALUE>${value}</THE-VALUE></ATTRIBUTE-VALUE-XHTML>`;
const date = (id: string, value: string) =>
  `<ATTRIBUTE-VALUE-DATE THE-VALUE="${value}">${ref('DATE', id)}</ATTRIBUTE-VALUE-DATE>`;

/** A ReqIF file of spec objects with a name, a text (XHTML), a date and a date-time attribute. */
function reqifFile(file: string, objects: string[][]): string {
  const path = join(dir, file);
  writeFileSync(
    path,
    `<?xml version="1.0" encoding="UTF-8"?>
<REQ-IF xmlns="http://www.omg.org/spec/ReqIF/20110401/reqif.xsd" xmlns:xhtml="http://www.w3.org/1999/xhtml">
  <CORE-CONTENT><REQ-IF-CONTENT>
    <DATATYPES>
      <DATATYPE-DEFINITION-STRING IDENTIFIER="dt-STRING" LONG-NAME="String" MAX-LENGTH="4000"/>
      <DATATYPE-DEFINITION-XHTML IDENTIFIER="dt-XHTML" LONG-NAME="Text"/>
      <DATATYPE-DEFINITION-DATE IDENTIFIER="dt-DATE" LONG-NAME="Date"/>
    </DATATYPES>
    <SPEC-TYPES>
      <SPEC-OBJECT-TYPE IDENTIFIER="type-req" LONG-NAME="Requirement"><SPEC-ATTRIBUTES>
        ${definition('STRING', 'a-name', 'ReqIF.Name')}
        ${definition('XHTML', 'a-text', 'Text')}
        ${definition('DATE', 'a-due', 'Due')}
        ${definition('DATE', 'a-at', 'At')}
      </SPEC-ATTRIBUTES></SPEC-OBJECT-TYPE>
    </SPEC-TYPES>
    <SPEC-OBJECTS>
${objects
  .map(
    (values, i) =>
      `      <SPEC-OBJECT IDENTIFIER="R-${i + 1}"><TYPE><SPEC-OBJECT-TYPE-REF>type-req</SPEC-OBJECT-TYPE-REF></TYPE><VALUES>${values.join('')}</VALUES></SPEC-OBJECT>`,
  )
  .join('\n')}
    </SPEC-OBJECTS>
    <SPECIFICATIONS><SPECIFICATION IDENTIFIER="spec"/></SPECIFICATIONS>
  </REQ-IF-CONTENT></CORE-CONTENT>
</REQ-IF>
`,
  );
  return path;
}

describe('XHTML becomes text with its paragraphs, lists and line breaks', () => {
  it('lists, nested paragraphs, line breaks and a table come out as lines', async () => {
    const file = reqifFile('structure.reqif', [
      [
        name('Structure'),
        xhtml(`<xhtml:div>
  <xhtml:p>The pump shall:</xhtml:p>
  <xhtml:ul>
    <xhtml:li>hold the <xhtml:b>pressure</xhtml:b>,</xhtml:li>
    <xhtml:li><xhtml:p>stop on a fault,</xhtml:p><xhtml:p>and say why.</xhtml:p>
      <xhtml:ol><xhtml:li>first</xhtml:li><xhtml:li>second</xhtml:li></xhtml:ol>
    </xhtml:li>
  </xhtml:ul>
  <xhtml:div><xhtml:div><xhtml:p>Nested paragraph.</xhtml:p></xhtml:div>Line one<xhtml:br/>line two</xhtml:div>
  <xhtml:ol start="3"><xhtml:li>third</xhtml:li><xhtml:li>fourth</xhtml:li></xhtml:ol>
  <xhtml:table>
    <xhtml:tr><xhtml:th>Mode</xhtml:th><xhtml:th>Limit</xhtml:th></xhtml:tr>
    <xhtml:tr><xhtml:td><xhtml:p>Run</xhtml:p></xhtml:td><xhtml:td>2 bar</xhtml:td></xhtml:tr>
  </xhtml:table>
</xhtml:div>`),
      ],
    ]);
    const { report, created } = await importFile(file);
    expect(report.complete).toBe(true);
    expect(created[0]!.data).toEqual({
      text: [
        'The pump shall:',
        '- hold the pressure,',
        '- stop on a fault,',
        '  and say why.',
        '  1. first',
        '  2. second',
        'Nested paragraph.',
        'Line one',
        'line two',
        '3. third',
        '4. fourth',
        'Mode | Limit',
        'Run | 2 bar',
      ].join('\n'),
    });
  });

  it('an embedded object is its fallback text, and a warning on its row names its file', async () => {
    const file = reqifFile('objects.reqif', [
      [
        name('Figure'),
        xhtml(
          '<xhtml:div><xhtml:p>See <xhtml:object data="images/fig1.png" type="image/png">Figure 1</xhtml:object> below.</xhtml:p>' +
            '<xhtml:p><xhtml:object data="files/wiring.ole" type="application/oleobject"/></xhtml:p></xhtml:div>',
        ),
      ],
      [name('Plain'), xhtml('<xhtml:div>No object.</xhtml:div>')],
    ]);
    const { report, created } = await importFile(file);
    expect(created.map((record) => record.data)).toEqual([
      { text: 'See Figure 1 below.' },
      { text: 'No object.' },
    ]);
    expect(report.complete).toBe(true);
    expect(report.notes).toEqual([
      // ReqIF.Name names the records, and is a column of its own that fills a field when mapped.
      'ReqIF.Name: the record\'s name, in no field (an rxs export repeats it in a field\'s own attribute. To fill a field with it too, map it with --rename "ReqIF.Name=FIELD").',
      'spec object 1 (R-1): Text: embedded object images/fig1.png (image/png) is not imported: attach it to the record by hand.',
      'spec object 1 (R-1): Text: embedded object files/wiring.ole (application/oleobject) is not imported: attach it to the record by hand.',
    ]);
  });
});

describe('date-times in date fields are converted in their stated offset, and the report says so', () => {
  it('a date field takes the date each date-time states; a datetime field keeps the time', async () => {
    const file = reqifFile('dates.reqif', [
      [name('West'), date('a-due', '2026-03-01T23:30:00-05:00'), date('a-at', '2026-03-01T23:30:00-05:00')],
      [name('East'), date('a-due', '2026-03-02T01:15:00+09:00'), date('a-at', '2026-03-02T01:15:30+09:00')],
      [name('UTC'), date('a-due', '2026-03-03T12:00:00Z')],
      [name('Date alone'), date('a-due', '2026-03-04T00:00:00')],
    ]);
    const { report, created } = await importFile(file);
    expect(created.map((record) => record.data)).toEqual([
      { due: '2026-03-01', at: '2026-03-01T23:30-05:00' },
      { due: '2026-03-02', at: '2026-03-02T01:15:30+09:00' },
      { due: '2026-03-03' },
      { due: '2026-03-04' },
    ]);
    expect(report.notes).toEqual([
      // ReqIF.Name names the records, and is a column of its own that fills a field when mapped.
      'ReqIF.Name: the record\'s name, in no field (an rxs export repeats it in a field\'s own attribute. To fill a field with it too, map it with --rename "ReqIF.Name=FIELD").',
      '"Due" (due) is a date field: 3 date-times were converted to their dates in their own offsets, not in UTC (2026-03-01T23:30:00-05:00 became 2026-03-01); the time of day is not kept.',
    ]);
  });

  it('a CSV date-time in a date field gets the same rule', async () => {
    const file = join(dir, 'dates.csv');
    writeFileSync(file, 'name,Due,At\nLate,2026-03-01T23:30:00-05:00,2026-03-01T23:30-05:00\n');
    const { report, created } = await importFile(file);
    expect(created).toEqual([{ name: 'Late', data: { due: '2026-03-01', at: '2026-03-01T23:30-05:00' } }]);
    expect(report.notes).toEqual([
      '"Due" (due) is a date field: 1 date-time was converted to its date in its own offset, not in UTC (2026-03-01T23:30:00-05:00 became 2026-03-01); the time of day is not kept.',
    ]);
  });
});
