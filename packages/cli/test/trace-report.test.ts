import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, screenshot } from '../../server/test/support/browser.js';
import { startTestServer, type TestServer } from '../../server/test/harness.js';
import { approvedTopic, createNote } from '../../server/test/support/topics.js';
import { runCli } from './run-cli.js';

/** `rxs trace-report`: coverage between topics as a CI gate (exit 3 under --fail-under). */
describe('rxs trace-report', () => {
  let t: TestServer;
  let dir: string;
  let keyFile: string;
  let requirements: string;
  let tests: string;
  const report = (...args: string[]) =>
    runCli([
      'trace-report',
      '--kt',
      requirements,
      '--kt',
      tests,
      '--url',
      t.url,
      '--api-key-file',
      keyFile,
      ...args,
    ]);
  const link = async (from: string, to: string) => {
    const res = await t.api('POST', '/traces/', {
      body: {
        source: { node_id: from, node_type: 'Record' },
        target: { node_id: to, node_type: 'Record' },
        relation_type: 'is_related',
      },
    });
    expect(res.status, res.text).toBe(201);
  };

  beforeAll(async () => {
    t = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), 'rxs-trace-report-'));
    keyFile = join(dir, 'owner.key');
    writeFileSync(keyFile, `${t.ownerKey}\n`);
    requirements = await approvedTopic(t, 'System Requirements (traced)');
    tests = await approvedTopic(t, 'Verification Tests (traced)');
    const reqs = [];
    for (const name of ['REQ_001 Sterilize', 'REQ_002 Alarm', 'REQ_003 Battery', 'REQ_004 Label | IFU'])
      reqs.push(await createNote(t, requirements, name));
    const tsts = [];
    for (const name of ['TST_001 Autoclave run', 'TST_002 Alarm test', 'TST_003 Drop test'])
      tsts.push(await createNote(t, tests, name));
    await link(reqs[0]!, tsts[0]!);
    await link(tsts[1]!, reqs[1]!); // the other way round counts too
    await link(reqs[0]!, tsts[1]!);
    // A trace to a record of another topic counts for nothing here.
    await link(reqs[2]!, t.demo.tenant.topics.systemRequirements!.recordIds[0]!);
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reports coverage, the records not linked and the orphans, as JSON', async () => {
    const out = join(dir, 'trace.json');
    const res = await report('--format', 'json', '--out', out, '--json', '--quiet');
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const summary = JSON.parse(res.stdout);
    expect(summary.rules).toEqual([
      {
        source: 'System Requirements (traced)',
        target: 'Verification Tests (traced)',
        linkType: null,
        covered: 2,
        total: 4,
        percent: 50,
        uncovered: 2,
        orphans: 1,
        suspect: 0,
        passed: null,
      },
    ]);
    const full = JSON.parse(readFileSync(out, 'utf8'));
    const rule = full.rules[0];
    expect(rule.uncovered.map((id: string) => id.slice(0, 7))).toEqual(['REQ_003', 'REQ_004']);
    expect(rule.orphans.map((id: string) => id.slice(0, 7))).toEqual(['TST_003']);
    expect(rule.links.map(([a, b]: string[]) => `${a.slice(0, 7)}>${b.slice(0, 7)}`)).toEqual([
      'REQ_001>TST_001',
      'REQ_001>TST_002',
      'REQ_002>TST_002',
    ]);
  });

  it('--trace-concurrency 1 gives the report the default does (the limit itself: sdk tracer tests); 0 is refused', async () => {
    const [one, four] = [join(dir, 'one.json'), join(dir, 'four.json')];
    const serial = await report('--format', 'json', '--out', one, '--quiet', '--trace-concurrency', '1');
    const parallel = await report('--format', 'json', '--out', four, '--quiet');
    expect([serial.code, parallel.code]).toEqual([0, 0]);
    const rules = (file: string) => JSON.parse(readFileSync(file, 'utf8')).rules;
    expect(rules(one)).toEqual(rules(four));
    const refused = await report('--format', 'json', '--trace-concurrency', '0');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('--trace-concurrency takes a whole number of at least 1, not "0"');
  });

  it('shows a link suspect after a change of its record, until rxs trace review', async () => {
    const [req] = (await t.api('GET', `/records/?context__knowledge_unit_topic_id=${requirements}`)).body;
    const edited = await t.api('PATCH', `/records/${req._id}`, {
      body: { data: { note: `${req.data.note} (revised)` }, change_reason: 'sterilization at 134 °C' },
    });
    expect(edited.status, edited.text).toBe(200);
    const out = join(dir, 'suspect.json');
    const res = await report('--format', 'json', '--out', out, '--json', '--quiet');
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout).rules[0].suspect).toBe(2);
    const rule = JSON.parse(readFileSync(out, 'utf8')).rules[0];
    expect(rule.suspect.map(([a, b]: string[]) => `${a.slice(0, 7)}>${b.slice(0, 7)}`)).toEqual([
      'REQ_001>TST_001',
      'REQ_001>TST_002',
    ]);
    // Still counted: a suspect link is a link to check, not a missing one.
    expect(rule.covered).toBe(2);
    const md = await report('--quiet');
    expect(md.stdout).toContain('Suspect links (2), a record changed since the link was reviewed: REQ_001');

    // The export marks them too.
    const exported = join(dir, 'suspect-export.json');
    const exportRun = await runCli([
      'export',
      '--kt',
      requirements,
      '--traces',
      '--format',
      'json',
      '--out',
      exported,
      '--url',
      t.url,
      '--api-key-file',
      keyFile,
      '--quiet',
    ]);
    expect(exportRun.code, exportRun.stderr).toBe(0);
    const traces = JSON.parse(readFileSync(exported, 'utf8')).traces as { id: string; suspect: boolean }[];
    const suspectIds = traces.filter((x) => x.suspect).map((x) => x.id);
    expect(suspectIds).toHaveLength(2);

    const connection = ['--url', t.url, '--api-key-file', keyFile];
    const shown = await runCli(['trace', 'show', suspectIds[0]!, ...connection]);
    expect(shown.stdout).toContain('Status: SUSPECT');
    for (const id of suspectIds) {
      const reviewed = await runCli([
        'trace',
        'review',
        id,
        '--comment',
        'Autoclave run still covers it',
        ...connection,
      ]);
      expect(reviewed.code, reviewed.stderr).toBe(0);
      expect(reviewed.stdout).toContain('no longer suspect');
    }
    const history = await runCli(['trace', 'history', suspectIds[0]!, ...connection]);
    expect(history.stdout).toMatch(
      /made {2}by .*\n.*suspect: a record changed {2}by .* — sterilization at 134 °C\n.*reviewed {2}by .* — Autoclave run still covers it\n/,
    );
    const after = await report('--format', 'json', '--out', out, '--json', '--quiet');
    expect(JSON.parse(after.stdout).rules[0].suspect).toBe(0);
    const missing = await runCli(['trace', 'review', '0123456789abcdef01234567', ...connection]);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('was not found');
  });

  it('gates a pipeline: exit 3 under --fail-under, 0 at or above it', async () => {
    const failing = await report('--fail-under', '75', '--quiet');
    expect(failing.code).toBe(3);
    expect(failing.stderr).toContain('Coverage under 75%');
    expect(failing.stderr).toContain('50.0% (2 not linked)');
    expect(failing.stdout).toContain(
      '| System Requirements (traced) → Verification Tests (traced) | 2 | 4 | 50.0% ❌ |',
    );
    expect(failing.stdout).toContain('REQ_004');
    const passing = await report('--fail-under', '50%', '--quiet');
    expect(passing.code).toBe(0);
    const xlsx = join(dir, 'trace.xlsx');
    const workbook = await report('--format', 'xlsx', '--out', xlsx, '--quiet');
    expect(workbook.code).toBe(0);
    expect(readFileSync(xlsx).subarray(0, 2).toString()).toBe('PK');
    const nowhere = await report('--format', 'xlsx');
    expect(nowhere.stderr).toContain('name it with --out FILE.xlsx');
    const bad = await report('--fail-under', 'most');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--fail-under takes a percentage from 0 to 100');
  });

  it('writes to standard output with --out -, the workbook too, never to a file named "-"', async () => {
    const args = [
      'trace-report',
      '--kt',
      requirements,
      '--kt',
      tests,
      '--url',
      t.url,
      '--api-key-file',
      keyFile,
    ];
    const piped = await runCli(args, { cwd: dir });
    const dashed = await runCli([...args, '--out', '-'], { cwd: dir });
    expect(dashed.code, dashed.stderr).toBe(0);
    expect(dashed.stdout).toBe(piped.stdout);
    const streamed = await report('--format', 'xlsx', '--out', '-', '--quiet');
    expect(streamed.code, streamed.stderr).toBe(0);
    expect(streamed.stdout.startsWith('PK')).toBe(true);
    expect(existsSync(join(dir, '-'))).toBe(false);
  });
});

