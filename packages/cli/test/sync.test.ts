import { execFileSync, spawn } from 'node:child_process';
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/harness.js';
import { cliBin, runCli } from './run-cli.js';

describe('rxs sync: polling and comparing snapshots', () => {
  let t: TestServer;
  let dir: string;
  let keyFile: string;
  let revision: string;
  const state = () => join(dir, 'state');
  const sync = (...args: string[]) =>
    runCli([
      'sync',
      '--url',
      t.url,
      '--api-key-file',
      keyFile,
      '--quiet',
      '--state',
      state(),
      '--traces',
      '--json',
      '--exit-code',
      ...args,
    ]);

  /** A CSV sync of the topic without --traces (the helper's), so that its output could be spliced. */
  const csvSync = (stateDir: string, out: string) =>
    runCli(
      [
        'sync',
        '--url',
        t.url,
        '--api-key-file',
        keyFile,
        '--json',
        '--state',
        stateDir,
        '--kt',
        revision,
      ].concat(['--format', 'csv', '--out', out]),
    );

  beforeAll(async () => {
    t = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), 'rxs-sync-'));
    keyFile = join(dir, 'owner.key');
    writeFileSync(keyFile, `${t.ownerKey}\n`);
    revision = t.demo.tenant.topics.systemRequirements!.currentRevisionId;
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a named pipe as --out gets the whole output at every run, also when nothing changed, and stays a pipe', async () => {
    const fifo = join(dir, 'pipe.csv');
    execFileSync('mkfifo', [fifo]);
    const pipeState = join(dir, 'pipe-state');
    for (const run of [1, 2]) {
      // The program at the other end, reading the pipe.
      const reader = spawn('cat', [fifo]);
      let read = '';
      reader.stdout.on('data', (chunk: Buffer) => (read += chunk.toString()));
      const done = new Promise((resolve) => reader.on('close', resolve));
      const result = await csvSync(pipeState, fifo);
      await done;
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout).poll, `run ${run}`).toBe('full');
      expect(read.split('\n')[0]).toMatch(/^\ufeff_id,readable_id,/);
      expect(lstatSync(fifo).isFIFO()).toBe(true);
    }
    // No row index is kept for an output that cannot be spliced.
    const generation = readdirSync(pipeState).find((name) => name.startsWith('gen-'))!;
    expect(readdirSync(join(pipeState, generation)).filter((name) => name.endsWith('.rows'))).toEqual([]);
  });

  it('an output link pointed at another file between polls (same size and time) makes a full poll, not one spliced from that file', async () => {
    const folder = join(dir, 'retarget');
    mkdirSync(folder);
    const link = join(folder, 'out.csv');
    symlinkSync('a.csv', link);
    const poll = () => csvSync(join(folder, 'state'), link);
    const id = t.demo.tenant.topics.systemRequirements!.recordIds[0]!;
    const original = (await t.api('GET', `/records/${id}`)).body as { data: Record<string, unknown> };
    const change = (priority: unknown) =>
      t.api('PATCH', `/records/${id}`, { body: { data: { ...original.data, priority } } });
    expect((await poll()).code).toBe(0);
    await change('high');
    // Control: the output untouched, the poll is spliced.
    const spliced = await poll();
    expect(JSON.parse(spliced.stdout).poll, spliced.stderr).toBe('spliced');
    // b.csv: a.csv with one cell edited, the same size and modification time.
    const a = readFileSync(join(folder, 'a.csv'), 'utf8');
    const edited = a.replace(/(\n[^\n]*?)high/, '$1HIGH');
    expect(edited).not.toBe(a);
    writeFileSync(join(folder, 'b.csv'), edited);
    const { atime, mtime } = statSync(join(folder, 'a.csv'));
    utimesSync(join(folder, 'b.csv'), atime, mtime);
    rmSync(link);
    symlinkSync('b.csv', link);
    await change('low');
    const after = await poll();
    expect(after.code, after.stderr).toBe(0);
    expect(JSON.parse(after.stdout).poll).toBe('full');
    const full = await runCli(
      [
        'export',
        '--url',
        t.url,
        '--api-key-file',
        keyFile,
        '--quiet',
        '--kt',
        revision,
        '--format',
        'csv',
      ].concat(['--out', join(folder, 'full.csv')]),
    );
    expect(full.code, full.stderr).toBe(0);
    expect(readFileSync(join(folder, 'b.csv'), 'utf8')).toBe(readFileSync(join(folder, 'full.csv'), 'utf8'));
    await change(original.data.priority); // as the other tests expect it
  });

  it('first run: everything added, exit 2; unchanged: exit 0', async () => {
    const first = await sync('--kt', revision, '--format', 'csv', '--out', join(dir, 'reqs.csv'));
    expect(first.code, first.stderr).toBe(2);
    expect(JSON.parse(first.stdout).changes.records.added).toBe(4);
    const second = await sync('--kt', revision, '--format', 'csv', '--out', join(dir, 'reqs.csv'));
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout).changed).toBe(false);
  });

  it('reports created, edited and deleted records with field-level differences, and trace changes', async () => {
    const ids = t.demo.tenant.topics.systemRequirements!.recordIds;
    const created = await t.api('POST', '/records/', {
      body: {
        name: 'REQ-NEW',
        form: {},
        data: { name: 'New', priority: 'low' },
        context: { knowledge_unit_topic_id: revision },
      },
    });
    const current = await t.api('GET', `/records/${ids[0]}`);
    await t.api('PATCH', `/records/${ids[0]}`, { body: { data: { ...current.body.data, priority: 'low' } } });
    await t.api('DELETE', `/records/${ids[3]}`);
    await t.api('POST', '/traces/', {
      body: {
        source: { node_id: created.body._id, node_type: 'Record' },
        target: { node_id: ids[1], node_type: 'Record' },
        relation_type: 'is_related',
      },
    });

    const result = await sync('--kt', revision, '--format', 'csv', '--out', join(dir, 'reqs.csv'));
    expect(result.code, result.stderr).toBe(2);
    const reportPath = JSON.parse(result.stdout).report as string;
    const report = JSON.parse(readFileSync(reportPath, 'utf8'));
    const topic = report.topics[0];
    expect(topic.added.map((r: { id: string }) => r.id)).toEqual([created.body._id]);
    expect(topic.removed.map((r: { id: string }) => r.id)).toEqual([ids[3]]);
    expect(topic.changedRecords).toHaveLength(1);
    expect(topic.changedRecords[0].fields).toContainEqual({
      field: 'Priority',
      change: 'modified',
      before: 'high',
      after: 'low',
    });
    expect(report.traces.added).toHaveLength(1);
    // The deleted record's trace went with it.
    expect(report.traces.removed.length).toBeGreaterThanOrEqual(0);
    const csv = readFileSync(join(dir, 'reqs.csv'), 'utf8');
    expect(csv).toContain('REQ-NEW');
    expect(csv).not.toContain(ids[3]);
  });

  it('a re-approval stops the sync with a clear message; --follow-latest switches and reports it', async () => {
    const draft = await t.api('POST', `/kt/${revision}/draft`);
    await t.api('PATCH', `/kt/${draft.body._id}`, {
      body: {
        knowledge_topic_schema: {
          ...draft.body.knowledge_topic_schema,
          components: draft.body.knowledge_topic_schema.components.map((c: any) =>
            c.key === 'priority' ? { ...c, label: 'Criticality' } : c,
          ),
        },
      },
    });
    await t.api('POST', `/kt/${draft.body._id}/approve`);
    const before = readFileSync(join(state(), 'state.json'), 'utf8');

    const stopped = await sync('--kt', revision, '--format', 'csv', '--out', join(dir, 'reqs.csv'));
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toContain('re-approved');
    expect(stopped.stderr).toContain(draft.body._id);
    expect(readFileSync(join(state(), 'state.json'), 'utf8')).toBe(before);

    const followed = await sync(
      '--kt',
      revision,
      '--follow-latest',
      '--format',
      'csv',
      '--out',
      join(dir, 'reqs.csv'),
    );
    expect(followed.code, followed.stderr).toBe(2);
    const report = JSON.parse(readFileSync(JSON.parse(followed.stdout).report, 'utf8'));
    expect(report.topics[0]).toMatchObject({
      reapproved: true,
      revisionId: draft.body._id,
      previousRevisionId: revision,
    });
    expect(report.topics[0].schema.fieldsRenamed).toContainEqual({
      key: 'priority',
      before: 'Priority',
      after: 'Criticality',
    });
    expect(report.topics[0].changedRecords).toEqual([]);
    revision = draft.body._id;
  });

  it('a failed run leaves the output and the snapshot untouched', async () => {
    const out = join(dir, 'reqs.csv');
    const [outBefore, stateBefore] = [
      readFileSync(out, 'utf8'),
      readFileSync(join(state(), 'state.json'), 'utf8'),
    ];
    await t.api('POST', '/records/', {
      body: { name: 'REQ-LATE', form: {}, data: {}, context: { knowledge_unit_topic_id: revision } },
    });
    const failed = await runCli([
      'sync',
      '--techdoc-url',
      t.url,
      '--records-url',
      'http://127.0.0.1:1',
      '--tracer-url',
      t.url,
      '--api-key-file',
      keyFile,
      '--state',
      state(),
      '--kt',
      revision,
      '--format',
      'csv',
      '--out',
      out,
      '--retries',
      '0',
    ]);
    expect(failed.code).toBe(1);
    expect(readFileSync(out, 'utf8')).toBe(outBefore);
    expect(readFileSync(join(state(), 'state.json'), 'utf8')).toBe(stateBefore);
    expect(readdirSync(dir).filter((f) => f.includes('.tmp'))).toEqual([]);
    const next = await sync('--kt', revision, '--format', 'csv', '--out', out);
    expect(next.code).toBe(2);
    expect(
      JSON.parse(readFileSync(JSON.parse(next.stdout).report, 'utf8')).topics[0].added.map(
        (r: { name: string }) => r.name,
      ),
    ).toEqual(['REQ-LATE']);
  });

  it('--on-change runs a command with the report', async () => {
    await t.api('POST', '/records/', {
      body: { name: 'REQ-HOOK', form: {}, data: {}, context: { knowledge_unit_topic_id: revision } },
    });
    const marker = join(dir, 'hook.out');
    const result = await sync(
      '--kt',
      revision,
      '--on-change',
      `cat > ${marker}; echo "$RXS_REPORT" >> ${marker}`,
    );
    expect(result.code, result.stderr).toBe(2);
    const written = readFileSync(marker, 'utf8');
    expect(written).toContain('REQ-HOOK');
    expect(written).toContain(join(state(), 'reports'));
  });

  it('--watch polls on a schedule until stopped', async () => {
    const watchState = join(dir, 'watch-state');
    const child = spawn(
      cliBin,
      [
        'sync',
        '--url',
        t.url,
        '--api-key-file',
        keyFile,
        '--state',
        watchState,
        '--kt',
        revision,
        '--watch',
        '--interval',
        '300ms',
        '--json',
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    // Stop once a few runs have reported (each run prints one JSON document).
    for (let waited = 0; waited < 20_000 && (stdout.match(/^\{/gm) ?? []).length < 3; waited += 100) {
      await new Promise((r) => setTimeout(r, 100));
    }
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const runs = stdout
      .split(/\n(?=\{)/)
      .filter((s) => s.trim())
      .map((s) => JSON.parse(s));
    expect(runs.length).toBeGreaterThanOrEqual(2);
    expect(runs[0].changed).toBe(true);
    expect(runs.slice(1).every((r: { changed: boolean }) => !r.changed)).toBe(true);
    expect(stderr).toMatch(/stopped after \d+ runs/);
  });
});
