import { createServer, request as httpRequest, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFieldMap } from '@rxs/exchange/export';
import { startTestServer, type TestServer } from '../../server/test/harness.js';
import { runCli } from './run-cli.js';

/** A proxy that answers 404 for `GET /records/count`: the service this interface was published for. */
async function withoutCount(target: string) {
  const upstream = new URL(target);
  const server: Server = createServer((req, res) => {
    if (req.url?.startsWith('/records/count')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"Not Found"}');
      return;
    }
    const forward = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** `rxs kt list|show`: what a new user needs to find a topic's ids and its fields. */
describe('rxs kt', () => {
  let t: TestServer;
  let dir: string;
  let keyFile: string;
  const kt = (...args: string[]) => runCli(['kt', ...args, '--url', t.url, '--api-key-file', keyFile]);

  beforeAll(async () => {
    t = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), 'rxs-kt-'));
    keyFile = join(dir, 'owner.key');
    writeFileSync(keyFile, `${t.ownerKey}\n`);
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists every topic with both ids, version, status and its record count', async () => {
    const requirements = t.demo.tenant.topics.systemRequirements!;
    const tests = t.demo.tenant.topics.verificationTests!;
    // A topic being revised: its approved revision holds the records, a draft is open.
    const draft = await t.api('POST', `/kt/${tests.currentRevisionId}/draft`);
    expect(draft.status).toBe(201);
    const listed = await kt('list', '--json');
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
    const topics = JSON.parse(listed.stdout) as Record<string, unknown>[];
    const byName = new Map(topics.map((topic) => [topic.name, topic]));
    expect(byName.get(requirements.name)).toEqual({
      name: requirements.name,
      type: 'multi_record',
      historyId: requirements.historyId,
      currentRevisionId: requirements.currentRevisionId,
      version: expect.any(String),
      status: 'approved',
      openDraftId: null,
      records: requirements.recordIds.length,
    });
    expect(byName.get(tests.name)).toMatchObject({
      currentRevisionId: tests.currentRevisionId,
      status: 'approved',
      openDraftId: draft.body._id,
      records: tests.recordIds.length,
    });
    // Never another tenant's.
    expect(byName.has(t.demo.otherTenant.topics.riskRegister!.name)).toBe(false);

    const text = await kt('list');
    expect(text.code).toBe(0);
    const line = text.stdout.split('\n').find((l) => l.startsWith(requirements.name))!;
    expect(line).toContain(requirements.historyId);
    expect(line).toContain(requirements.currentRevisionId);
    expect(line.trim().endsWith(String(requirements.recordIds.length))).toBe(true);
    expect(text.stdout).toContain(`draft ${draft.body._id} open`);
  });

  it('filters by part of the name and by status', async () => {
    const created = await t.api('POST', '/kt/', {
      body: {
        knowledge_topic_name: 'Brand-new Hazard Analysis',
        type: 'multi_record',
        knowledge_topic_schema: { components: [] },
      },
    });
    expect(created.status).toBe(201);
    const drafts = JSON.parse((await kt('list', '--status', 'draft', '--json')).stdout) as { name: string }[];
    expect(drafts.map((d) => d.name)).toEqual(['Brand-new Hazard Analysis']);
    const named = JSON.parse((await kt('list', '--name', 'HAZARD', '--json')).stdout) as {
      records: number;
    }[];
    expect(named).toHaveLength(1);
    expect(named[0]!.records).toBe(0);
    const none = await kt('list', '--name', 'no such topic anywhere');
    expect([none.code, none.stdout]).toEqual([0, 'No topic matches. Try without --name or --status.\n']);
    const wrong = await kt('list', '--status', 'retired');
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(/draft, approved/);
  });

  it('shows a topic by history id or by any revision id: both ids, the latest revision and every field by semantic name', async () => {
    const requirements = t.demo.tenant.topics.systemRequirements!;
    const topic = (await t.api('GET', `/kt/${requirements.currentRevisionId}`)).body;
    const expected = buildFieldMap(topic.knowledge_topic_schema).fields;
    for (const id of [requirements.historyId, requirements.currentRevisionId]) {
      const shown = await kt('show', id, '--json');
      expect(shown.stderr).toBe('');
      const body = JSON.parse(shown.stdout);
      expect(body).toMatchObject({
        revisionId: requirements.currentRevisionId,
        historyId: requirements.historyId,
        currentRevisionId: requirements.currentRevisionId,
        records: requirements.recordIds.length,
      });
      expect(body.fields.map((f: { key: string; name: string }) => [f.key, f.name])).toEqual(
        expected.map((f) => [f.key, f.name]),
      );
    }
    // An old revision: its own fields, and where the records live now.
    const old = JSON.parse((await kt('show', requirements.oldRevisionIds[0]!, '--json')).stdout);
    expect(old).toMatchObject({
      revisionId: requirements.oldRevisionIds[0],
      currentRevisionId: requirements.currentRevisionId,
    });

    const text = await kt('show', requirements.historyId);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`history id        ${requirements.historyId}`);
    expect(text.stdout).toContain(`current revision  ${requirements.currentRevisionId}`);
    for (const field of expected) expect(text.stdout).toContain(field.name);
    const select = expected.find((f) => f.options?.length);
    if (select) expect(text.stdout).toContain(select.options![0]!.label);
    expect(text.stdout).toContain(`rxs export --kt ${requirements.currentRevisionId}`);
  });

  it('says what to do with an id that is not a topic, and never shows another tenant’s', async () => {
    const theirs = t.demo.otherTenant.topics.riskRegister!;
    for (const id of [theirs.currentRevisionId, theirs.historyId, '0123456789abcdef01234567']) {
      const shown = await kt('show', id);
      expect(shown.code).toBe(1);
      expect(shown.stderr).toContain(`No topic in your tenant has the revision or history id ${id}`);
      expect(shown.stderr).toContain('rxs kt list');
      expect(shown.stdout).toBe('');
    }
    const malformed = await kt('show', 'REQ-1');
    expect(malformed.code).toBe(1);
    expect(malformed.stderr).toContain('"REQ-1" is not a topic id');
  });

  it('against a service that cannot count records, lists the topics with the count unknown', async () => {
    const proxy = await withoutCount(t.url);
    try {
      const listed = await runCli(['kt', 'list', '--json', '--url', proxy.url, '--api-key-file', keyFile]);
      expect(listed.code).toBe(0);
      const topics = JSON.parse(listed.stdout) as { records: number | null }[];
      expect(topics.length).toBeGreaterThan(0);
      expect(topics.every((topic) => topic.records === null)).toBe(true);
      const text = await runCli(['kt', 'list', '--url', proxy.url, '--api-key-file', keyFile]);
      expect(text.stdout.split('\n')[1]!.trim().endsWith('?')).toBe(true);
    } finally {
      await proxy.close();
    }
  });
});