describe('rxs trace-report --format html in a browser', () => {
  let t: TestServer;
  let dir: string;
  let browser: Browser;

  beforeAll(async () => {
    t = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), 'rxs-trace-html-'));
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is one self-contained file: it asks no server for anything, shows the bars and marks uncovered rows', async () => {
    const keyFile = join(dir, 'owner.key');
    writeFileSync(keyFile, `${t.ownerKey}\n`);
    const reqs = await approvedTopic(t, 'User Needs');
    const tests = await approvedTopic(t, 'Validation Studies');
    const a = await createNote(t, reqs, 'UN_001 Clean the probe in one step');
    await createNote(t, reqs, 'UN_002 Read the display at 2 m');
    const v = await createNote(t, tests, 'VAL_001 Cleaning study');
    const res = await t.api('POST', '/traces/', {
      body: {
        source: { node_id: a, node_type: 'Record' },
        target: { node_id: v, node_type: 'Record' },
        relation_type: 'is_related',
      },
    });
    expect(res.status).toBe(201);
    // A second study, linked, then revised: its link is suspect.
    const w = await createNote(t, tests, 'VAL_002 Display study');
    const second = await t.api('POST', '/traces/', {
      body: {
        source: { node_id: a, node_type: 'Record' },
        target: { node_id: w, node_type: 'Record' },
        relation_type: 'is_related',
      },
    });
    expect(second.status).toBe(201);
    expect(
      (await t.api('PATCH', `/records/${w}`, { body: { data: { note: 'VAL_002 Display study, 3 m' } } }))
        .status,
    ).toBe(200);
    const out = join(dir, 'trace.html');
    const made = await runCli([
      'trace-report',
      '--kt',
      reqs,
      '--kt',
      tests,
      '--format',
      'html',
      '--out',
      out,
      '--fail-under',
      '100',
      '--url',
      t.url,
      '--api-key-file',
      keyFile,
      '--quiet',
    ]);
    expect(made.code).toBe(3);

    const page = await browser.newPage({ viewport: { width: 1100, height: 700 } });
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    const dialogs: string[] = [];
    page.on('dialog', async (dialog) => {
      dialogs.push(dialog.message());
      await dialog.dismiss();
    });
    await page.goto(pathToFileURL(out).href);
    expect(requests).toEqual([pathToFileURL(out).href]);
    expect(dialogs).toEqual([]);
    expect(await page.locator('h2').first().textContent()).toBe('Coverage');
    const rule = page.locator('tbody tr').first();
    expect(await rule.textContent()).toContain('50.0%');
    expect(await page.locator('.bar.fail span').getAttribute('style')).toContain('width:50.00%');
    expect(await page.locator('tr.uncovered th').allTextContents()).toEqual(['UN_002']);
    // The suspect link: counted in the summary, listed, and marked in the matrix.
    expect(await rule.locator('td').last().textContent()).toBe('1');
    expect(await page.locator('td.suspect').count()).toBe(1);
    expect(await page.locator('td.suspect').textContent()).toBe('⚠');
    expect(await page.locator('text=Suspect links (1)').count()).toBe(1);
    await screenshot(page, 'trace-report');
    await page.close();
  });
});
