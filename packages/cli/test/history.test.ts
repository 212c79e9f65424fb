import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/harness.js';
import { runCli } from './run-cli.js';

/**
 * The audit trail from the command line, against the real server: a record's versions with who,
 * when, why and what changed; baselines; exports of a past moment that equal, byte for byte, the
 * export taken then; and the changes between two moments.
 */
describe('rxs history, baselines and exports as of a moment', () => {
  let t: TestServer;
  let dir: string;
  let keyFile: string;
  let revision: string;
  let ids: string[];
  const connection = () => ['--url', t.url, '--api-key-file', keyFile];
  const rxs = (command: string[], ...args: string[]) => runCli([...command, ...connection(), ...args]);
  const exportTo = (out: string, format: string, ...args: string[]) =>
    rxs(['export'], '--quiet', '--traces', '--format', format, '--out', out, ...args);
  const FORMATS = ['json', 'jsonl', 'csv', 'xlsx', 'reqif', 'needs'] as const;

  beforeAll(async () => {
    t = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), 'rxs-history-'));
    keyFile = join(dir, 'owner.key');
    writeFileSync(keyFile, `${t.ownerKey}\n`);
    revision = t.demo.tenant.topics.systemRequirements!.currentRevisionId;
    ids = t.demo.tenant.topics.systemRequirements!.recordIds;
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('rxs history: every version newest first, who and why, and the fields that changed by semantic name', async () => {
    const id = ids[0]!;
    const current = (await t.api('GET', `/records/${id}`)).body;
    const patched = await t.api('PATCH', `/records/${id}`, {
      body: {
        data: { ...current.data, priority: 'low' },
        // What anyone can type: a line break, a line that looks like a version, a terminal escape.
        change_reason: 'CAPA-17: risk re-rated\n#1 created \u001b[2Jafter review',
      },
    });
    expect(patched.status).toBe(200);
    const n = (await t.api('GET', `/records/${id}/versions`)).body[0].n as number;

    const text = await rxs(['history', id]);
    expect(text.code, text.stderr).toBe(0);
    const blocks = text.stdout.split(/\n(?=#\d+ )/);
    expect(blocks).toHaveLength(n);
    expect(blocks[0]).toMatch(new RegExp(`^#${n} updated {2}\\S+ {2}by owner@`));
    // The reason's further lines are indented (none passes for a version), the escape shows as text;
    // the change names the field as exports do.
    expect(blocks[0]).toContain(
      'reason: CAPA-17: risk re-rated\n          #1 created \\u001b[2Jafter review',
    );
    expect(text.stdout).not.toContain('\u001b');
    expect(blocks[0]).toMatch(/priority: "\w+" → "low"/i);
    expect(blocks[blocks.length - 1]).toMatch(/^#1 created/);

    const json = await rxs(['history', id], '--json', '--limit', '1');
    expect(json.code, json.stderr).toBe(0);
    const versions = JSON.parse(json.stdout);
    expect(versions).toHaveLength(1);
    expect(versions[0]).toMatchObject({
      n,
      action: 'updated',
      record: { _id: id, data: { priority: 'low' } },
    });

    // A deleted record keeps its history; an id of nothing says so and fails.
    expect((await t.api('DELETE', `/records/${ids[3]}?change_reason=obsolete`)).status).toBe(204);
    const deleted = await rxs(['history', ids[3]!]);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toMatch(/^#\d+ deleted .*\n {2}reason: obsolete/);
    const unknown = await rxs(['history', 'ffffffffffffffffffffffff']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/has no history in your tenant/);
    expect(unknown.stderr).not.toMatch(/at .*\.js:\d+/);
  });

  it('an export taken now comes back byte for byte with --as-of its moment, in every format, after changes', async () => {
    const taken: Record<string, Buffer> = {};
    // One moment for all formats: the JSON export's, which the others then take as of.
    const first = await rxs(
      ['export'],
      '--quiet',
      '--traces',
      '--kt',
      revision,
      '--format',
      'json',
      '--out',
      join(dir, 'now.json'),
      '--json',
    );
    expect(first.code, first.stderr).toBe(0);
    const moment = JSON.parse(first.stdout).exportedAt as string;
    expect(JSON.parse(readFileSync(join(dir, 'now.json'), 'utf8')).exportedAt).toBe(moment);
    for (const format of FORMATS) {
      const out = join(dir, `then.${format}`);
      const result = await exportTo(out, format, '--kt', revision, '--as-of', moment);
      expect(result.code, result.stderr).toBe(0);
      taken[format] = readFileSync(out);
    }
    expect(taken.json!.equals(readFileSync(join(dir, 'now.json')))).toBe(true);

    // Everything changes: an edit, a new record, a delete, a trace.
    const record = (await t.api('GET', `/records/${ids[1]}`)).body;
    await t.api('PATCH', `/records/${ids[1]}`, { body: { data: { ...record.data, priority: 'high' } } });
    const created = await t.api('POST', '/records/', {
      body: {
        name: 'REQ-LATER',
        form: {},
        data: { name: 'Later' },
        context: { knowledge_unit_topic_id: revision },
      },
    });
    expect(created.status).toBe(201);
    await t.api('POST', '/traces/', {
      body: {
        source: { node_id: created.body._id, node_type: 'Record' },
        target: { node_id: ids[1], node_type: 'Record' },
        relation_type: 'is_related',
      },
    });
    expect((await t.api('DELETE', `/records/${ids[2]}`)).status).toBe(204);

    for (const format of FORMATS) {
      const out = join(dir, `again.${format}`);
      const result = await exportTo(out, format, '--kt', revision, '--as-of', moment);
      expect(result.code, result.stderr).toBe(0);
      expect(readFileSync(out).equals(taken[format]!), `${format} as of ${moment}`).toBe(true);
      const present = join(dir, `present.${format}`);
      expect((await exportTo(present, format, '--kt', revision)).code).toBe(0);
      if (format !== 'xlsx') expect(readFileSync(present).equals(taken[format]!), format).toBe(false);
    }
    const present = JSON.parse(readFileSync(join(dir, 'present.json'), 'utf8'));
    expect(present.topics[0].records.map((r: { id: string }) => r.id)).toContain(created.body._id);
  });

  it('rxs baseline create, list and show; export --baseline gives the same bytes before and after changes', async () => {
    const made = await rxs(
      ['baseline', 'create', 'v1.0'],
      '--kt',
      revision,
      '--description',
      'Design freeze',
      '--json',
    );
    expect(made.code, made.stderr).toBe(0);
    const baseline = JSON.parse(made.stdout);
    expect(baseline).toMatchObject({
      name: 'v1.0',
      description: 'Design freeze',
      knowledge_topic_revision_ids: [revision],
    });

    const again = await rxs(['baseline', 'create', 'v1.0'], '--kt', revision);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/v1\.0/);

    const list = await rxs(['baseline', 'list']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^v1\.0 {2}\S+ {2}1 topic\(s\) {2}Design freeze$/m);
    const show = await rxs(['baseline', 'show', baseline._id]);
    expect(show.stdout).toContain(`Baseline v1.0 (${baseline._id})`);
    const missing = await rxs(['baseline', 'show', 'v9.9']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/v9\.9/);

    // No --kt: the baseline names its topics.
    const before = join(dir, 'v1.0-before.reqif');
    const first = await exportTo(before, 'reqif', '--baseline', 'v1.0');
    expect(first.code, first.stderr).toBe(0);
    const record = (await t.api('GET', `/records/${ids[0]}`)).body;
    await t.api('PATCH', `/records/${ids[0]}`, { body: { data: { ...record.data, priority: 'medium' } } });
    const after = join(dir, 'v1.0-after.reqif');
    expect((await exportTo(after, 'reqif', '--baseline', 'v1.0')).code).toBe(0);
    expect(readFileSync(after).equals(readFileSync(before))).toBe(true);
    const both = await exportTo(join(dir, 'x.json'), 'json', '--baseline', 'v1.0', '--as-of', baseline.at);
    expect(both.code).toBe(1);
    expect(both.stderr).toMatch(/give one of them/);
  });

  it('rxs sync --since a baseline reports what changed from it to now, and writes no state', async () => {
    const record = (await t.api('GET', `/records/${ids[1]}`)).body;
    await t.api('PATCH', `/records/${ids[1]}`, { body: { data: { ...record.data, priority: 'low' } } });
    const report = join(dir, 'since-v1.0.json');
    const result = await rxs(
      ['sync'],
      '--quiet',
      '--since',
      'v1.0',
      '--format',
      'json',
      '--out',
      join(dir, 'since.json'),
      '--report',
      report,
      '--json',
      '--exit-code',
    );
    expect(result.code, result.stderr).toBe(2);
    const topic = JSON.parse(readFileSync(report, 'utf8')).topics[0];
    const changed = topic.changedRecords.map((r: { id: string }) => r.id);
    expect(changed).toContain(ids[0]);
    expect(changed).toContain(ids[1]);
    const withState = await rxs(
      ['sync'],
      '--since',
      'v1.0',
      '--state',
      join(dir, 'state'),
      '--out',
      join(dir, 's.json'),
    );
    expect(withState.code).toBe(1);
    expect(withState.stderr).toMatch(/leave out --state/);
  });
});
