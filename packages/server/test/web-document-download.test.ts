import { WEB_DOCUMENT_LIMITS } from '../src/webapp/document-download.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BaselineView } from '@rxs/web-api';
import {
  DOCX_READER_MISSING,
  docxText,
  PDF_READER_MISSING,
  pdfText,
} from '../../exchange/test/support/document-text.js';
import { scratchDir, shouldSkip } from '../../exchange/test/support/spreadsheet-readers.js';
import { startTestServer, type TestServer } from './harness.js';
import { approvedTopic } from './support/topics.js';
import { webClient, type WebClient } from './web-client.js';

/**
 * The web app's document downloads: a baseline (`GET /api/baselines/{id}/document`) or topics as
 * they are now (`/api/export?format=pdf|docx`) as the document `rxs export --format pdf|docx`
 * makes, with the tenant's name, the baseline's status and signatures, and its changes against the
 * previous released baseline; read by pdftotext and python-docx.
 */
describe('web app document downloads', () => {
  let t: TestServer;
  let owner: WebClient;
  let editor: WebClient;
  let viewer: WebClient;
  let other: WebClient;
  let b2: BaselineView;
  const scratch = scratchDir();
  const users = () => t.demo.tenant.users;
  const tests = () => t.demo.tenant.topics.verificationTests!;

  /** The file a download gives, saved, with the answer's headers. */
  const download = async (client: WebClient, path: string, name: string) => {
    const response = await fetch(`${t.url}${path}`, { headers: { cookie: client.cookie! } });
    const body = Buffer.from(await response.arrayBuffer());
    const file = join(scratch.path, name);
    writeFileSync(file, body);
    return { response, body, file };
  };

  beforeAll(async () => {
    t = await startTestServer();
    [owner, editor, viewer, other] = [0, 1, 2, 3].map(() => webClient(t.url)) as WebClient[];
    expect((await owner!.signIn(users().owner.email, users().owner.password)).status).toBe(200);
    expect((await editor!.signIn(users().editor.email, users().editor.password)).status).toBe(200);
    expect((await viewer!.signIn(users().viewer.email, users().viewer.password)).status).toBe(200);
    const foreign = t.demo.otherTenant.users.owner;
    expect((await other!.signIn(foreign.email, foreign.password)).status).toBe(200);

    const revision = tests().currentRevisionId;
    const b1 = await owner.request<BaselineView>('POST', '/api/baselines', {
      body: { name: 'doc-b1', knowledge_topic_revision_ids: [revision] },
    });
    expect(b1.status, b1.text).toBe(201);
    expect(b1.body.status).toBe('released');

    // Since B1: TC-001's title and result changed, TC-002 deleted, TC-009 added.
    const [first, second] = tests().recordIds;
    const existing = await t.api('GET', `/records/${first}`);
    const changed = await t.api('PATCH', `/records/${first}`, {
      body: {
        data: {
          ...existing.body.data,
          textfield_9vd1sa: 'Sterilization hold, revised',
          radio_7yq2mw: 'failed',
        },
      },
    });
    expect(changed.status, changed.text).toBe(200);
    expect((await t.api('DELETE', `/records/${second}`)).status).toBe(204);
    const added = await t.api('POST', '/records/', {
      body: {
        name: 'TC-009',
        form: {},
        data: { textfield_k2j4h1: 'TC-009', textfield_9vd1sa: 'Door interlock', radio_7yq2mw: 'not_run' },
        context: { knowledge_unit_topic_id: revision },
      },
    });
    expect(added.status, added.text).toBe(201);

    const proposed = await owner.request<BaselineView>('POST', '/api/baselines', {
      body: {
        name: 'doc-b2',
        knowledge_topic_revision_ids: [revision],
        signers: [
          { user: users().owner.email, meaning: 'approved' },
          { user: users().editor.email, meaning: 'reviewed' },
        ],
        supersedes: b1.body.id,
      },
    });
    expect(proposed.status, proposed.text).toBe(201);
    const signedByEditor = await editor.request('POST', `/api/baselines/${proposed.body.id}/signatures`, {
      body: { meaning: 'reviewed', password: users().editor.password },
    });
    expect(signedByEditor.status, signedByEditor.text).toBe(201);
    const released = await owner.request<BaselineView>(
      'POST',
      `/api/baselines/${proposed.body.id}/signatures`,
      { body: { meaning: 'approved', password: users().owner.password } },
    );
    expect(released.body.status).toBe('released');
    b2 = released.body;
  }, 60_000);
  afterAll(async () => {
    await t.close();
    scratch.dispose();
  });

  /** What every reading of B2's document finds: cover, status, signatures, records, changes. */
  const expectBaselineDocument = (text: string) => {
    expect(text).toContain(t.demo.tenant.name);
    expect(text).toContain('doc-b2');
    expect(text).toContain('released');
    expect(text).not.toContain('NOT RELEASED');
    expect(text).toContain(users().owner.email);
    expect(text).toContain(users().editor.email);
    for (const id of ['TC-001', 'TC-003', 'TC-009']) expect(text).toContain(id);
    expect(text).toContain('Changes against the released baseline doc-b1');
    expect(text).toMatch(/added: TC-009/);
    expect(text).toMatch(/removed: TC-002/);
    expect(text).toMatch(/changed: TC-001/);
    expect(text).toContain('Sterilization temperature hold');
    expect(text).toContain('Sterilization hold, revised');
    expect(text).toContain('Passed');
    expect(text).toContain('Failed');
  };

  it.skipIf(shouldSkip(PDF_READER_MISSING))(
    'gives the baseline as a PDF: tenant, release, signatures, records and the changes against B1',
    async () => {
      const { response, body, file } = await download(
        viewer,
        `/api/baselines/${b2.id}/document?format=pdf`,
        'b2.pdf',
      );
      expect(response.status, body.toString('utf8', 0, 500)).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/pdf');
      expect(response.headers.get('content-disposition')).toMatch(
        /^attachment; filename="rxs-doc-b2-\d{4}-\d{2}-\d{2}\.pdf"$/,
      );
      expect(body.subarray(0, 5).toString()).toBe('%PDF-');
      expectBaselineDocument(pdfText(file));
    },
    60_000,
  );

  it.skipIf(shouldSkip(DOCX_READER_MISSING))(
    'gives the baseline as a DOCX that python-docx reads the same way',
    async () => {
      const { response, file } = await download(
        viewer,
        `/api/baselines/${b2.id}/document?format=docx`,
        'b2.docx',
      );
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe(
        'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      );
      expectBaselineDocument(docxText(file));
    },
    60_000,
  );

  it.skipIf(shouldSkip(PDF_READER_MISSING))(
    'gives topics as they are now from the export, against the latest released baseline',
    async () => {
      const { response, file } = await download(
        viewer,
        `/api/export?revisions=${tests().currentRevisionId}&format=pdf`,
        'now.pdf',
      );
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/pdf');
      expect(response.headers.get('content-disposition')).toMatch(
        /filename="rxs-verification-tests-\d{4}-\d{2}-\d{2}\.pdf"$/,
      );
      const text = pdfText(file);
      expect(text).toContain(t.demo.tenant.name);
      expect(text).toContain('NOT RELEASED');
      expect(text).toContain('Changes against the released baseline doc-b2');
      expect(text).toContain('TC-009');
    },
    60_000,
  );

  it.skipIf(shouldSkip(PDF_READER_MISSING))(
    'lists the first 500 changes and counts the others',
    async () => {
      const revision = await approvedTopic(t, 'Many notes');
      const empty = await owner.request<BaselineView>('POST', '/api/baselines', {
        body: { name: 'doc-empty', knowledge_topic_revision_ids: [revision] },
      });
      expect(empty.body.status).toBe('released');
      const records = Array.from({ length: 510 }, (_, i) => ({
        name: `NOTE-${String(i).padStart(3, '0')}`,
        form: {},
        data: { note: `note ${i}` },
        context: { knowledge_unit_topic_id: revision },
      }));
      const added = await t.api('POST', '/records/bulk', { body: { records } });
      expect(added.status, added.text.slice(0, 500)).toBeLessThan(300);
      const { response, file } = await download(
        viewer,
        `/api/export?revisions=${revision}&format=pdf`,
        'many.pdf',
      );
      expect(response.status).toBe(200);
      const text = pdfText(file);
      expect(text).toContain('Changes against the released baseline doc-empty');
      expect(text).toMatch(/10 more changes are\s+counted but not listed/);
    },
    120_000,
  );

  it('answers another tenant’s baseline 404 and a format it does not make 422', async () => {
    const foreign = await other.request('GET', `/api/baselines/${b2.id}/document?format=pdf`);
    expect(foreign.status, foreign.text).toBe(404);
    const bad = await viewer.request('GET', `/api/baselines/${b2.id}/document?format=csv`);
    expect(bad.status, bad.text).toBe(422);
    expect(JSON.stringify(bad.body.detail)).toContain('format');
    const missing = await viewer.request('GET', `/api/baselines/${b2.id}/document`);
    expect(missing.status).toBe(422);
  });

  it('refuses with 422 a document holding more text than one request renders', async () => {
    const revision = await approvedTopic(t, 'Large notes');
    const big = await t.api('POST', '/records/', {
      body: {
        name: 'BIG-1',
        form: {},
        data: { note: 'lorem ipsum '.repeat(Math.ceil((WEB_DOCUMENT_LIMITS.maxRecordBytes + 1) / 12)) },
        context: { knowledge_unit_topic_id: revision },
      },
    });
    expect(big.status, big.text.slice(0, 300)).toBe(201);
    const refused = await viewer.request('GET', `/api/export?revisions=${revision}&format=pdf`);
    expect(refused.status, refused.text.slice(0, 300)).toBe(422);
    expect(refused.text).toContain('Record BIG-1 holds');
    expect(refused.text).toContain('rxs export --format pdf|docx');
    // The data formats have no such limit.
    const csv = await viewer.request('GET', `/api/export?revisions=${revision}&format=csv`);
    expect(csv.status).toBe(200);
  }, 60_000);

  it('needs a session: without one the document is a 401, never a file', async () => {
    const response = await fetch(`${t.url}/api/baselines/${b2.id}/document?format=pdf`);
    expect(response.status).toBe(401);
  });
});
