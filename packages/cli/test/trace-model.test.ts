import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/harness.js';
import { approvedTopic, createNote } from '../../server/test/support/topics.js';
import { runCli } from './run-cli.js';

/**
 * `rxs trace-model show|set|history`, and `rxs trace-report` taking its topics and rules from the
 * model when no mapping and no topics are given.
 */
describe('rxs trace-model', () => {
  let t: TestServer;
  let dir: string;
  let keyFile: string;
  let viewerKeyFile: string;
  const topics = { needs: '', reqs: '', tests: '' };
  const cli = (args: string[], options: { key?: string; input?: string } = {}) =>
    runCli([...args, '--url', t.url, '--api-key-file', options.key ?? keyFile], { input: options.input });

  /** The V of this test: needs refined by requirements, requirements verified by tests. */
  const modelFile = {
    change_reason: 'the V of the CLI test',
    roles: [
      {
        id: 'derives',
        forward_name: 'derives from',
        backward_name: 'refined by',
        from: { topic_name: 'CLI Requirements' },
        to: { topic_name: 'CLI Needs' },
        trace_source: 'to',
        relation_type: 'contributes_to',
      },
      {
        id: 'verifies',
        forward_name: 'verifies',
        backward_name: 'verified by',
        from: { topic_name: 'CLI Tests' },
        to: { topic_name: 'CLI Requirements' },
        trace_source: 'from',
        relation_type: 'is_related',
      },
    ],
  };
  const link = async (from: string, to: string, relation_type: string) => {
    const res = await t.api('POST', '/traces/', {
      body: {
        source: { node_id: from, node_type: 'Record' },
        target: { node_id: to, node_type: 'Record' },
        relation_type,
      },
    });
    expect(res.status, res.text).toBe(201);
  };

  beforeAll(async () => {
    t = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), 'rxs-trace-model-'));
    keyFile = join(dir, 'owner.key');
    writeFileSync(keyFile, `${t.ownerKey}\n`);
    viewerKeyFile = join(dir, 'viewer.key');
    writeFileSync(viewerKeyFile, `${t.demo.tenant.users.viewer.apiKey}\n`);
    topics.needs = await approvedTopic(t, 'CLI Needs');
    topics.reqs = await approvedTopic(t, 'CLI Requirements');
    topics.tests = await approvedTopic(t, 'CLI Tests');
    const needs = [
      await createNote(t, topics.needs, 'UN_001 Sterile'),
      await createNote(t, topics.needs, 'UN_002 Fast'),
    ];
    const reqs = [
      await createNote(t, topics.reqs, 'REQ_001 Sterilize'),
      await createNote(t, topics.reqs, 'REQ_002 Alarm'),
      await createNote(t, topics.reqs, 'REQ_003 Battery'),
    ];
    const tests = [
      await createNote(t, topics.tests, 'TST_001 Run'),
      await createNote(t, topics.tests, 'TST_002 Drop'),
    ];
    await link(needs[0]!, reqs[0]!, 'contributes_to');
    await link(needs[0]!, reqs[1]!, 'contributes_to');
    await link(tests[0]!, reqs[0]!, 'is_related');
    // Another relation type: not what "verifies" names, so REQ_002 stays unverified.
    await link(tests[1]!, reqs[1]!, 'mentions');
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('show: the demo model as a table, and as JSON', async () => {
    const shown = await cli(['trace-model', 'show']);
    expect(shown.stderr).toBe('');
    expect(shown.code).toBe(0);
    const lines = shown.stdout.split('\n');
    expect(lines[0]).toMatch(/^Trace model, version 1, changed \d{4}-/);
    expect(lines[2]).toMatch(/^ROLE +FORWARD \/ BACKWARD +FROM → TO +RELATION TYPE +TRACE SOURCE$/);
    expect(lines[4]).toMatch(
      /^verifies +verifies \/ verified by +Verification Tests → System Requirements +is_related +Verification Tests$/,
    );
    const json = await cli(['trace-model', 'show', '--json'], { key: viewerKeyFile });
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual((await t.api('GET', '/trace-model')).body);
  });

  it('set: topics by name, prints what changed; the same file again changes nothing', async () => {
    const file = join(dir, 'model.json');
    writeFileSync(file, JSON.stringify(modelFile, null, 2));
    const set = await cli(['trace-model', 'set', file]);
    expect(set.stderr).toBe('');
    expect(set.code).toBe(0);
    expect(set.stdout).toBe(
      [
        'Trace model version 2 (was 1):',
        '  + derives: CLI Requirements derives from CLI Needs (contributes_to, source: to)',
        '  - verifies: Verification Tests verifies System Requirements (is_related, source: from)',
        '  + verifies: CLI Tests verifies CLI Requirements (is_related, source: from)',
        '',
      ].join('\n'),
    );
    const model = (await t.api('GET', '/trace-model')).body;
    expect(
      model.roles.map((r: any) => `${r.id}: ${r.from.current_revision_id} → ${r.to.current_revision_id}`),
    ).toEqual([`derives: ${topics.reqs} → ${topics.needs}`, `verifies: ${topics.tests} → ${topics.reqs}`]);
    const again = await cli(['trace-model', 'set', '-'], { input: JSON.stringify(modelFile) });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe('No changes: the trace model is already as the file says (version 2).\n');

    const history = await cli(['trace-model', 'history', '--limit', '2']);
    expect(history.code, history.stderr).toBe(0);
    expect(history.stdout.split('\n')[0]).toMatch(
      /^v2 {2}\S+ {2}by owner@demo\.rxs\.local {2}\+derives ~verifies — the V of the CLI test$/,
    );
  });

  it('set: every problem of the file is a line naming its role; nothing changes', async () => {
    const before = (await t.api('GET', '/trace-model')).body;
    const file = join(dir, 'bad.json');
    const [derives, verifies] = modelFile.roles;
    writeFileSync(
      file,
      JSON.stringify({
        roles: [
          derives,
          { ...verifies, id: 'derives' },
          { ...verifies, id: 'x', to: { topic_history_id: '0123456789abcdef01234567' } },
        ],
      }),
    );
    const res = await cli(['trace-model', 'set', file]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`rxs: The trace model in ${file} was refused; nothing changed:\n`);
    expect(res.stderr).toContain(
      '  roles[1] (derives).id: Role id "derives" is already the id of roles[0]; give each role its own id.',
    );
    expect(res.stderr).toContain(
      '  roles[2] (x).to.topic_history_id: No knowledge topic has the history id 0123456789abcdef01234567 in your tenant.',
    );
    expect((await t.api('GET', '/trace-model')).body).toEqual(before);

    // The shape first: a relation type the contract does not have.
    const shape = await cli(['trace-model', 'set', '-'], {
      input: JSON.stringify({ roles: [{ ...verifies, relation_type: 'verifies' }] }),
    });
    expect(shape.stderr).toContain(
      '  roles[0] (verifies).relation_type: Input should be one of "is_related"',
    );
    const unknownName = await cli(['trace-model', 'set', '-'], {
      input: JSON.stringify({ roles: [{ ...derives, to: { topic_name: 'No Such Topic' } }] }),
    });
    expect(unknownName.code).toBe(1);
    expect(unknownName.stderr).toContain('No topic is named "No Such Topic"');
    const notJson = await cli(['trace-model', 'set', '-'], { input: '{"roles": [' });
    expect(notJson.stderr).toMatch(/^rxs: standard input is not JSON/);
    const noRoles = await cli(['trace-model', 'set', '-'], { input: '{"version": 2}' });
    expect(noRoles.stderr).toContain('must hold one JSON object with "roles": [...]');
  });

  it('set: a file based on an older version, or a viewer, changes nothing', async () => {
    const stale = await cli(['trace-model', 'set', '-'], {
      input: JSON.stringify({ ...modelFile, version: 1 }),
    });
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('The trace model is at version 2, not 1');
    const viewer = await cli(['trace-model', 'set', '-'], {
      key: viewerKeyFile,
      input: JSON.stringify({ roles: [] }),
    });
    expect(viewer.code).toBe(1);
    expect(viewer.stderr).toContain('lacks the permission "kt:approve"');
    expect((await t.api('GET', '/trace-model')).body.version).toBe(2);
  });

  it('rxs trace-report without --kt and --mapping: the model’s topics in the order of the V, its roles the rules', async () => {
    const out = join(dir, 'report.json');
    const res = await cli(['trace-report', '--format', 'json', '--out', out, '--json', '--quiet']);
    expect(res.code, res.stderr).toBe(0);
    const summary = JSON.parse(res.stdout);
    expect(
      summary.rules.map((r: any) => [r.source, r.target, r.linkType, `${r.covered}/${r.total}`]),
    ).toEqual([
      ['CLI Needs', 'CLI Requirements', 'refined by', '1/2'],
      ['CLI Requirements', 'CLI Tests', 'verified by', '1/3'],
    ]);
    const report = JSON.parse(readFileSync(out, 'utf8'));
    expect(report.topics.map((topic: { revisionId: string }) => topic.revisionId)).toEqual([
      topics.needs,
      topics.reqs,
      topics.tests,
    ]);
    const [refined, verified] = report.rules;
    expect(refined.links.map(([a, b]: string[]) => `${a.slice(0, 6)}>${b.slice(0, 7)}`)).toEqual([
      'UN_001>REQ_001',
      'UN_001>REQ_002',
    ]);
    expect(verified.uncovered.map((id: string) => id.slice(0, 7))).toEqual(['REQ_002', 'REQ_003']);
    expect(verified.orphans.map((id: string) => id.slice(0, 7))).toEqual(['TST_002']);

    // With --kt, the roles between those topics; the gate reads the role's rule.
    const gated = await cli([
      'trace-report',
      '--kt',
      topics.reqs,
      '--kt',
      topics.tests,
      '--fail-under',
      '50',
    ]);
    expect(gated.code).toBe(3);
    expect(gated.stdout).toContain('| CLI Requirements → CLI Tests (verified by) | 1 | 3 | 33.3% ❌ |');
    expect(gated.stderr).toContain('CLI Requirements → CLI Tests 33.3% (2 not linked)');
  });
});
