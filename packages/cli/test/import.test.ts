import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/harness.js';
import { approvedTopic } from '../../server/test/support/topics.js';
import { missingReader, shouldSkip } from '../../exchange/test/support/spreadsheet-readers.js';
import { runCli } from './run-cli.js';

const samples = new URL('../../../reference/samples/', import.meta.url);
const load = (file: string) => JSON.parse(readFileSync(new URL(file, samples), 'utf8'));
const sampleTopic = load('kt_system_requirements.json');
const sampleRecords: { name: string; data: Record<string, unknown> }[] = load(
  'records_system_requirements.json',
);

/** The reference form, with a number, a checkbox and a date beside its text, selects and checklist. */
const SCHEMA = {
  ...sampleTopic.knowledge_topic_schema,
  components: [
    ...sampleTopic.knowledge_topic_schema.components,
    { type: 'number', key: 'risk_score', label: 'Risk score', validate: { min: 0, max: 10 } },
    { type: 'checkbox', key: 'safety', label: 'Safety relevant' },
    { type: 'datetime', key: 'due', label: 'Due', subtype: 'date', dateLabel: 'Due' },
  ],
};

/** Text every reader of a file format gets wrong somewhere: line breaks, quotes, formulas, markup. */
const UGLY = [
  'line one\nline two\r\nline three\rend',
  '  leading and trailing spaces\t',
  'a "quoted" value, with commas; and semicolons',
  '=HYPERLINK("http://evil.example","click")',
  "'+1+2 with an apostrophe of its own",
  '-minus first',
  '@SUM(A1)',
  '<b>markup</b> & <script>alert(1)</script> ]]>',
  'emoji 🧪 and ÄÖÜ ß 漢字 and a right-to-left ‏שלום',
  'text with _x000D_ in it',
  'x'.repeat(5000),
];

const uglyRecords = UGLY.map((text, i) => ({
  name: `UGLY_${String(i + 1).padStart(3, '0')}`,
  data: {
    name: `UGLY_${String(i + 1).padStart(3, '0')} — ${text.slice(0, 60)}`,
    description: text,
    justification: text,
    type: 'regulatory',
    checklist_kgd0ri: ['Equipment', 'Infrastructure'],
    priority: 'medium',
    risk_score: i / 2,
    safety: i % 2 === 0,
    due: `2026-0${(i % 9) + 1}-1${i % 9}`,
  },
}));

interface ExportedRecord {
  id: string;
  name: string;
  version: string;
  values: Record<string, unknown>;
}

