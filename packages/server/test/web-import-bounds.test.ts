import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  hugeSharedString,
  rowsOf,
  workbookParts,
  writeZip,
} from '../../exchange/test/support/bounded-uploads.js';
import { startTestServer, type TestServer } from './harness.js';
import { approvedTopic, NOTE_SCORE_SCHEMA as SCHEMA } from './support/topics.js';
import { webClient, type WebClient } from './web-client.js';

/** The settings this suite sets, restored after it. */
const SETTINGS = {
  RXS_WEB_IMPORT_CELL_MB: '1',
  RXS_WEB_IMPORT_UNZIPPED_MB: '8',
} as const;

/**
 * A hostile upload to the web app's import check is answered at once with 422
 * naming the limit it went past, never a 500; reading it costs memory and time in proportion to
 * the limits, and the server answers its health check meanwhile.
 */
describe('web app import: bounded reading of uploads', () => {
  let t: TestServer;
  let editor: WebClient;
  let revision: string;
  const saved = Object.fromEntries(Object.keys(SETTINGS).map((name) => [name, process.env[name]]));
  const dir = mkdtempSync(join(tmpdir(), 'rxs-web-import-bounds-'));

  /** The page's check of a file: its bytes as the body, its name in the query. */
  const check = async (name: string, body: BodyInit) => {
    const response = await fetch(`${t.url}/api/import/check?${new URLSearchParams({ revision, name })}`, {
      method: 'POST',
      headers: {
        accept: 'application/json',
        'content-type': 'application/octet-stream',
        cookie: editor.cookie!,
        'x-csrf-token': editor.csrfToken!,
      },
      body,
    });
    const text = await response.text();
    return { status: response.status, detail: (text ? JSON.parse(text) : {}).detail as string, text };
  };

  /** The check of `body`, with the server's memory growth (sampled while it runs) and its health meanwhile. */
  const checkWatched = async (name: string, body: BodyInit) => {
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
    try {
      const answer = await check(name, body);
      peak = Math.max(peak, process.memoryUsage().rss);
      const health = await t.api('GET', '/healthz', { key: null });
      return { ...answer, growth: peak - before, health: health.status };
    } finally {
      clearInterval(sampler);
    }
  };

  beforeAll(async () => {
    Object.assign(process.env, SETTINGS);
    t = await startTestServer();
    editor = webClient(t.url);
    const users = t.demo.tenant.users;
    expect((await editor.signIn(users.editor.email, users.editor.password)).status).toBe(200);
    revision = await approvedTopic(t, 'Import bounds', { schema: SCHEMA });
  });
  afterAll(async () => {
    for (const [name, value] of Object.entries(saved))
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers an XLSX of 300 KB holding one 300 MB shared string with 422 naming the cell limit, memory bounded', async () => {
    const file = join(dir, 'huge-string.xlsx');
    await writeZip(file, hugeSharedString(300 * 1024 * 1024));
    const answer = await checkWatched('notes.xlsx', readFileSync(file));
    expect(answer.status, answer.text).toBe(422);
    expect(answer.detail).toContain('more than 1 MiB of text, the most one cell may hold');
    expect(answer.detail).toContain('RXS_WEB_IMPORT_CELL_MB');
    expect(answer.detail).toContain('Nothing was written');
    expect(answer.growth).toBeLessThan(200 * 1024 * 1024);
    expect(answer.health).toBe(200);
  }, 60_000);

  it('answers a zip bomb with 422 naming the unzipped limit, as it inflates', async () => {
    const file = join(dir, 'bomb.xlsx');
    // 20 MB of sheet XML in a few hundred kilobytes; the limit is 8 MB here.
    await writeZip(
      file,
      workbookParts(
        () => ['<si><t>name</t></si><si><t>Note</t></si><si><t>x</t></si>'],
        () => rowsOf(200_000),
      ),
    );
    const answer = await checkWatched('notes.xlsx', readFileSync(file));
    expect(answer.status, answer.text).toBe(422);
    expect(answer.detail).toContain('The workbook unpacks to more than 8 MiB');
    expect(answer.detail).toContain('RXS_WEB_IMPORT_UNZIPPED_MB');
    expect(answer.health).toBe(200);
  }, 60_000);

  it('answers a CSV header of 200,000 columns (1.6 MB) with 422 naming the column limit, not a 500', async () => {
    const header = Array.from({ length: 200_000 }, (_, i) => `column ${i}`).join(',');
    const answer = await checkWatched('wide.csv', `${header}\r\nx\r\n`);
    expect(answer.status, answer.text).toBe(422);
    expect(answer.detail).toContain('line 1 has more than 5,000 columns');
    expect(answer.detail).toContain('RXS_WEB_IMPORT_COLUMNS');
    expect(answer.health).toBe(200);
  }, 60_000);

  it('answers a CSV cell past the cell limit with 422 naming it', async () => {
    const answer = await checkWatched('big.csv', `name,Note\r\nN-1,"${'y'.repeat(3 * 1024 * 1024)}"\r\n`);
    expect(answer.status, answer.text).toBe(422);
    expect(answer.detail).toContain('line 2, column 2) holds more than 1 MiB of text');
    expect(answer.detail).toContain('RXS_WEB_IMPORT_CELL_MB');
    expect(answer.health).toBe(200);
  }, 60_000);

  it('answers the health check while it checks a long CSV: the reading gives the event loop turns', async () => {
    const rows = 60_000;
    const csv = `name,Note,Score\r\n${Array.from({ length: rows }, (_, i) => `L-${i},note ${i},${i % 100}`).join('\r\n')}\r\n`;
    let checking = true;
    let answered = 0;
    let longest = 0;
    const started = performance.now();
    const answer = check('long.csv', csv).finally(() => (checking = false));
    // Health checks one after another while the check runs: each waits for a turn of the event loop.
    const polls = (async () => {
      while (checking) {
        const asked = performance.now();
        expect((await t.api('GET', '/healthz', { key: null })).status).toBe(200);
        longest = Math.max(longest, performance.now() - asked);
        answered++;
      }
    })();
    const done = await answer;
    await polls;
    const seconds = (performance.now() - started) / 1000;
    expect(done.status, done.text).toBe(200);
    expect(JSON.parse(done.text).report.rows).toBe(rows);
    expect(answered).toBeGreaterThan(0);
    // No health check waits long for its turn: the check reads the file in parts, never in one go.
    expect(longest).toBeLessThan(Math.max(300, seconds * 1000 * 0.2));
  }, 120_000);
});
