import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '@rxs/client';
import { traceModelChain, type TraceRole } from '@rxs/contract';
import { CoverageCollector } from '@rxs/exchange';
import { exportParts, exportSourceOf } from '@rxs/exchange/export';
import { seedDemo, type DemoInfo } from '@rxs/server';
import { startTestServer, type TestServer } from './harness.js';
import { approvedTopic } from './support/topics.js';

/** A role between two topics (history ids), with the fields a test does not care about filled in. */
const role = (id: string, from: string, to: string, extra: Record<string, unknown> = {}) => ({
  id,
  forward_name: `${id}s`,
  backward_name: `${id}d by`,
  from: { topic_history_id: from },
  to: { topic_history_id: to },
  trace_source: 'from',
  relation_type: 'is_related',
  ...extra,
});

/**
 * The trace model (`/trace-model`): roles that say what the traces between two topics mean, read
 * by every role, replaced whole by owners and admins, checked item by item, guarded by its version,
 * and kept in history; per tenant.
 */
describe('the trace model', () => {
  let t: TestServer;
  let requirements: { historyId: string; revisionId: string; name: string };
  let tests: { historyId: string; name: string };
  let needs: string;
  let needsRevision: string;
  let adminKey: string;

  const model = async (key?: string) => {
    const res = await t.api('GET', '/trace-model', { key });
    expect(res.status, res.text).toBe(200);
    return res.body;
  };
  const put = (body: unknown, key?: string) => t.api('PUT', '/trace-model', { body, key });
  /** A PUT based on the version there is now. */
  const putRoles = async (roles: unknown[], extra: Record<string, unknown> = {}) =>
    put({ version: (await model()).version, roles, ...extra });
  const historyIdOf = async (revision: string) =>
    (await t.api('GET', `/kt/${revision}`)).body.knowledge_topic_history_id as string;

  beforeAll(async () => {
    t = await startTestServer();
    const { systemRequirements, verificationTests } = t.demo.tenant.topics;
    requirements = {
      historyId: systemRequirements!.historyId,
      revisionId: systemRequirements!.currentRevisionId,
      name: systemRequirements!.name,
    };
    tests = { historyId: verificationTests!.historyId, name: verificationTests!.name };
    needsRevision = await approvedTopic(t, 'User Needs (model)');
    needs = await historyIdOf(needsRevision);
    const { accounts } = t.server.app.services;
    const admin = await accounts.createUser(t.demo.tenant.id, {
      email: 'model-admin@demo.rxs.local',
      role: 'admin',
    });
    adminKey = (await accounts.createApiKey(t.demo.tenant.id, { userId: admin.id, name: 'admin' })).key;
  });
  afterAll(() => t.close());

  it('the demo tenant comes with its V-model: Verification Tests verify System Requirements', async () => {
    const demo = await model(t.demo.tenant.users.viewer.apiKey);
    expect(demo.version).toBe(1);
    expect(demo.updated_at).toEqual(expect.any(String));
    expect(demo.roles).toEqual([
      {
        id: 'verifies',
        forward_name: 'verifies',
        backward_name: 'verified by',
        from: {
          topic_history_id: tests.historyId,
          topic_name: tests.name,
          current_revision_id: t.demo.tenant.topics.verificationTests!.currentRevisionId,
        },
        to: {
          topic_history_id: requirements.historyId,
          topic_name: requirements.name,
          current_revision_id: requirements.revisionId,
        },
        trace_source: 'from',
        relation_type: 'is_related',
      },
    ]);
  });

  it('round trip: what is put is what is read, with the names beside; the answer can be put back as is', async () => {
    const before = await model();
    const roles = [
      role('derive', requirements.historyId, needs, {
        forward_name: 'derives from',
        backward_name: 'refined by',
        trace_source: 'to',
        relation_type: 'contributes_to',
      }),
      ...before.roles,
    ];
    const res = await put({ version: before.version, roles, change_reason: 'needs join the V' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.version).toBe(before.version + 1);
    expect(res.body.roles.map((r: { id: string }) => r.id)).toEqual(['derive', 'verifies']);
    expect(res.body.roles[0].to).toEqual({
      topic_history_id: needs,
      topic_name: 'User Needs (model)',
      current_revision_id: needsRevision,
    });
    expect(await model()).toEqual(res.body);

    // The answer, sent back as it is (names beside topics, updated_at, updated_by): nothing changes.
    const again = await put(res.body);
    expect(again.status, again.text).toBe(200);
    expect(again.body).toEqual(res.body);
  });

  it('a re-approval of a topic keeps its roles, now beside its new revision', async () => {
    const draft = await t.api('POST', `/kt/${needsRevision}/draft`);
    const approved = await t.api('POST', `/kt/${draft.body._id}/approve`);
    expect(approved.status, approved.text).toBe(200);
    needsRevision = approved.body._id;
    const derive = (await model()).roles.find((r: { id: string }) => r.id === 'derive');
    expect(derive.to).toMatchObject({ topic_history_id: needs, current_revision_id: needsRevision });
  });

  it('every problem of a model is one 422 item naming it; nothing changes', async () => {
    const before = await model();
    const otherTopic = t.demo.otherTenant.topics.riskRegister!.historyId;
    const res = await put({
      version: before.version,
      roles: [
        role('verifies', tests.historyId, requirements.historyId, {
          forward_name: 'verifies',
          backward_name: 'verified by',
        }),
        role('verifies', needs, requirements.historyId),
        role('blank', needs, tests.historyId, { forward_name: '   ' }),
        role('unknown', '0123456789abcdef01234567', needs),
        role('revision', requirements.revisionId, needs),
        role('foreign', otherTopic, needs),
        role('same-names', tests.historyId, requirements.historyId, {
          forward_name: 'checks',
          backward_name: 'Verified  BY',
          relation_type: 'mentions',
        }),
        role('both-ways', needs, needs, { forward_name: 'refines', backward_name: 'refines' }),
        role('same-traces', tests.historyId, requirements.historyId, {
          forward_name: 'tests',
          backward_name: 'tested by',
        }),
      ],
    });
    expect(res.status, res.text).toBe(422);
    const problems = res.body.detail.map((d: { loc: unknown[]; msg: string }) => [d.loc.join('.'), d.msg]);
    const at = (loc: string) => problems.filter(([l]: string[]) => l === loc).map(([, msg]: string[]) => msg);
    expect(at('body.roles.1.id')).toEqual([
      'Role id "verifies" is already the id of roles[0]; give each role its own id.',
    ]);
    expect(at('body.roles.2.forward_name')[0]).toMatch(/is blank/);
    expect(at('body.roles.3.from.topic_history_id')).toEqual([
      'No knowledge topic has the history id 0123456789abcdef01234567 in your tenant.',
    ]);
    expect(at('body.roles.4.from.topic_history_id')[0]).toContain(
      `is a revision id; a role names its topic by the topic's history id, ${requirements.historyId}`,
    );
    // Another tenant's topic is answered as one that never existed.
    expect(at('body.roles.5.from.topic_history_id')).toEqual([
      `No knowledge topic has the history id ${otherTopic} in your tenant.`,
    ]);
    expect(at('body.roles.6.backward_name')[0]).toMatch(
      /already names roles\[0\] \(verifies\) between the same two topics/,
    );
    expect(at('body.roles.7.backward_name')[0]).toMatch(/reads "refines" both ways/);
    expect(at('body.roles.8.relation_type')[0]).toMatch(
      /roles\[0\] \(verifies\) already names the traces of relation type "is_related"/,
    );
    expect(problems).toHaveLength(8);
    expect(await model()).toEqual(before);
  });

  it('refuses a relation type the contract does not allow, or one the service makes itself', async () => {
    for (const relation_type of ['verifies', 'auto_based_on_template', '']) {
      const res = await putRoles([role('x', tests.historyId, requirements.historyId, { relation_type })]);
      expect(res.status, res.text).toBe(422);
      expect(res.body.detail[0].loc).toEqual(['body', 'roles', 0, 'relation_type']);
      expect(res.body.detail[0].msg).toContain('"is_related"');
    }
  });

  it('refuses malformed models by their schema: ids, names, size', async () => {
    const { version } = await model();
    const cases: [unknown, string][] = [
      [{ version, roles: [role('Has Spaces', needs, tests.historyId)] }, 'body.roles.0.id'],
      [
        { version, roles: [role('x', needs, tests.historyId, { forward_name: '' })] },
        'body.roles.0.forward_name',
      ],
      [
        { version, roles: [role('x', needs, tests.historyId, { trace_source: 'source' })] },
        'body.roles.0.trace_source',
      ],
      [{ version, roles: [role('x', 'not-an-id', tests.historyId)] }, 'body.roles.0.from.topic_history_id'],
      [{ version, roles: [{ ...role('x', needs, tests.historyId), colour: 'red' }] }, 'body.roles.0.colour'],
      [{ roles: [] }, 'body.version'],
      [{ version: -1, roles: [] }, 'body.version'],
      [
        { version, roles: Array.from({ length: 101 }, (_, i) => role(`r${i}`, needs, tests.historyId)) },
        'body.roles',
      ],
    ];
    for (const [body, loc] of cases) {
      const res = await put(body);
      expect(res.status, `${loc}: ${res.text}`).toBe(422);
      expect(
        res.body.detail.map((d: { loc: unknown[] }) => d.loc.join('.')),
        res.text,
      ).toContain(loc);
    }
  });

  it('a change based on an old version is 409, saying the version there is; two at once: one wins', async () => {
    const { version, roles } = await model();
    const stale = await put({ version: version - 1, roles: [] });
    expect(stale.status, stale.text).toBe(409);
    expect(stale.body.detail).toContain(`The trace model is at version ${version}, not ${version - 1}`);
    const ahead = await put({ version: version + 5, roles: [] });
    expect(ahead.status).toBe(409);

    const racing = await Promise.all([
      put({ version, roles: roles.slice(0, 1) }),
      put({ version, roles: roles.slice(1) }),
    ]);
    expect(racing.map((r) => r.status).sort()).toEqual([200, 409]);
    const now = await model();
    expect(now.version).toBe(version + 1);
    expect(now).toEqual(racing.find((r) => r.status === 200)!.body);
  });

  it('viewers and editors may read but not change it (403, nothing changes); owners and admins may', async () => {
    const before = await model();
    for (const who of ['viewer', 'editor'] as const) {
      const key = t.demo.tenant.users[who].apiKey;
      expect((await model(key)).version).toBe(before.version);
      const res = await put({ version: before.version, roles: [] }, key);
      expect(res.status, res.text).toBe(403);
      expect(res.body.detail).toMatch(new RegExp(`role "${who}" lacks the permission "kt:approve"`));
    }
    expect(await model()).toEqual(before);

    const byAdmin = await put(
      { version: before.version, roles: [role('verifies', tests.historyId, requirements.historyId)] },
      adminKey,
    );
    expect(byAdmin.status, byAdmin.text).toBe(200);
    const byOwner = await put({
      version: byAdmin.body.version,
      roles: [
        role('verifies', tests.historyId, requirements.historyId, {
          forward_name: 'verifies',
          backward_name: 'verified by',
        }),
      ],
    });
    expect(byOwner.status, byOwner.text).toBe(200);
    expect(byOwner.body.updated_by).not.toBe(byAdmin.body.updated_by);
  });

  it('keeps every change in its history: who, when, how, why, what changed, and the roles', async () => {
    const { version } = await model();
    const res = await putRoles(
      [
        role('verifies', tests.historyId, requirements.historyId, {
          forward_name: 'verifies',
          backward_name: 'is verified by',
        }),
        role('derive', requirements.historyId, needs, { trace_source: 'to' }),
      ],
      { change_reason: 'wording of the V' },
    );
    expect(res.status, res.text).toBe(200);
    const history = await t.api('GET', '/trace-model/history?limit=3', {
      key: t.demo.tenant.users.viewer.apiKey,
    });
    expect(history.status, history.text).toBe(200);
    expect(history.body.map((v: { version: number }) => v.version)).toEqual([
      version + 1,
      version,
      version - 1,
    ]);
    const [newest, previous] = history.body;
    expect(newest).toMatchObject({
      user_email: t.demo.tenant.users.owner.email,
      via: 'api-key',
      key_id: expect.any(String),
      reason: 'wording of the V',
      changes: { added: ['derive'], removed: [], changed: ['verifies'], reordered: false },
    });
    expect(newest.at).toBe(res.body.updated_at);
    expect(newest.roles.map((r: { id: string }) => r.id)).toEqual(['verifies', 'derive']);
    expect(newest.roles[1].to).toEqual({ topic_history_id: needs });
    expect(previous.roles.map((r: { id: string }) => r.id)).toEqual(['verifies']);
    // Older pages; the first version is the demo's.
    const older = await t.api('GET', `/trace-model/history?before=${version - 1}&limit=100`);
    const first = older.body.at(-1);
    expect(first).toMatchObject({
      version: 1,
      via: 'local',
      reason: 'demo data: the V-model',
      changes: { added: ['verifies'], removed: [], changed: [], reordered: false },
    });
    expect((await t.api('GET', '/trace-model/history?limit=0')).status).toBe(422);
  });

  it("is the tenant's own: another tenant reads its own (none), and its change is not seen here", async () => {
    const otherKey = t.demo.otherTenant.users.owner.apiKey;
    const ours = await model();
    const theirs = await model(otherKey);
    expect(theirs).toEqual({ version: 0, roles: [], updated_at: null, updated_by: null });
    expect((await t.api('GET', '/trace-model/history', { key: otherKey })).body).toEqual([]);
    const risks = t.demo.otherTenant.topics.riskRegister!.historyId;
    const res = await put(
      {
        version: 0,
        roles: [role('relates', risks, risks, { forward_name: 'causes', backward_name: 'caused by' })],
      },
      otherKey,
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body.roles[0].from.topic_name).toBe('Risk Register');
    expect(await model()).toEqual(ours);
    // Our topics are no topics of theirs.
    const foreign = await put({ version: 1, roles: [role('x', risks, requirements.historyId)] }, otherKey);
    expect(foreign.status).toBe(422);
    expect(foreign.body.detail[0].msg).toBe(
      `No knowledge topic has the history id ${requirements.historyId} in your tenant.`,
    );
  });

  it('an empty model is a model: no roles, a new version', async () => {
    const res = await putRoles([]);
    expect(res.status, res.text).toBe(200);
    expect(res.body.roles).toEqual([]);
    const history = await t.api('GET', '/trace-model/history?limit=1');
    expect(history.body[0].changes.removed.length).toBeGreaterThan(0);
  });
});

describe('the demo V-model as a trace model', () => {
  let t: TestServer;
  let demo: DemoInfo;
  const dataDir = mkdtempSync(join(tmpdir(), 'rxs-demo-model-'));

  beforeAll(async () => {
    t = await startTestServer();
    // The V-model demo on the same database: the plain demo's tenants are discarded first.
    demo = await seedDemo(t.server.app.services, { dataDir, baseUrl: t.url, vModel: true });
  });
  afterAll(async () => {
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('names every trace of the V, in the order of the V', async () => {
    const res = await t.api('GET', '/trace-model', { key: demo.tenant.users.viewer.apiKey });
    expect(res.status, res.text).toBe(200);
    const topics = demo.tenant.topics;
    const name = (key: string) => topics[key]!.name;
    expect(
      res.body.roles.map(
        (r: any) =>
          `${r.from.topic_name} ${r.forward_name} ${r.to.topic_name} (${r.relation_type}, source: ${r.trace_source})`,
      ),
    ).toEqual([
      `${name('systemRequirements')} derives from ${name('userNeeds')} (contributes_to, source: to)`,
      `${name('designOutputs')} implements ${name('systemRequirements')} (is_related, source: to)`,
      `${name('verificationTests')} verifies ${name('systemRequirements')} (is_related, source: from)`,
      `${name('validationStudies')} validates ${name('userNeeds')} (is_related, source: from)`,
      `${name('designOutputs')} realizes ${name('riskControls')} (is_related, source: to)`,
      `${name('releaseRecords')} cites as evidence ${name('verificationTests')} (mentions, source: from)`,
    ]);
    // The plain demo's tenants are gone, their model with them.
    expect((await t.api('GET', '/trace-model', { key: t.ownerKey })).status).toBe(401);
  });

  it("is the traceability report's default: the V's topics in order, each role a rule, the demo's gaps found", async () => {
    const model = (await t.api('GET', '/trace-model', { key: demo.tenant.users.viewer.apiKey })).body;
    const client = createClient({
      techdocUrl: t.url,
      recordsUrl: t.url,
      tracerUrl: t.url,
      apiKey: demo.tenant.users.viewer.apiKey,
    });
    const revisionOf = new Map(
      model.roles
        .flatMap((r: TraceRole) => [r.from, r.to])
        .map((e: TraceRole['from']) => [e.topic_history_id, e.current_revision_id]),
    );
    const revisionIds = traceModelChain(model.roles).map((id) => revisionOf.get(id) as string);
    const collector = new CoverageCollector({ model: model.roles, consecutive: false });
    for await (const part of exportParts(exportSourceOf(client), { revisionIds, traces: true }))
      await collector.write(part);
    const rules = collector.report().rules.map((r) => ({
      rule: `${r.rule.source.name} → ${r.rule.target.name} (${r.rule.linkType})`,
      covered: `${r.covered}/${r.total}`,
      uncovered: r.uncovered.map((id) => id.slice(0, 7)),
      orphans: r.orphans.map((id) => id.slice(0, 7)),
    }));
    expect(rules).toEqual([
      {
        rule: 'User Needs → System Requirements (refined by)',
        covered: '4/6',
        uncovered: ['UN-5', 'UN-6'],
        orphans: [],
      },
      {
        rule: 'System Requirements → Design Outputs (implemented by)',
        covered: '4/4',
        uncovered: [],
        orphans: ['DO-3', 'DO-6'],
      },
      {
        rule: 'System Requirements → Verification Tests (verified by)',
        covered: '3/4',
        uncovered: ['REQ_004'],
        orphans: ['TC-004'],
      },
      {
        rule: 'User Needs → Validation Studies (validated by)',
        covered: '4/6',
        uncovered: ['UN-5', 'UN-6'],
        orphans: [],
      },
      {
        rule: 'Risk Controls → Design Outputs (realized by)',
        covered: '3/4',
        uncovered: ['RC-3'],
        orphans: ['DO-2', 'DO-5', 'DO-6'],
      },
      {
        rule: 'Verification Tests → Release Records (evidence for)',
        covered: '3/4',
        uncovered: ['TC-004'],
        orphans: [],
      },
    ]);
  });
});
