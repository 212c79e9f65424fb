import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { missingPythonModule, runPython } from './support/python-editors.js';
import { changes, startRoundTripServer, type RoundTripServer } from './support/round-trip-topic.js';
import { scratchDir, shouldSkip } from './support/spreadsheet-readers.js';

/**
 * A script edits an export with Python's csv module or openpyxl, or builds a workbook from
 * scratch with openpyxl, and the file is imported back into its topic: exactly the script's
 * change is made, every other record and value stays as it is, and no row is refused because
 * the script wrote a version or a date its own way.
 */

const csvModule = missingPythonModule('csv', 'python3');
const openpyxl = missingPythonModule('openpyxl', 'python3-openpyxl');
for (const missing of [csvModule, openpyxl]) if (shouldSkip(missing)) console.warn(`Skipped: ${missing}`);

const scratch = scratchDir();
let service: RoundTripServer;
beforeAll(async () => {
  service = await startRoundTripServer();
});
afterAll(async () => {
  await service?.close();
  scratch.dispose();
});

/** The edited record: its text has quotes, semicolons and a tab; the new text is as ugly. */
const EDITED = 'Ugly-2';
const NEW_TEXT = 'Edited by a script: "new" text; a semicolon, a comma,\nå second line — 漢字 =1+1';

describe.skipIf(shouldSkip(csvModule))("Python's csv module", () => {
  it('reads our CSV, changes one cell, writes it back: the import changes that value only', async () => {
    if (csvModule) throw new Error(csvModule);
    const topic = await service.topic('Edited with csv');
    const file = await topic.exportFile('csv', join(scratch.path, 'python.csv'));
    const script = `
import csv, sys
with open(sys.argv[1], newline='', encoding='utf-8-sig') as f:
    rows = list(csv.reader(f))
header = rows[0]
for row in rows[1:]:
    if row[header.index('name')] == sys.argv[2]:
        row[header.index('Description')] = sys.argv[3]
with open(sys.argv[1], 'w', newline='', encoding='utf-8') as f:
    csv.writer(f).writerows(rows)
`;
    runPython(script, file, EDITED, NEW_TEXT);
    const before = await topic.state();
    const report = await topic.importFile(file);
    expect(report.rowProblems).toEqual([]);
    expect(changes(before, await topic.state())).toEqual([
      {
        record: topic.ids.get(EDITED),
        key: 'description',
        from: before.get(topic.ids.get(EDITED)!)!.data.description,
        to: NEW_TEXT,
      },
    ]);
    expect(report).toMatchObject({ created: 0, updated: 1, unchanged: before.size - 1, rejected: 0 });
  });
});

describe.skipIf(shouldSkip(openpyxl))('openpyxl', () => {
  it('loads our workbook, changes one cell, saves it: the import changes that value only', async () => {
    if (openpyxl) throw new Error(openpyxl);
    const topic = await service.topic('Edited with openpyxl');
    const file = await topic.exportFile('xlsx', join(scratch.path, 'export.xlsx'));
    const saved = join(scratch.path, 'openpyxl.xlsx');
    const script = `
import sys, openpyxl
book = openpyxl.load_workbook(sys.argv[1])
sheet = book['Edited with openpyxl']
header = [cell.value for cell in sheet[1]]
for row in sheet.iter_rows(min_row=2):
    if row[header.index('name')].value == sys.argv[3]:
        row[header.index('Description')].value = sys.argv[4]
book.save(sys.argv[2])
`;
    runPython(script, file, saved, EDITED, NEW_TEXT);
    const before = await topic.state();
    const report = await topic.importFile(saved);
    expect(report.rowProblems).toEqual([]);
    expect(changes(before, await topic.state())).toEqual([
      {
        record: topic.ids.get(EDITED),
        key: 'description',
        from: before.get(topic.ids.get(EDITED)!)!.data.description,
        to: NEW_TEXT,
      },
    ]);
    expect(report).toMatchObject({ created: 0, updated: 1, unchanged: before.size - 1, rejected: 0 });
  });

  it('builds a workbook from scratch with typed cells: one record updated, one created, the rest left alone', async () => {
    if (openpyxl) throw new Error(openpyxl);
    const topic = await service.topic('Written by openpyxl');
    const before = await topic.state();
    const edited = before.get(topic.ids.get(EDITED)!)!;
    const kept = before.get(topic.ids.get('Requirements-2')!)!;
    const file = join(scratch.path, 'from-scratch.xlsx');
    // The version a number (1, 1.0), the due date a date cell, the checkbox a boolean, the risk a number.
    const script = `
import datetime, json, sys, openpyxl
edited, kept = json.loads(sys.argv[2]), json.loads(sys.argv[3])
book = openpyxl.Workbook()
sheet = book.active
sheet.title = 'Review'
sheet.append(['_id', 'version', 'name', 'Name', 'Description', 'Priority', 'Code', 'Risk score',
              'Safety relevant', 'Due', 'Requirement concerning'])
def row(r, version, priority):
    d = r['data']
    return [r['id'], version, r['name'], d['name'], d['description'], priority, d['code'], d['risk_score'],
            d['safety'], datetime.date.fromisoformat(d['due']), '; '.join(d['checklist_kgd0ri'])]
sheet.append(row(edited, 1, 'high'))
sheet.append(row(kept, 1.0, kept['data']['priority']))
sheet.append([None, None, 'New-1', 'REQ_200 — Written by a script', 'Zeile eins\\n滅菌 — zwei', 'low', '0042', 3,
              True, datetime.datetime(2026, 12, 31), 'Equipment'])
book.save(sys.argv[1])
`;
    runPython(
      script,
      file,
      JSON.stringify({ id: topic.ids.get(EDITED), ...edited }),
      JSON.stringify({ id: topic.ids.get('Requirements-2'), ...kept }),
    );
    expect(edited.data.priority).not.toBe('high');
    const report = await topic.importFile(file);
    expect(report.rowProblems).toEqual([]);
    expect(report).toMatchObject({ rows: 3, created: 1, updated: 1, unchanged: 1, rejected: 0 });
    const after = await topic.state();
    const found = changes(before, after);
    const createdId = after.size > before.size ? [...after.keys()].find((id) => !before.has(id)) : undefined;
    expect(found).toEqual([
      { record: topic.ids.get(EDITED), key: 'priority', from: edited.data.priority, to: 'high' },
      { created: createdId },
    ]);
    expect(after.get(createdId!)).toMatchObject({
      name: 'New-1',
      data: {
        name: 'REQ_200 — Written by a script',
        description: 'Zeile eins\n滅菌 — zwei',
        priority: 'low',
        code: '0042',
        risk_score: 3,
        safety: true,
        due: '2026-12-31',
        checklist_kgd0ri: ['Equipment'],
      },
    });
  });
});
