import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { startTestServer, type TestServer } from './harness.js';
import { approvedTopic, NOTE_SCORE_SCHEMA as SCHEMA, reapprove } from './support/topics.js';
import { webClient, type WebClient } from './web-client.js';

const GOOD = 'name,Note,Score\r\nN-1,first,1\r\nN-2,second,2\r\nN-3,third,3\r\n';
const ONE_BAD = 'name,Note,Score\r\nB-1,first,1\r\nB-2,second,eleven\r\nB-3,third,3\r\n';

/**
 * The web app's import: a CSV or XLSX file checked (a dry run with a preview) and then
 * imported, through the session's principal and CSRF token, with the limits of an upload.
 */
describe('web app import', () => {
  let t: TestServer;
  let editor: WebClient;
  let viewer: WebClient;
  const savedLimit = process.env.RXS_WEB_IMPORT_MB;

  const count = async (revision: string) =>
    (await t.api('GET', `/records/count?context__knowledge_unit_topic_id=${revision}`)).body.count as number;

  /** Sends a file as the page does: its bytes as the body, its name and the options in the query. */
  const upload = async (
    client: WebClient,
    step: 'check' | 'import',
    query: Record<string, string>,
    body: BodyInit,
    headers: Record<string, string> = {},
  ) => {
    const response = await fetch(
      `${t.url}/api/import${step === 'check' ? '/check' : ''}?${new URLSearchParams(query)}`,
      {
        method: 'POST',
        headers: {
          accept: 'application/json',
          'content-type': 'application/octet-stream',
          cookie: client.cookie!,
          ...(client.csrfToken && { 'x-csrf-token': client.csrfToken }),
          ...headers,
        },
        body,
        ...(body instanceof ReadableStream && { duplex: 'half' }),
      } as RequestInit,
    );
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined, text };
  };

  beforeAll(async () => {
    process.env.RXS_WEB_IMPORT_MB = '1';
    t = await startTestServer();
    editor = webClient(t.url);
    viewer = webClient(t.url);
    const users = t.demo.tenant.users;
    expect((await editor.signIn(users.editor.email, users.editor.password)).status).toBe(200);
    expect((await viewer.signIn(users.viewer.email, users.viewer.password)).status).toBe(200);
  });
  afterAll(async () => {
    if (savedLimit === undefined) delete process.env.RXS_WEB_IMPORT_MB;
    else process.env.RXS_WEB_IMPORT_MB = savedLimit;
    await t?.close();
  });

  it('checks a file without writing: the column mapping, the first rows as checked, the counts', async () => {
    const revision = await approvedTopic(t, 'Import check', { schema: SCHEMA });
    const checked = await upload(editor, 'check', { revision, name: 'notes.csv' }, GOOD);
    expect(checked.status, checked.text).toBe(200);
    const { report, fields, file } = checked.body;
    expect(file).toEqual({ name: 'notes.csv', size: GOOD.length, format: 'csv' });
    expect(fields).toEqual([
      { name: 'Note', key: 'note' },
      { name: 'Score', key: 'score' },
    ]);
    expect(report.columns).toEqual([
      { column: 'Note', as: 'field', field: { name: 'Note', key: 'note' } },
      { column: 'Score', as: 'field', field: { name: 'Score', key: 'score' } },
    ]);
    expect(report.preview.map((row: { action: string; name: string }) => [row.action, row.name])).toEqual([
      ['create', 'N-1'],
      ['create', 'N-2'],
      ['create', 'N-3'],
    ]);
    expect(report).toMatchObject({
      dryRun: true,
      rows: 3,
      created: 3,
      rejected: 0,
      wrote: false,
      problems: [],
    });
    expect(await count(revision)).toBe(0);
  });

  it('imports all or nothing: a rejected row writes nothing; with continue_on_error the valid rows are written', async () => {
    const revision = await approvedTopic(t, 'Import all or nothing', { schema: SCHEMA });
    const checked = await upload(editor, 'check', { revision, name: 'bad.csv' }, ONE_BAD);
    expect(checked.status).toBe(200);
    const rejected = checked.body.report.preview.find((row: { name: string }) => row.name === 'B-2');
    expect(rejected.action).toBe('rejected');
    expect(rejected.problems.join('\n')).toMatch(/Score.*takes a number, not "eleven"/);

    const strict = await upload(editor, 'import', { revision, name: 'bad.csv' }, ONE_BAD);
    expect(strict.status, strict.text).toBe(200);
    expect(strict.body.report).toMatchObject({
      dryRun: false,
      allOrNothing: true,
      rejected: 1,
      created: 0,
      wrote: false,
    });
    expect(strict.body.report.rowProblems[0]).toMatchObject({ where: 'line 3', phase: 'check' });
    expect(await count(revision)).toBe(0);

    const lenient = await upload(
      editor,
      'import',
      { revision, name: 'bad.csv', continue_on_error: 'true' },
      ONE_BAD,
    );
    expect(lenient.body.report).toMatchObject({ allOrNothing: false, rejected: 1, created: 2, wrote: true });
    expect(await count(revision)).toBe(2);
  });

  it('imports a file once: the same file again leaves every record unchanged', async () => {
    const revision = await approvedTopic(t, 'Import twice', { schema: SCHEMA });
    const reason = 'Imported from the review of 12 May';
    const first = await upload(editor, 'import', { revision, name: 'notes.csv', reason }, GOOD);
    expect(first.body.report).toMatchObject({ created: 3, complete: true, wrote: true });
    const listed = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}`);
    const history = await t.api('GET', `/records/${listed.body[0]._id}/versions`);
    expect(JSON.stringify(history.body)).toContain(reason);
    const again = await upload(editor, 'import', { revision, name: 'notes.csv', reason }, GOOD);
    expect(again.status, again.text).toBe(200);
    expect(again.body.report).toMatchObject({ created: 0, updated: 0, unchanged: 3 });
    expect(await count(revision)).toBe(3);
  });

  it('imports an XLSX export: into its own topic unchanged, into another as new records', async () => {
    const revision = await approvedTopic(t, 'Import workbook', { schema: SCHEMA });
    expect((await upload(editor, 'import', { revision, name: 'notes.csv' }, GOOD)).body.report.created).toBe(
      3,
    );
    const exported = await fetch(`${t.url}/api/export?revisions=${revision}&format=xlsx`, {
      headers: { cookie: editor.cookie! },
    });
    expect(exported.status).toBe(200);
    const workbook = Buffer.from(await exported.arrayBuffer());
    const again = await upload(editor, 'check', { revision, name: 'export.xlsx' }, workbook);
    expect(again.status, again.text).toBe(200);
    expect(again.body.file.format).toBe('xlsx');
    expect(again.body.report).toMatchObject({ rows: 3, unchanged: 3, created: 0, problems: [] });

    const copy = await approvedTopic(t, 'Import workbook copy', { schema: SCHEMA });
    const foreign = await upload(editor, 'check', { revision: copy, name: 'export.xlsx' }, workbook);
    expect(foreign.body.report.rejected).toBe(3);
    expect(foreign.body.report.rowProblems[0].problems.join('\n')).toContain('with “Copy in as new records”');
    const copied = await upload(
      editor,
      'import',
      { revision: copy, name: 'export.xlsx', new_records: 'true' },
      workbook,
    );
    expect(copied.body.report).toMatchObject({ created: 3, complete: true });
    expect(await count(copy)).toBe(3);
  });

  it('refuses a column that names no field (nothing written), in the page’s words; a rename maps it', async () => {
    const revision = await approvedTopic(t, 'Import columns', { schema: SCHEMA });
    const file = 'name,Notte,Internal\r\nC-1,hello,x\r\n';
    const refused = await upload(editor, 'import', { revision, name: 'columns.csv' }, file);
    expect(refused.status).toBe(200);
    const { report } = refused.body;
    expect(report.wrote).toBe(false);
    expect(report.problems.join('\n')).toContain('Column "Notte" names no field of "Import columns"');
    expect(report.problems.join('\n')).toContain('Choose its field in the column mapping, or leave it out.');
    expect(report.problems.join('\n')).not.toContain('--rename');
    expect(report.columns).toContainEqual({ column: 'Notte', as: 'unknown' });
    expect(await count(revision)).toBe(0);

    const renames = JSON.stringify({ Notte: 'note', Internal: '' });
    const mapped = await upload(editor, 'import', { revision, name: 'columns.csv', renames }, file);
    expect(mapped.body.report).toMatchObject({ created: 1, complete: true });
    expect(mapped.body.report.columns).toContainEqual({
      column: 'Notte',
      as: 'field',
      field: { name: 'Note', key: 'note' },
    });
    expect(mapped.body.report.notes.join('\n')).toContain(
      'Internal: not imported (left out in the column mapping)',
    );
    expect(await count(revision)).toBe(1);

    const badRenames = await upload(editor, 'check', { revision, name: 'columns.csv', renames: '[1]' }, file);
    expect(badRenames.status).toBe(422);
  });

  it('gives advice in the page’s words, never an option of rxs import: a column with quotes, a workbook without the topic’s sheet', async () => {
    const revision = await approvedTopic(t, 'Import advice', { schema: SCHEMA });
    const quoted = await upload(
      editor,
      'check',
      { revision, name: 'q.csv' },
      'name,"Say ""hi"""\r\nQ-1,x\r\n',
    );
    expect(quoted.status).toBe(200);
    expect(quoted.body.report.problems.join('\n')).toContain(
      'Column "Say "hi"" names no field of "Import advice". No field is named',
    );
    expect(quoted.body.report.problems.join('\n')).toContain(
      'Choose its field in the column mapping, or leave it out.',
    );

    const book = new ExcelJS.Workbook();
    for (const name of ['Draft', 'Final']) book.addWorksheet(name).addRow(['name', 'Note']);
    const workbook = new Uint8Array(await book.xlsx.writeBuffer());
    const sheets = await upload(editor, 'check', { revision, name: 'two sheets.xlsx' }, workbook);
    expect(sheets.status).toBe(422);
    const message = sheets.body.detail as string;
    expect(message).toContain('"two sheets.xlsx" has no sheet named after the topic');
    expect(message).toContain('Choose the sheet to import and check again.');
    expect(sheets.body.choose).toEqual({ option: 'sheet', names: ['Draft', 'Final'], more: 0 });
    for (const body of [quoted.text, sheets.text])
      expect(body).not.toMatch(/--(rename|ignore-unknown|sheet)/);
  });

  it('refuses a request without the CSRF token, and a viewer, before reading the file', async () => {
    const revision = await approvedTopic(t, 'Import refused', { schema: SCHEMA });
    const noToken = await upload(editor, 'import', { revision, name: 'notes.csv' }, GOOD, {
      'x-csrf-token': 'wrong',
    });
    expect(noToken.status).toBe(403);
    expect(noToken.body.detail).toContain('CSRF token');
    const forged = await upload(editor, 'import', { revision, name: 'notes.csv' }, GOOD, {
      'sec-fetch-site': 'cross-site',
    });
    expect(forged.status).toBe(403);
    const asViewer = await upload(viewer, 'check', { revision, name: 'notes.csv' }, GOOD);
    expect(asViewer.status).toBe(403);
    const anonymous = await fetch(`${t.url}/api/import?revision=${revision}&name=notes.csv`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: GOOD,
    });
    expect(anonymous.status).toBe(401);
    expect(await count(revision)).toBe(0);
  });

  it('answers another tenant’s revision as not found', async () => {
    const foreign = Object.values(t.demo.otherTenant.topics)[0]!.currentRevisionId;
    const before = (
      await t.api('GET', `/records/count?context__knowledge_unit_topic_id=${foreign}`, {
        key: t.demo.otherTenant.users.owner.apiKey,
      })
    ).body.count;
    const answer = await upload(editor, 'import', { revision: foreign, name: 'notes.csv' }, GOOD);
    expect(answer.status).toBe(404);
    const after = (
      await t.api('GET', `/records/count?context__knowledge_unit_topic_id=${foreign}`, {
        key: t.demo.otherTenant.users.owner.apiKey,
      })
    ).body.count;
    expect(after).toBe(before);
  });

  it('refuses a re-approved revision, naming the current one', async () => {
    const old = await approvedTopic(t, 'Import re-approved', { schema: SCHEMA });
    const current = await reapprove(t, old);
    const answer = await upload(editor, 'check', { revision: old, name: 'notes.csv' }, GOOD);
    expect(answer.status).toBe(409);
    expect(answer.body.detail).toContain(`under revision ${current} now`);
  });

  it('answers a file past the size limit with 413, declared or streamed', async () => {
    const revision = await approvedTopic(t, 'Import large', { schema: SCHEMA });
    const large = `name,Note\r\n${'L-1,x\r\n'.repeat(200_000)}`; // 1.4 MB, the limit is 1 MB here
    const declared = await upload(editor, 'check', { revision, name: 'large.csv' }, large);
    expect(declared.status).toBe(413);
    expect(declared.body.detail).toContain('larger than 1 MB');
    // The page knows the limit, and refuses a larger file before sending it.
    expect((await editor.request('GET', '/api/meta')).body.importMaxBytes).toBe(1024 * 1024);
    const bytes = new TextEncoder().encode(large);
    const streamed = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 64 * 1024)
          controller.enqueue(bytes.subarray(i, i + 64 * 1024));
        controller.close();
      },
    });
    const chunked = await upload(editor, 'check', { revision, name: 'large.csv' }, streamed);
    expect(chunked.status).toBe(413);
    expect(await count(revision)).toBe(0);
  });

  it('answers a file of another type, an empty one and a broken workbook with a 4xx saying why', async () => {
    const revision = await approvedTopic(t, 'Import types', { schema: SCHEMA });
    const pdf = await upload(editor, 'check', { revision, name: 'notes.pdf' }, '%PDF-1.7');
    expect(pdf.status).toBe(415);
    expect(pdf.body.detail).toContain('"notes.pdf" is not a file the import page takes: CSV');
    const pdfAsCsv = await upload(editor, 'check', { revision, name: 'notes.csv' }, '%PDF-1.7');
    expect(pdfAsCsv.status).toBe(415);
    expect(pdfAsCsv.body.detail).toContain(
      '"notes.csv" is not a CSV file (text), as its name says: it is a PDF document.',
    );
    const csvAsXlsx = await upload(editor, 'check', { revision, name: 'notes.xlsx' }, GOOD);
    expect(csvAsXlsx.status).toBe(415);
    const empty = await upload(editor, 'check', { revision, name: 'notes.csv' }, '');
    expect(empty.status).toBeGreaterThanOrEqual(400);
    expect(empty.status).toBeLessThan(500);
    const broken = await upload(
      editor,
      'check',
      { revision, name: 'notes.xlsx' },
      'PK\x03\x04 not really a zip',
    );
    expect(broken.status, broken.text).toBe(422);
    expect(broken.body.detail).toContain('"notes.xlsx" cannot be read as an Excel workbook');
    expect(broken.body.detail).toContain('Nothing was written');
    expect(broken.body.detail).not.toContain('rxs-web-import-');
    const json = await fetch(`${t.url}/api/import/check?revision=${revision}&name=notes.csv`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        cookie: editor.cookie!,
        'x-csrf-token': editor.csrfToken!,
      },
      body: '{}',
    });
    expect(json.status).toBe(415);
    expect(await count(revision)).toBe(0);
  });
});

describe('web app import: an upload that trickles', () => {
  let t: TestServer;
  let editor: WebClient;
  let scratch: string;
  const savedTmp = process.env.TMPDIR;

  beforeAll(async () => {
    // The server's temporary files go here, so this test sees only its own.
    scratch = mkdtempSync(join(tmpdir(), 'rxs-slow-upload-'));
    process.env.TMPDIR = scratch;
    t = await startTestServer({ limits: { requestTimeoutMs: 1000, headersTimeoutMs: 1000 } });
    editor = webClient(t.url);
    const { editor: user } = t.demo.tenant.users;
    expect((await editor.signIn(user.email, user.password)).status).toBe(200);
  });
  afterAll(async () => {
    await t?.close();
    if (savedTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmp;
    rmSync(scratch, { recursive: true, force: true });
  });

  it('is cut with 408 within the time limit: its temporary file is gone, nothing is written, the next import is served', async () => {
    const revision = await approvedTopic(t, 'Slow upload', { schema: SCHEMA });
    const { hostname, port } = new URL(t.url);
    const socket = connect(Number(port), hostname);
    await new Promise((resolve) => socket.once('connect', resolve));
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    const closed = new Promise<number>((done) => socket.once('close', () => done(Date.now())));
    const started = Date.now();
    socket.write(
      `POST /api/import?${new URLSearchParams({ revision, name: 'slow.csv' })} HTTP/1.1\r\nHost: x\r\n` +
        `Cookie: ${editor.cookie}\r\nX-CSRF-Token: ${editor.csrfToken}\r\nContent-Type: text/csv\r\n` +
        'Content-Length: 100000\r\n\r\nname,Note,Score\r\n',
    );
    let row = 0;
    const trickle = setInterval(() => socket.writable && socket.write(`S-${++row},slow,1\r\n`), 100);
    const end = await closed;
    clearInterval(trickle);
    expect(end - started).toBeLessThan(3000);
    expect(received).toMatch(/^HTTP\/1\.1 408 /);

    // The part of the file that arrived was on disk; it is deleted with the answer.
    const leftovers = () => readdirSync(scratch).filter((name) => name.startsWith('rxs-web-import-'));
    for (let wait = 0; leftovers().length > 0 && wait < 20; wait++) await sleep(100);
    expect(leftovers()).toEqual([]);
    expect(await count(revision)).toBe(0);

    const next = await fetch(`${t.url}/api/import?${new URLSearchParams({ revision, name: 'notes.csv' })}`, {
      method: 'POST',
      headers: {
        accept: 'application/json',
        'content-type': 'text/csv',
        cookie: editor.cookie!,
        'x-csrf-token': editor.csrfToken!,
      },
      body: GOOD,
    });
    expect(next.status).toBe(200);
    expect((await next.json()).report).toMatchObject({ created: 3, complete: true });
  });

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const count = async (revision: string) =>
    (await t.api('GET', `/records/count?context__knowledge_unit_topic_id=${revision}`)).body.count as number;
});