describe('rxs import', () => {
  let t: TestServer;
  let dir: string;
  let keyFile: string;
  let source: string;
  const rxs = (...args: string[]) => runCli([...args, '--url', t.url, '--api-key-file', keyFile, '--quiet']);
  const count = async (revision: string) =>
    (await t.api('GET', `/records/count?context__knowledge_unit_topic_id=${revision}`)).body.count as number;
  const exportJson = async (revision: string): Promise<ExportedRecord[]> => {
    const out = join(dir, `check-${revision}-${Date.now()}.json`);
    const result = await rxs('export', '--kt', revision, '--format', 'json', '--out', out);
    expect(result.code, result.stderr).toBe(0);
    return JSON.parse(readFileSync(out, 'utf8')).topics[0].records;
  };
  const fresh = (name: string) => approvedTopic(t, name, { schema: SCHEMA });

  beforeAll(async () => {
    t = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), 'rxs-import-'));
    keyFile = join(dir, 'owner.key');
    writeFileSync(keyFile, `${t.ownerKey}\n`);
    source = await fresh('System Requirements');
    for (const record of [...sampleRecords, ...uglyRecords]) {
      const created = await t.api('POST', '/records/', {
        body: {
          name: record.name,
          form: {},
          data: record.data,
          context: { knowledge_unit_topic_id: source },
        },
      });
      expect(created.status, created.text).toBe(201);
    }
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Records as a person compares them: by name, values without empty ones (a text cell cannot tell "" from none). */
  const comparable = (records: ExportedRecord[], emptyIsNone: boolean) =>
    records
      .map((r) => ({
        name: r.name,
        values: Object.fromEntries(
          Object.entries(r.values).filter(
            ([, v]) => !emptyIsNone || !(v === '' || v === null || (Array.isArray(v) && v.length === 0)),
          ),
        ),
      }))
      .sort((a, b) => (a.name < b.name ? -1 : 1));

  for (const format of ['csv', 'xlsx', 'json', 'jsonl', 'reqif'] as const) {
    it(`round trip through ${format}: exported, imported into a fresh topic, exported again: equal; a second import changes nothing`, async () => {
      const file = join(dir, `round.${format}`);
      const exported = await rxs('export', '--kt', source, '--format', format, '--out', file);
      expect(exported.code, exported.stderr).toBe(0);
      const target = await fresh(`Round trip ${format}`);

      const first = await rxs('import', '--kt', target, file, '--new-records', '--json');
      expect(first.code, first.stdout + first.stderr).toBe(0);
      const report = JSON.parse(first.stdout);
      expect(report).toMatchObject({ rows: 15, created: 15, updated: 0, rejected: 0, complete: true });

      const textFormat = format !== 'json' && format !== 'jsonl';
      const before = comparable(await exportJson(source), textFormat);
      expect(comparable(await exportJson(target), textFormat)).toEqual(before);

      // Again: every row finds its record by readable id and is left alone.
      const again = await rxs('import', '--kt', target, file, '--new-records', '--json');
      expect(again.code, again.stdout + again.stderr).toBe(0);
      expect(JSON.parse(again.stdout)).toMatchObject({ created: 0, updated: 0, unchanged: 15 });
      expect(await count(target)).toBe(15);

      // The file back into the topic it came from: unchanged, by _id.
      const home = await rxs('import', '--kt', source, file, '--json');
      expect(JSON.parse(home.stdout)).toMatchObject({ unchanged: 15, created: 0, updated: 0 });
    });
  }

  it.skipIf(shouldSkip(missingReader('soffice', 'libreoffice-calc')))(
    'reads the workbook as LibreOffice saves it (shared strings, TRUE() cells): the same records, line breaks aside',
    async () => {
      const file = join(dir, 'for-libreoffice.xlsx');
      const exported = await rxs('export', '--kt', source, '--format', 'xlsx', '--out', file);
      expect(exported.code, exported.stderr).toBe(0);
      // A person opens the export in LibreOffice Calc and saves it again as a workbook.
      const saved = join(dir, 'saved-by-libreoffice');
      const profile = mkdtempSync(join(tmpdir(), 'rxs-lo-profile-'));
      try {
        execFileSync(
          'soffice',
          [
            `-env:UserInstallation=file://${profile}`,
            '--headless',
            '--convert-to',
            'xlsx:Calc MS Excel 2007 XML',
            '--outdir',
            saved,
            file,
          ],
          { timeout: 120_000, stdio: 'pipe' },
        );
      } finally {
        rmSync(profile, { recursive: true, force: true });
      }
      const resaved = join(saved, 'for-libreoffice.xlsx');
      // Not our writer's bytes any more: LibreOffice keeps text in a shared strings table.
      const listing = "import sys, zipfile; print('\\n'.join(zipfile.ZipFile(sys.argv[1]).namelist()))";
      expect(execFileSync('python3', ['-c', listing, resaved], { encoding: 'utf8' })).toContain(
        'xl/sharedStrings.xml',
      );

      // LibreOffice keeps line breaks in a cell as LF only: the one thing it changes.
      const lf = <T>(value: T): T => JSON.parse(JSON.stringify(value).replace(/\\r(\\n)?/g, '\\n'));
      const records = await exportJson(source);
      const withCr = records.filter((r) => JSON.stringify(r.values).includes('\\r')).length;
      expect(withCr).toBeGreaterThan(0);

      // A copy of the topic from our own file, then the saved workbook over it: the rows find their
      // records by readable id, and only the records LibreOffice changed are updated.
      const target = await fresh('Saved by LibreOffice');
      const copied = await rxs('import', '--kt', target, file, '--new-records', '--json');
      expect(JSON.parse(copied.stdout)).toMatchObject({ created: records.length, rejected: 0 });
      const again = await rxs('import', '--kt', target, resaved, '--new-records', '--json');
      expect(again.code, again.stdout + again.stderr).toBe(0);
      expect(JSON.parse(again.stdout)).toMatchObject({
        rows: records.length,
        unchanged: records.length - withCr,
        created: 0,
        updated: withCr,
        rejected: 0,
      });
      expect(comparable(await exportJson(target), true)).toEqual(lf(comparable(records, true)));
    },
  );

  it('updates the rows a person changed in a spreadsheet (read back by Python), leaves the rest, and a dry run writes nothing', async () => {
    const target = await fresh('Edited');
    const csvFile = join(dir, 'edited-src.csv');
    await rxs('export', '--kt', source, '--format', 'csv', '--out', csvFile);
    await rxs('import', '--kt', target, csvFile, '--new-records');
    const exported = join(dir, 'edited.csv');
    await rxs('export', '--kt', target, '--format', 'csv', '--out', exported);
    // Python's csv edits the file as a script or a person would: a priority and a risk score.
    execFileSync('python3', [
      '-c',
      `import csv,sys
rows=list(csv.reader(open(sys.argv[1],newline='',encoding='utf-8-sig')))
h=rows[0]
for r in rows[1:]:
    if r[h.index('name')]=='Requirements-1':
        r[h.index('Priority')]='low'; r[h.index('Risk score')]='7.5'
w=csv.writer(open(sys.argv[1],'w',newline='',encoding='utf-8'))
w.writerows(rows)`,
      exported,
    ]);
    const dry = await rxs('import', '--kt', target, exported, '--dry-run');
    expect(dry.code, dry.stdout + dry.stderr).toBe(0);
    expect(dry.stdout).toContain('1 would be updated, 14 unchanged, 0 rejected');
    let changed = (await exportJson(target)).find((r) => r.name === 'Requirements-1')!;
    expect(changed.values.Priority).toBe('high');

    const real = await rxs('import', '--kt', target, exported, '--reason', 'Review 12');
    expect(real.code, real.stdout + real.stderr).toBe(0);
    expect(real.stdout).toContain('1 updated, 14 unchanged');
    changed = (await exportJson(target)).find((r) => r.name === 'Requirements-1')!;
    expect(changed.values).toMatchObject({ Priority: 'low', 'Risk score': 7.5 });
    const history = await t.api('GET', `/records/${changed.id}/versions`);
    expect(JSON.stringify(history.body)).toContain('Review 12');
  });

  it('all or nothing: a bad row stops the import with every reason and writes nothing; --continue-on-error writes the others', async () => {
    const target = await fresh('All or nothing');
    const file = join(dir, 'bad-rows.csv');
    writeFileSync(
      file,
      'name,Name,Priority,Risk score,Safety relevant,Requirement concerning\r\n' +
        'A-1,REQ_101 first,high,3,yes,Equipment\r\n' +
        'A-2,REQ_102 second,urgent,eleven,maybe,Equipment; Kitchen\r\n' +
        'A-3,REQ_103 third,low,11,no,\r\n' +
        'A-4,REQ_104 fourth,=cmd(),1,no,\r\n' +
        'A-5,REQ_101 first again,low,1,no,\r\n',
    );
    const strict = await rxs('import', '--kt', target, file);
    expect(strict.code).toBe(1);
    expect(await count(target)).toBe(0);
    const out = strict.stdout;
    expect(out).toContain('Nothing was written: 5 rows rejected');
    expect(out).toMatch(/line 3 \(REQ_102\):\n(    - .*\n)*    - .*Priority.*"urgent"/);
    expect(out).toMatch(/"Risk score" \(risk_score, number\) takes a number, not "eleven"/);
    expect(out).toMatch(/"Safety relevant" \(safety, checkbox\) takes true or false/);
    expect(out).toMatch(/"Kitchen"/);
    expect(out).toMatch(/line 4 \(REQ_103\):\n    - Risk score \(risk_score\): .*10/);
    expect(out).toMatch(/line 5 \(REQ_104\):\n    - Priority: "=cmd\(\)" is a spreadsheet formula/);
    expect(out).toMatch(/the file has this record more than once \(readable id REQ_101 is in 2 rows\)/);

    const lenient = await rxs('import', '--kt', target, file, '--continue-on-error', '--json');
    expect(lenient.code).toBe(1);
    expect(JSON.parse(lenient.stdout)).toMatchObject({ created: 0, rejected: 5 });
    const fixed = join(dir, 'some-good.csv');
    writeFileSync(
      file.replace('bad-rows', 'some-good'),
      readFileSync(file, 'utf8').replace('A-1,REQ_101 first,', 'A-1,REQ_100 first,'),
    );
    const partial = await rxs('import', '--kt', target, fixed, '--continue-on-error', '--json');
    expect(partial.code).toBe(1);
    expect(JSON.parse(partial.stdout)).toMatchObject({ created: 2, rejected: 3, wrote: true });
    expect(await count(target)).toBe(2);
  });

  it('refuses a file whose columns name no field, naming the column and the fields; --rename and --ignore-unknown-columns', async () => {
    const target = await fresh('Columns');
    const file = join(dir, 'columns.csv');
    writeFileSync(file, 'name,Prioritty,Internal note\r\nC-1,high,x\r\n');
    const refused = await rxs('import', '--kt', target, file);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('Column "Prioritty" names no field of "Columns"');
    expect(refused.stdout).toContain('"Priority" (priority)');
    expect(refused.stdout).toContain('Nothing was written');
    const renamed = await rxs(
      'import',
      '--kt',
      target,
      file,
      '--rename',
      'Prioritty=Priority',
      '--ignore-unknown-columns',
      '--json',
    );
    expect(renamed.code, renamed.stdout).toBe(0);
    expect(JSON.parse(renamed.stdout).notes.join('\n')).toContain('Internal note: not imported');
    expect((await exportJson(target))[0]!.values.Priority).toBe('high');
  });

  it('columns and keys named like object built-ins ("constructor", "toString", "__proto__") are fields like any other', async () => {
    const target = await approvedTopic(t, 'Built-in names', {
      schema: {
        type: 'default',
        components: ['constructor', 'toString', '__proto__'].map((label, i) => ({
          type: 'textfield',
          key: `field_${i}`,
          label,
        })),
      },
    });
    const csv = join(dir, 'builtins.csv');
    writeFileSync(csv, 'name,constructor,toString,__proto__\r\nB-1,a,b,c\r\n');
    const json = join(dir, 'builtins.json');
    writeFileSync(json, '[{"name": "B-2", "constructor": "d", "toString": "e", "__proto__": "f"}]');
    for (const file of [csv, json]) {
      const result = await rxs('import', '--kt', target, file);
      expect(result.code, result.stdout + result.stderr).toBe(0);
    }
    const stored = (await t.api('GET', `/records/?context__knowledge_unit_topic_id=${target}`)).body as {
      name: string;
      data: Record<string, unknown>;
    }[];
    const byName = Object.fromEntries(stored.map((r) => [r.name, r.data]));
    expect(byName['B-1']).toEqual({ field_0: 'a', field_1: 'b', field_2: 'c' });
    expect(byName['B-2']).toEqual({ field_0: 'd', field_1: 'e', field_2: 'f' });
  });

  it('rows of another topic and _ids that do not exist are refused with what to do', async () => {
    const other = await fresh('Other topic');
    const file = join(dir, 'foreign.json');
    await rxs('export', '--kt', source, '--format', 'json', '--out', file);
    const refused = await rxs('import', '--kt', other, file);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('belongs to another topic');
    expect(refused.stdout).toContain('--new-records');
    expect(await count(other)).toBe(0);

    const ghost = join(dir, 'ghost.csv');
    writeFileSync(ghost, '_id,name\r\n0123456789abcdef01234567,Ghost\r\nnot-an-id,Bad\r\n');
    const missing = await rxs('import', '--kt', other, ghost);
    expect(missing.stdout).toContain('no record has _id 0123456789abcdef01234567 in your tenant');
    expect(missing.stdout).toContain('"not-an-id" is no record id');
  });

  it('refuses a record changed since the file was written, unless --ignore-versions', async () => {
    const target = await fresh('Versions');
    await t.api('POST', '/records/', {
      body: {
        name: 'V-1',
        form: {},
        data: { priority: 'low' },
        context: { knowledge_unit_topic_id: target },
      },
    });
    const file = join(dir, 'versions.csv');
    await rxs('export', '--kt', target, '--format', 'csv', '--out', file);
    const [record] = await exportJson(target);
    await t.api('PATCH', `/records/${record!.id}`, { body: { data: { priority: 'medium' } } });
    writeFileSync(file, readFileSync(file, 'utf8').replace(',low,', ',high,'));
    const refused = await rxs('import', '--kt', target, file);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/changed since the file was written \(version 1.0 in the file, .* now\)/);
    const forced = await rxs('import', '--kt', target, file, '--ignore-versions');
    expect(forced.code, forced.stdout).toBe(0);
    expect((await exportJson(target))[0]!.values.Priority).toBe('high');
  });

  it('reads what spreadsheets save: semicolons, UTF-16 from Excel, UTF-8 with and without BOM; refuses other encodings, empty and cut files', async () => {
    const target = await fresh('Encodings');
    const csv = 'name;Priority;Description\r\nE-1;high;"Grüße, 漢字\r\nzweite Zeile"\r\n';
    const utf16 = join(dir, 'excel-unicode.csv');
    writeFileSync(
      utf16,
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(csv.replace(/;/g, '\t'), 'utf16le')]),
    );
    const bom = join(dir, 'bom.csv');
    writeFileSync(bom, `\uFEFF${csv.replace('E-1', 'E-2')}`);
    const plain = join(dir, 'plain.csv');
    writeFileSync(plain, csv.replace('E-1', 'E-3'));
    for (const file of [utf16, bom, plain]) {
      const result = await rxs('import', '--kt', target, file);
      expect(result.code, result.stdout + result.stderr).toBe(0);
    }
    const records = await exportJson(target);
    expect(records.map((r) => r.values.Description)).toEqual(Array(3).fill('Grüße, 漢字\r\nzweite Zeile'));

    const latin1 = join(dir, 'latin1.csv');
    writeFileSync(latin1, Buffer.from('name,Description\r\nL-1,Gr\xfc\xdfe\r\n', 'latin1'));
    const refused = await rxs('import', '--kt', target, latin1);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /is not UTF-8 or UTF-16 text \(byte 24 is not UTF-8\).*CSV UTF-8.*Nothing was written/,
    );

    const empty = join(dir, 'empty.csv');
    writeFileSync(empty, '');
    expect((await rxs('import', '--kt', target, empty)).stderr).toContain(
      'is empty: a CSV import needs a header row',
    );

    const cut = join(dir, 'cut.csv');
    writeFileSync(cut, 'name,Description\r\nK-1,"an unfinished\r\nquoted value');
    const cutResult = await rxs('import', '--kt', target, cut);
    expect(cutResult.code).toBe(1);
    expect(cutResult.stderr).toMatch(/not a readable CSV file.*may be cut short/);
    for (const [name, text, expected] of [
      [
        'cut.json',
        '{"format":"rxs-export","topics":[{"records":[{"name":"J-1","values":{}},{"name":"J-',
        /not complete JSON/,
      ],
      [
        'cut.jsonl',
        '{"kind":"header","format":"rxs-export"}\n{"kind":"record","name":"J-1","values":{}}\n',
        /has no "end" line/,
      ],
      [
        'cut.reqif',
        '<?xml version="1.0"?><REQ-IF xmlns="http://www.omg.org/spec/ReqIF/20110401/reqif.xsd"><CORE-CONTENT><REQ-IF-CONTENT><SPEC-TYPES>',
        /not well-formed XML|no SPEC-OBJECT-TYPE/,
      ],
    ] as const) {
      writeFileSync(join(dir, name), text);
      const result = await rxs('import', '--kt', target, join(dir, name));
      expect(result.code, name).toBe(1);
      expect(result.stderr, name).toMatch(expected);
    }
    expect(await count(target)).toBe(3);
  });

  it('reads a ReqIF file of another tool (DOORS-like: XHTML text, enumerations, two spec object types)', async () => {
    const target = await fresh('From DOORS');
    const file = join(dir, 'doors.reqif');
    writeFileSync(file, DOORS_REQIF);
    const ambiguous = await rxs('import', '--kt', target, file);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toContain(
      'has 2 spec object types and none is named after the topic ("From DOORS"): "Requirement", "Heading". Say which to import with --spec-type NAME.',
    );
    const result = await rxs(
      'import',
      '--kt',
      target,
      file,
      '--spec-type',
      'Requirement',
      '--rename',
      'ReqIF.Text=Description',
      '--rename',
      'Object Number=',
      '--json',
    );
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ rows: 2, created: 2 });
    const records = (await exportJson(target)).sort((a, b) => (a.name < b.name ? -1 : 1));
    expect(records.map((r) => [r.name, r.values.Description, r.values.Priority])).toEqual([
      ['Temperature range', 'The device shall hold 121 °C ± 2 °C.\nDuring the whole cycle.', 'high'],
      ['Water quality', 'Feed water & <conductivity> below 5 µS/cm', 'low'],
    ]);
  });

  it("reads JSON made by hand and the service's own record listings", async () => {
    const target = await fresh('Hand JSON');
    const flat = join(dir, 'flat.json');
    writeFileSync(
      flat,
      JSON.stringify([
        { name: 'H-1', Priority: 'High', 'Risk score': 2, 'Requirement concerning': ['Equipment'] },
      ]),
    );
    const listing = join(dir, 'listing.jsonl');
    writeFileSync(
      listing,
      `${JSON.stringify({ name: 'H-2', data: { priority: 'low', legacy_key: 'kept' }, context: { knowledge_unit_topic_id: target } })}\n`,
    );
    for (const file of [flat, listing]) {
      const result = await rxs('import', '--kt', target, file);
      expect(result.code, result.stdout + result.stderr).toBe(0);
    }
    const records = (await exportJson(target)).sort((a, b) => (a.name < b.name ? -1 : 1));
    expect(records[0]!.values).toMatchObject({
      Priority: 'high',
      'Risk score': 2,
      'Requirement concerning': ['Equipment'],
    });
    expect(records[1]!.values).toMatchObject({ Priority: 'low', legacy_key: 'kept' });
  });

  it('hostile files are refused with a message, never a crash: not a workbook, entity bombs, deep nesting, huge cells', async () => {
    const target = await fresh('Hostile files');
    const notXlsx = join(dir, 'not-a-workbook.xlsx');
    writeFileSync(notXlsx, 'name,Priority\r\nX-1,high\r\n');
    const bomb = join(dir, 'bomb.reqif');
    writeFileSync(
      bomb,
      '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>' +
        '<REQ-IF><CORE-CONTENT><REQ-IF-CONTENT><SPEC-TYPES><SPEC-OBJECT-TYPE IDENTIFIER="t" LONG-NAME="&c;"/></SPEC-TYPES></REQ-IF-CONTENT></CORE-CONTENT></REQ-IF>',
    );
    const deep = join(dir, 'deep.json');
    writeFileSync(deep, `${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    for (const [file, expected] of [
      [notXlsx, /cannot be (opened|read).*(Excel|xlsx)/i],
      [bomb, /not well-formed XML|entity/i],
    ] as const) {
      const result = await rxs('import', '--kt', target, file);
      expect(result.code, file).toBe(1);
      expect(result.stderr, file).toMatch(expected);
      expect(result.stderr, file).not.toMatch(/at .*\.js:\d+/);
    }
    const nested = await rxs('import', '--kt', target, deep, '--json');
    expect(nested.code).toBe(1);
    expect(JSON.parse(nested.stdout).rowProblems[0].problems[0]).toMatch(/a list, not an object/);

    const huge = join(dir, 'huge-cell.csv');
    writeFileSync(huge, `name,Description\r\nBig-1,"${'y'.repeat(1_000_000)}"\r\n`);
    const big = await rxs('import', '--kt', target, huge);
    expect(big.code).toBe(0);
    expect((await exportJson(target))[0]!.values.Description).toHaveLength(1_000_000);
  });

  it('refuses formula cells of a workbook, and takes typed cells (numbers, booleans, dates) as the form stores them', async () => {
    const target = await fresh('Workbook');
    const workbook = new ExcelJS.Workbook();
    const sheet = workbook.addWorksheet('Made by hand');
    sheet.addRow(['name', 'Risk score', 'Safety relevant', 'Due', 'Priority']);
    sheet.addRow(['W-1', 4, true, new Date(Date.UTC(2026, 8, 2)), 'high']);
    sheet.addRow(['W-2', { formula: '1+1', result: 2 }, false, null, 'low']);
    const file = join(dir, 'hand.xlsx');
    await workbook.xlsx.writeFile(file);
    const strict = await rxs('import', '--kt', target, file);
    expect(strict.code).toBe(1);
    expect(strict.stdout).toMatch(/row 3 \(W-2\):\n    - Risk score: the cell is a formula \(=1\+1\)/);
    const lenient = await rxs('import', '--kt', target, file, '--continue-on-error');
    expect(lenient.stdout).toContain('1 created');
    const [record] = await exportJson(target);
    expect(record!.values).toMatchObject({
      'Risk score': 4,
      'Safety relevant': true,
      Due: '2026-09-02',
      Priority: 'high',
    });
  });
});

/** A ReqIF file as DOORS writes one: XHTML text, an enumeration, headings beside requirements. */
const DOORS_REQIF = `<?xml version="1.0" encoding="UTF-8"?>
<REQ-IF xmlns="http://www.omg.org/spec/ReqIF/20110401/reqif.xsd" xmlns:xhtml="http://www.w3.org/1999/xhtml">
  <THE-HEADER><REQ-IF-HEADER IDENTIFIER="h1"><REQ-IF-TOOL-ID>DOORS</REQ-IF-TOOL-ID></REQ-IF-HEADER></THE-HEADER>
  <CORE-CONTENT><REQ-IF-CONTENT>
    <DATATYPES>
      <DATATYPE-DEFINITION-STRING IDENTIFIER="dt-s" LONG-NAME="String" MAX-LENGTH="1000"/>
      <DATATYPE-DEFINITION-XHTML IDENTIFIER="dt-x" LONG-NAME="XHTML"/>
      <DATATYPE-DEFINITION-ENUMERATION IDENTIFIER="dt-p" LONG-NAME="Priority">
        <SPECIFIED-VALUES>
          <ENUM-VALUE IDENTIFIER="p-h" LONG-NAME="High"><PROPERTIES><EMBEDDED-VALUE KEY="1" OTHER-CONTENT="high"/></PROPERTIES></ENUM-VALUE>
          <ENUM-VALUE IDENTIFIER="p-l" LONG-NAME="Low"><PROPERTIES><EMBEDDED-VALUE KEY="2" OTHER-CONTENT=""/></PROPERTIES></ENUM-VALUE>
        </SPECIFIED-VALUES>
      </DATATYPE-DEFINITION-ENUMERATION>
    </DATATYPES>
    <SPEC-TYPES>
      <SPEC-OBJECT-TYPE IDENTIFIER="t-req" LONG-NAME="Requirement">
        <SPEC-ATTRIBUTES>
          <ATTRIBUTE-DEFINITION-STRING IDENTIFIER="a-id" LONG-NAME="Object Number"><TYPE><DATATYPE-DEFINITION-STRING-REF>dt-s</DATATYPE-DEFINITION-STRING-REF></TYPE></ATTRIBUTE-DEFINITION-STRING>
          <ATTRIBUTE-DEFINITION-STRING IDENTIFIER="a-name" LONG-NAME="ReqIF.Name"><TYPE><DATATYPE-DEFINITION-STRING-REF>dt-s</DATATYPE-DEFINITION-STRING-REF></TYPE></ATTRIBUTE-DEFINITION-STRING>
          <ATTRIBUTE-DEFINITION-XHTML IDENTIFIER="a-text" LONG-NAME="ReqIF.Text"><TYPE><DATATYPE-DEFINITION-XHTML-REF>dt-x</DATATYPE-DEFINITION-XHTML-REF></TYPE></ATTRIBUTE-DEFINITION-XHTML>
          <ATTRIBUTE-DEFINITION-ENUMERATION IDENTIFIER="a-prio" LONG-NAME="Priority" MULTI-VALUED="false"><TYPE><DATATYPE-DEFINITION-ENUMERATION-REF>dt-p</DATATYPE-DEFINITION-ENUMERATION-REF></TYPE></ATTRIBUTE-DEFINITION-ENUMERATION>
        </SPEC-ATTRIBUTES>
      </SPEC-OBJECT-TYPE>
      <SPEC-OBJECT-TYPE IDENTIFIER="t-head" LONG-NAME="Heading">
        <SPEC-ATTRIBUTES>
          <ATTRIBUTE-DEFINITION-STRING IDENTIFIER="a-head" LONG-NAME="ReqIF.ChapterName"><TYPE><DATATYPE-DEFINITION-STRING-REF>dt-s</DATATYPE-DEFINITION-STRING-REF></TYPE></ATTRIBUTE-DEFINITION-STRING>
        </SPEC-ATTRIBUTES>
      </SPEC-OBJECT-TYPE>
    </SPEC-TYPES>
    <SPEC-OBJECTS>
      <SPEC-OBJECT IDENTIFIER="o-head" LAST-CHANGE="2026-01-01T00:00:00Z">
        <TYPE><SPEC-OBJECT-TYPE-REF>t-head</SPEC-OBJECT-TYPE-REF></TYPE>
        <VALUES><ATTRIBUTE-VALUE-STRING THE-VALUE="1 Sterilization"><DEFINITION><ATTRIBUTE-DEFINITION-STRING-REF>a-head</ATTRIBUTE-DEFINITION-STRING-REF></DEFINITION></ATTRIBUTE-VALUE-STRING></VALUES>
      </SPEC-OBJECT>
      <SPEC-OBJECT IDENTIFIER="o-1" LAST-CHANGE="2026-01-01T00:00:00Z">
        <TYPE><SPEC-OBJECT-TYPE-REF>t-req</SPEC-OBJECT-TYPE-REF></TYPE>
        <VALUES>
          <ATTRIBUTE-VALUE-STRING THE-VALUE="SR-1"><DEFINITION><ATTRIBUTE-DEFINITION-STRING-REF>a-id</ATTRIBUTE-DEFINITION-STRING-REF></DEFINITION></ATTRIBUTE-VALUE-STRING>
          <ATTRIBUTE-VALUE-STRING THE-VALUE="Temperature range"><DEFINITION><ATTRIBUTE-DEFINITION-STRING-REF>a-name</ATTRIBUTE-DEFINITION-STRING-REF></DEFINITION></ATTRIBUTE-VALUE-STRING>
          <ATTRIBUTE-VALUE-XHTML><DEFINITION><ATTRIBUTE-DEFINITION-XHTML-REF>a-text</ATTRIBUTE-DEFINITION-XHTML-REF></DEFINITION>
            <THE-VALUE><xhtml:div><xhtml:p>The device shall hold <xhtml:b>121 °C ± 2 °C</xhtml:b>.</xhtml:p><xhtml:p>During the
              whole cycle.</xhtml:p></xhtml:div></THE-VALUE>
          </ATTRIBUTE-VALUE-XHTML>
          <ATTRIBUTE-VALUE-ENUMERATION><DEFINITION><ATTRIBUTE-DEFINITION-ENUMERATION-REF>a-prio</ATTRIBUTE-DEFINITION-ENUMERATION-REF></DEFINITION><VALUES><ENUM-VALUE-REF>p-h</ENUM-VALUE-REF></VALUES></ATTRIBUTE-VALUE-ENUMERATION>
        </VALUES>
      </SPEC-OBJECT>
      <SPEC-OBJECT IDENTIFIER="o-2" LAST-CHANGE="2026-01-01T00:00:00Z">
        <TYPE><SPEC-OBJECT-TYPE-REF>t-req</SPEC-OBJECT-TYPE-REF></TYPE>
        <VALUES>
          <ATTRIBUTE-VALUE-STRING THE-VALUE="Water quality"><DEFINITION><ATTRIBUTE-DEFINITION-STRING-REF>a-name</ATTRIBUTE-DEFINITION-STRING-REF></DEFINITION></ATTRIBUTE-VALUE-STRING>
          <ATTRIBUTE-VALUE-XHTML><DEFINITION><ATTRIBUTE-DEFINITION-XHTML-REF>a-text</ATTRIBUTE-DEFINITION-XHTML-REF></DEFINITION>
            <THE-VALUE><xhtml:div>Feed water &amp; &lt;conductivity&gt; below 5 µS/cm</xhtml:div></THE-VALUE>
          </ATTRIBUTE-VALUE-XHTML>
          <ATTRIBUTE-VALUE-ENUMERATION><DEFINITION><ATTRIBUTE-DEFINITION-ENUMERATION-REF>a-prio</ATTRIBUTE-DEFINITION-ENUMERATION-REF></DEFINITION><VALUES><ENUM-VALUE-REF>p-l</ENUM-VALUE-REF></VALUES></ATTRIBUTE-VALUE-ENUMERATION>
        </VALUES>
      </SPEC-OBJECT>
    </SPEC-OBJECTS>
  </REQ-IF-CONTENT></CORE-CONTENT>
</REQ-IF>
`;
