import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { visibleText } from '../../exchange/src/document/text.js';
import { HOSTILE_TEXTS } from '../../exchange/test/document-sample.js';
import { shouldSkip } from '../../exchange/test/support/spreadsheet-readers.js';
import { startTestServer, type TestServer } from '../../server/test/harness.js';
import { runCli } from './run-cli.js';
import { DOCX_READER_MISSING, docxText, PDF_READER_MISSING, pdfText } from './support/document-readers.js';

/**
 * The change summary of `rxs export --format pdf|docx`, against the real server: B1 is released
 * (signed by a reviewer and an approver), then a record is added, one deleted and one changed in
 * two fields, and B2, superseding B1, is released too. B2's document, read by pdftotext and
 * python-docx, is released, has every signature, and lists each change against B1 with the changed
 * fields by their labels, old and new value. Hostile record text comes through literally; a
 * baseline whose topic has lost its records since still renders them from history.
 */
/** Control characters as a record may hold them: the service refuses NUL in text. */
const CONTROLS = HOSTILE_TEXTS.controls.replace(' nul\u0000', '');

describe('rxs export --format pdf and docx: the change summary', () => {
  let t: TestServer;
  let dir: string;
  let revision: string;
  let hostileRevision: string;
  const keyFiles: Record<string, string> = {};
  const rxs = (who: 'owner' | 'editor', args: string[], input?: string) =>
    runCli([...args, '--url', t.url, '--api-key-file', keyFiles[who]!], { input });
  const ok = async (who: 'owner' | 'editor', args: string[], input?: string) => {
    const run = await rxs(who, args, input);
    expect(run.code, `rxs ${args.join(' ')}: ${run.stderr}`).toBe(0);
    return run;
  };
  /** Proposes a baseline of the topic, both users its signers, and has both sign: it is released. */
  const release = async (name: string, kt: string, supersedes?: string) => {
    const { owner, editor } = t.demo.tenant.users;
    await ok('owner', [
      'baseline',
      'propose',
      name,
      '--kt',
      kt,
      '--signer',
      owner.email,
      '--reviewer',
      editor.email,
      ...(supersedes ? ['--supersedes', supersedes] : []),
    ]);
    await ok(
      'editor',
      ['baseline', 'sign', name, '--meaning', 'reviewed', '--password-stdin'],
      `${editor.password}\n`,
    );
    const approved = await ok(
      'owner',
      ['baseline', 'sign', name, '--meaning', 'approved', '--password-stdin'],
      `${owner.password}\n`,
    );
    expect(approved.stdout).toMatch(/status: {6}released at/);
  };
  /** A topic whose form has two labelled text fields. */
  const createTopic = async (name: string) => {
    const created = await t.api('POST', '/kt/', {
      body: {
        knowledge_topic_name: name,
        type: 'multi_record',
        knowledge_topic_schema: {
          components: [
            { type: 'textfield', key: 'statement', label: 'Requirement statement' },
            { type: 'textfield', key: 'rationale', label: 'Why it is needed' },
          ],
        },
      },
    });
    expect(created.status, created.text).toBe(201);
    return (created.body as { _id: string })._id;
  };
  const createRecord = async (kt: string, name: string, data: Record<string, string>) => {
    const created = await t.api('POST', '/records/', {
      body: { name, form: {}, data, context: { knowledge_unit_topic_id: kt } },
    });
    expect(created.status, created.text).toBe(201);
    return (created.body as { _id: string })._id;
  };
  const exportDocument = async (baseline: string, format: 'pdf' | 'docx') => {
    const file = join(dir, `${baseline}.${format}`);
    await ok('owner', ['export', '--baseline', baseline, '--format', format, '--out', file, '--quiet']);
    return format === 'pdf' ? pdfText(file) : docxText(file);
  };

  beforeAll(async () => {
    t = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), 'rxs-document-changes-'));
    for (const who of ['owner', 'editor'] as const) {
      keyFiles[who] = join(dir, `${who}.key`);
      writeFileSync(keyFiles[who], `${t.demo.tenant.users[who].apiKey}\n`);
    }
    revision = await createTopic('Pump requirements');
    await createRecord(revision, 'PUMP_001', { statement: 'The pump starts.', rationale: 'Flow' });
    const removed = await createRecord(revision, 'PUMP_002', {
      statement: 'The pump hums.',
      rationale: 'Mood',
    });
    const changed = await createRecord(revision, 'PUMP_003', {
      statement: 'The pump stops within 5 s.',
      rationale: 'Safety first',
    });
    await release('B1', revision);

    await createRecord(revision, 'PUMP_004', { statement: 'The pump reports its state.', rationale: 'Ops' });
    expect((await t.api('DELETE', `/records/${removed}`)).status).toBe(204);
    const patched = await t.api('PATCH', `/records/${changed}`, {
      body: { data: { statement: 'The pump stops within 2 s.', rationale: 'Safety regulation' } },
    });
    expect(patched.status, patched.text).toBe(200);
    await release('B2', revision, 'B1');

    // A topic of hostile text, released as H1, whose records are all deleted afterwards.
    hostileRevision = await createTopic('Hostile texts');
    const hostile = [
      await createRecord(hostileRevision, 'HOST_001', {
        statement: HOSTILE_TEXTS.markup,
        rationale: HOSTILE_TEXTS.hebrew,
      }),
      await createRecord(hostileRevision, 'HOST_002', {
        statement: CONTROLS,
        rationale: HOSTILE_TEXTS.long,
      }),
    ];
    await release('H1', hostileRevision);
    for (const id of hostile) expect((await t.api('DELETE', `/records/${id}`)).status).toBe(204);
  }, 180_000);
  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** What both readers must find in B2's document, in their text. */
  const expectReleasedWithChanges = (text: string) => {
    const { owner, editor } = t.demo.tenant.users;
    expect(text).toContain('Baseline B2');
    expect(text).toContain('released');
    expect(text).not.toContain('NOT RELEASED');
    expect(text).not.toContain('not signed yet');
    expect(text).toMatch(new RegExp(`${owner.email}\\s+approved`));
    expect(text).toMatch(new RegExp(`${editor.email}\\s+reviewed`));
    expect(text).toContain('Change summary');
    expect(text).toContain('Changes against the released baseline B1.');
    expect(text).toContain('added: PUMP_004');
    expect(text).toContain('removed: PUMP_002');
    expect(text).toContain('changed: PUMP_003');
    for (const expected of [
      'Requirement statement',
      'was: The pump stops within 5 s.',
      'now: The pump stops within 2 s.',
      'Why it is needed',
      'was: Safety first',
      'now: Safety regulation',
      '1 added, 1 removed, 1 changed.',
    ])
      expect(text).toContain(expected);
    // The unchanged record is no change.
    expect(text).not.toMatch(/(added|removed|changed): PUMP_001/);
  };

  it.skipIf(shouldSkip(PDF_READER_MISSING))(
    'PDF of B2: released, every signature, and each change against B1',
    async () => expectReleasedWithChanges(await exportDocument('B2', 'pdf')),
    120_000,
  );

  it.skipIf(shouldSkip(DOCX_READER_MISSING))(
    'DOCX of B2: released, every signature, and each change against B1',
    async () => expectReleasedWithChanges(await exportDocument('B2', 'docx')),
    120_000,
  );

  it.skipIf(shouldSkip(PDF_READER_MISSING))(
    'PDF of now (--kt): compared with the latest released baseline',
    async () => {
      const file = join(dir, 'now.pdf');
      await ok('owner', ['export', '--kt', revision, '--format', 'pdf', '--out', file, '--quiet']);
      const text = pdfText(file);
      expect(text).toContain('NOT RELEASED');
      // The cover names the tenant (GET /account), not the service's host.
      expect(text).toContain(t.demo.tenant.name);
      expect(text).not.toContain(new URL(t.url).host);
      expect(text).toContain('Changes against the released baseline H1.');
      expect(text).toContain('added: PUMP_001');
      // H1's topic is not in this document: its records are no removals.
      expect(text).not.toMatch(/removed: HOST_00/);
    },
    120_000,
  );

  it.skipIf(shouldSkip(PDF_READER_MISSING))(
    'PDF of B1: no earlier released baseline, said in words',
    async () => {
      const text = await exportDocument('B1', 'pdf');
      expect(text).toContain('There is no earlier released baseline');
      expect(text).not.toContain('NOT RELEASED');
    },
    120_000,
  );

  it.skipIf(shouldSkip(PDF_READER_MISSING))(
    'PDF of a baseline whose records were deleted since: from history, hostile text literally',
    async () => {
      const text = await exportDocument('H1', 'pdf');
      const compact = text.replace(/\s+/g, '');
      expect(text).toContain('HOST_001');
      expect(text).toContain('HOST_002');
      expect(compact).toContain(HOSTILE_TEXTS.markup.replace(/\s+/g, ''));
      expect(text).toContain(HOSTILE_TEXTS.hebrew);
      // Control characters are visibly marked, never dropped or passed on.
      expect(compact).toContain(visibleText(CONTROLS).replace(/\s+/g, ''));
      expect(compact).toContain('bell[U+0007]escape[U+001B]');
      // The 100 KB value, to its last words.
      expect(compact).toContain('END-OF-LONG-VALUE');
      expect(text).toContain('Changes against the released baseline B2.');
    },
    180_000,
  );
});
