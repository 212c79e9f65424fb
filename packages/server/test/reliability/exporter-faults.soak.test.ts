import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.js';
import {
  FAULTS,
  FaultProxy,
  TRANSIENT_FAULTS,
  type Fault,
  type ProxyRequest,
} from './support/fault-proxy.js';
import { rxsBin } from './support/process.js';
import { Prng } from './support/prng.js';
import { writeFigures } from './support/stats.js';

/**
 * The exporter under faults: `rxs export` and `rxs sync` (the built CLI, real processes) talk to
 * the service through a proxy that resets connections, stalls, answers 500/502/503/429, cuts and
 * corrupts bodies. Each run either completes with exactly the content of a fault-free run (after
 * retries) or fails with one clear message, leaving the previous output and sync state as they were
 * and no temporary file behind.
 */

const TIMEOUT_MS = '1000';

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

function runCli(args: string[], limitMs = 90_000): Promise<CliResult> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [rxsBin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`rxs ${args[0]} did not finish within ${limitMs} ms: ${stderr.slice(-2000)}`));
    }, limitMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: performance.now() - started });
    });
  });
}

/** Every file under a folder with its hash: equal before and after means nothing changed. */
function treeOf(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!existsSync(dir)) return out;
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else out[relative(dir, path)] = createHash('sha256').update(readFileSync(path)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

/** One clear message: `rxs: ...` on the last line, no stack trace. */
function expectClearFailure(result: CliResult, what: string): void {
  expect(result.code, `${what}: exit code; stderr: ${result.stderr.slice(-1500)}`).toBe(1);
  const lines = result.stderr.trim().split('\n');
  const last = lines[lines.length - 1]!;
  expect(last, what).toMatch(/^rxs: \S/);
  expect(last.length, what).toBeLessThan(1500);
  expect(result.stderr, `${what}: a stack trace`).not.toMatch(/\n\s+at .+:\d+:\d+/);
  expect(result.stderr, `${what}: the API key leaked`).not.toMatch(/rxs_[0-9a-f]{16}_[\w-]{43}/);
}

describe('the exporter behind a fault-injecting proxy', () => {
  let t: TestServer;
  let proxy: FaultProxy;
  let dir: string;
  let keyFile: string;
  let revisions: string[];
  let expected: unknown;
  const figures: Record<string, unknown> = {};

  const exportArgs = (out: string, extra: string[] = []) => [
    'export',
    '--url',
    proxy.url,
    '--api-key-file',
    keyFile,
    ...revisions.flatMap((r) => ['--kt', r]),
    '--traces',
    '--format',
    'json',
    '--out',
    out,
    '--timeout',
    TIMEOUT_MS,
    '--quiet',
    ...extra,
  ];
  const contentOf = (file: string) => {
    const parsed = JSON.parse(readFileSync(file, 'utf8'));
    delete parsed.exportedAt;
    return parsed;
  };
  const leftovers = (folder: string) => readdirSync(folder).filter((name) => name.endsWith('.tmp'));
  /** Faults the first attempt of every distinct request, so one retry always suffices. */
  const firstAttempts = (fault: Fault) => {
    const attempts = new Map<string, number>();
    return (request: ProxyRequest): Fault => {
      const key = `${request.method} ${request.url} ${request.body}`;
      const n = (attempts.get(key) ?? 0) + 1;
      attempts.set(key, n);
      return n === 1 ? fault : 'none';
    };
  };

  beforeAll(async () => {
    t = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), 'rxs-export-faults-'));
    keyFile = join(dir, 'owner.key');
    writeFileSync(keyFile, `${t.ownerKey}\n`, { mode: 0o600 });
    // A topic large enough for a streamed listing of several chunks and more than one trace batch.
    const draft = await t.api('POST', '/kt/', {
      body: {
        knowledge_topic_name: 'Faults',
        type: 'multi_record',
        knowledge_topic_schema: {
          components: [
            {
              type: 'textfield',
              id: 'Field_f1',
              key: 'title',
              label: 'Title',
              properties: { 'service-key': 'title' },
            },
            { type: 'textarea', id: 'Field_f2', key: 'body', label: 'Body' },
          ],
        },
      },
    });
    const topic = (await t.api('POST', `/kt/${draft.body._id}/approve`)).body._id as string;
    const prng = new Prng(99);
    const ids: string[] = [];
    for (let i = 0; i < 600; i++) {
      const res = await t.api('POST', '/records/', {
        body: {
          name: `F-${i}`,
          form: {},
          data: { title: `record ${i}`, body: prng.text(300) },
          context: { knowledge_unit_topic_id: topic },
        },
      });
      ids.push(res.body._id);
    }
    for (let i = 1; i < ids.length; i += 3) {
      await t.api('POST', '/traces/', {
        body: {
          source: { node_id: ids[i], node_type: 'Record' },
          target: { node_id: ids[i - 1], node_type: 'Record' },
          relation_type: 'is_related',
        },
      });
    }
    revisions = [topic, t.demo.tenant.topics.systemRequirements!.currentRevisionId];
    proxy = new FaultProxy(t.url);
    await proxy.listen();

    proxy.reset(() => 'none');
    const baseline = await runCli(exportArgs(join(dir, 'baseline.json')));
    expect(baseline.code, baseline.stderr).toBe(0);
    expected = contentOf(join(dir, 'baseline.json'));
    figures.baseline = { requests: proxy.seen.length, ms: Math.round(baseline.ms) };
    expect(proxy.seen.filter((s) => s.url.startsWith('/traces/batch/list')).length).toBeGreaterThan(1);
  }, 180_000);

  afterAll(async () => {
    writeFigures('exporter-faults', figures);
    await proxy?.close();
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('faults before any answer, on the first attempt of every request: retried to exactly the right content', async () => {
    const results: Record<string, unknown> = {};
    for (const fault of ['reset', 'stall', '500', '502', '503', '429'] as const) {
      const out = join(dir, `retried-${fault}.json`);
      proxy.reset(firstAttempts(fault));
      const result = await runCli(exportArgs(out));
      const injected = proxy.counts()[fault] ?? 0;
      results[fault] = {
        injected,
        requests: proxy.seen.length,
        ms: Math.round(result.ms),
        exit: result.code,
      };
      expect(result.code, `${fault}: ${result.stderr.slice(-1500)}`).toBe(0);
      expect(injected, fault).toBeGreaterThanOrEqual(5);
      expect(result.stderr, fault).toMatch(/retrying/);
      expect(contentOf(out), `${fault}: the export differs from a fault-free one`).toEqual(expected);
      expect(leftovers(dir), fault).toEqual([]);
    }
    figures.retriedBeforeAnswer = results;
  }, 300_000);

  it('bodies cut, stalled or reset midway: retried to exactly the right content (KT and trace batches), or a clean failure (a listing midway)', async () => {
    const results: Record<string, unknown> = {};
    for (const fault of ['reset-mid-body', 'stall-mid-body', 'truncate', 'cut-clean'] as const) {
      // Single answers (the KT, each trace batch): the client must retry its way through.
      const plan = firstAttempts(fault);
      proxy.reset((r) => (r.url.startsWith('/records/') ? 'none' : plan(r)));
      const out = join(dir, `retried-${fault}.json`);
      const result = await runCli(exportArgs(out));
      const injected = proxy.counts()[fault] ?? 0;
      expect(result.code, `${fault}: ${result.stderr.slice(-1500)}`).toBe(0);
      expect(injected, fault).toBeGreaterThanOrEqual(3);
      expect(contentOf(out), `${fault}: the export differs from a fault-free one`).toEqual(expected);

      // The streamed listing cut after some records: complete and exact, or a clean failure.
      proxy.reset(firstAttempts(fault));
      const listingOut = join(dir, `listing-${fault}.json`);
      writeFileSync(listingOut, 'the previous export\n');
      const listing = await runCli(exportArgs(listingOut));
      if (listing.code === 0) {
        expect(contentOf(listingOut), `${fault} in a listing: the export differs`).toEqual(expected);
      } else {
        expectClearFailure(listing, `${fault} in a listing`);
        expect(readFileSync(listingOut, 'utf8'), fault).toBe('the previous export\n');
      }
      expect(leftovers(dir), fault).toEqual([]);
      results[fault] = {
        singleAnswers: { injected, exit: result.code, ms: Math.round(result.ms) },
        listingMidway: {
          exit: listing.code,
          message: listing.code ? listing.stderr.trim().split('\n').pop() : undefined,
        },
      };
    }
    figures.retriedMidBody = results;
  }, 300_000);

  it('a fault on every request: one clear message, the previous output untouched, nothing left behind', async () => {
    const results: Record<string, unknown> = {};
    for (const fault of FAULTS) {
      const out = join(dir, `failing-${fault}.json`);
      writeFileSync(out, 'the previous export\n');
      proxy.reset(() => fault);
      const result = await runCli(exportArgs(out, ['--retries', '2']));
      const message = result.stderr.trim().split('\n').pop();
      results[fault] = { exit: result.code, ms: Math.round(result.ms), requests: proxy.seen.length, message };
      expectClearFailure(result, fault);
      expect(readFileSync(out, 'utf8'), fault).toBe('the previous export\n');
      expect(leftovers(dir), fault).toEqual([]);
      // Bounded: three attempts of the first request, then it gives up.
      expect(proxy.seen.length, fault).toBeLessThanOrEqual(3 * 4);
    }
    figures.persistent = results;
  }, 300_000);

  it('random faults of every kind, run after run: exact content or a clean failure, never anything between', async () => {
    const outcomes: { seed: number; exit: number | null; injected: Record<string, number> }[] = [];
    for (let seed = 1; seed <= 8; seed++) {
      const prng = new Prng(seed * 7919);
      proxy.reset(() => (prng.chance(0.2) ? prng.pick(FAULTS) : 'none'));
      const out = join(dir, `random-${seed}.json`);
      writeFileSync(out, 'the previous export\n');
      const result = await runCli(exportArgs(out));
      const { none: _none, ...injected } = proxy.counts();
      outcomes.push({ seed, exit: result.code, injected });
      if (result.code === 0) {
        expect(contentOf(out), `seed ${seed}: the export differs from a fault-free one`).toEqual(expected);
      } else {
        expectClearFailure(result, `seed ${seed}`);
        expect(readFileSync(out, 'utf8'), `seed ${seed}`).toBe('the previous export\n');
      }
      expect(leftovers(dir), `seed ${seed}`).toEqual([]);
    }
    figures.random = {
      runs: outcomes.length,
      completed: outcomes.filter((o) => o.exit === 0).length,
      failedCleanly: outcomes.filter((o) => o.exit !== 0).length,
      outcomes,
    };
  }, 400_000);

  it('rxs sync: a failed run leaves the snapshot and the output as they were; a later run catches up', async () => {
    const state = join(dir, 'sync-state');
    const out = join(dir, 'sync-out.json');
    const syncArgs = [
      'sync',
      '--url',
      proxy.url,
      '--api-key-file',
      keyFile,
      '--kt',
      revisions[0]!,
      '--traces',
      '--state',
      state,
      '--format',
      'json',
      '--out',
      out,
      '--timeout',
      TIMEOUT_MS,
      '--retries',
      '2',
      '--quiet',
      '--json',
    ];
    proxy.reset(() => 'none');
    const first = await runCli(syncArgs);
    expect(first.code, first.stderr).toBe(0);
    const before = { state: treeOf(state), out: readFileSync(out, 'utf8') };
    expect(Object.keys(before.state).length).toBeGreaterThan(0);

    // Something changes on the service; then every run fails in another way.
    const added = await t.api('POST', '/records/', {
      body: {
        name: 'F-new',
        form: {},
        data: { title: 'added' },
        context: { knowledge_unit_topic_id: revisions[0] },
      },
    });
    expect(added.status).toBe(201);
    const failures: Record<string, unknown> = {};
    for (const fault of ['503', 'reset', 'stall', 'truncate', 'cut-clean', 'corrupt'] as const) {
      // The first requests pass, so the failure comes in the middle of the run.
      proxy.reset((r) => (r.index < 2 ? 'none' : fault));
      const result = await runCli(syncArgs);
      failures[fault] = { exit: result.code, message: result.stderr.trim().split('\n').pop() };
      expectClearFailure(result, `sync under ${fault}`);
      expect(treeOf(state), `sync under ${fault}: the snapshot moved`).toEqual(before.state);
      expect(readFileSync(out, 'utf8'), `sync under ${fault}: the output changed`).toBe(before.out);
      expect(leftovers(dir), fault).toEqual([]);
    }
    // Recoverable faults: the run completes and reports exactly the change made meanwhile.
    proxy.reset(firstAttempts('503'));
    const recovered = await runCli(syncArgs);
    expect(recovered.code, recovered.stderr).toBe(0);
    const report = JSON.parse(recovered.stdout);
    expect(report.changed).toBe(true);
    expect(JSON.stringify(report.changes)).toMatch(/added/);
    expect(readFileSync(out, 'utf8')).toContain(added.body._id);
    expect(treeOf(state)).not.toEqual(before.state);
    figures.sync = { failures, recovered: { exit: recovered.code, changes: report.changes } };
  }, 300_000);

  it('rxs sync killed at any moment of a spliced poll (csv, the snapshot a base with an overlay): the next run ends exactly where a full export is', async () => {
    const state = join(dir, 'kill-state');
    const out = join(dir, 'kill.csv');
    const topic = revisions[0]!;
    const syncArgs = [
      'sync',
      '--url',
      t.url,
      '--api-key-file',
      keyFile,
      '--kt',
      topic,
      '--state',
      state,
      '--format',
      'csv',
      '--out',
      out,
      '--quiet',
      '--json',
    ];
    const prng = new Prng(7);
    const listed = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${topic}`);
    const ids = (listed.body as { _id: string }[]).map((r) => r._id);
    const change = async (round: number) => {
      for (let i = 0; i < 6; i++) {
        const id = ids[Math.floor(prng.next() * ids.length)]!;
        const res = await t.api('PATCH', `/records/${id}`, {
          body: { data: { title: `changed in round ${round}`, body: prng.text(200) } },
        });
        expect(res.status).toBe(200);
      }
    };
    /** The CSV a fresh full export writes now: what every completed sync must leave. */
    const exported = async () => {
      const file = join(dir, 'kill-expected.csv');
      const result = await runCli([
        'export',
        ...syncArgs.slice(1, 7),
        '--format',
        'csv',
        '--out',
        file,
        '--quiet',
      ]);
      expect(result.code, result.stderr).toBe(0);
      return readFileSync(file, 'utf8');
    };
    const overlays = () =>
      (JSON.parse(readFileSync(join(state, 'state.json'), 'utf8')).topics as { overlay?: string }[]).filter(
        (entry) => entry.overlay !== undefined,
      ).length;
    // A full run, then a first spliced poll (which walks the rows and writes the row index).
    for (let round = 0; round < 2; round++) {
      if (round > 0) await change(round);
      const result = await runCli(syncArgs);
      expect(result.code, result.stderr).not.toBe(1);
    }
    let killedMidRun = 0;
    let layered = 0;
    for (let round = 2; round < 14; round++) {
      await change(round);
      // Killed somewhere between its start-up and its commit (a poll here takes a few hundred ms).
      const child = spawn(process.execPath, [rxsBin, ...syncArgs], { stdio: 'ignore' });
      const delay = 150 + Math.floor(prng.next() * 500);
      const exited = await Promise.race([
        new Promise<boolean>((resolve) => child.once('exit', () => resolve(true))),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), delay)),
      ]);
      if (!exited) {
        killedMidRun++;
        child.kill('SIGKILL');
        await new Promise((resolve) => child.once('exit', resolve));
      }
      // The next run takes the lock the killed one left, and ends where a full export is.
      const result = await runCli(syncArgs);
      expect([0, 2], result.stderr).toContain(result.code);
      expect(readFileSync(out, 'utf8'), `round ${round}`).toBe(await exported());
      layered += overlays() > 0 ? 1 : 0;
      const entries = readdirSync(state);
      expect(
        entries.filter((name) => name.startsWith('gen-')),
        `round ${round}`,
      ).toHaveLength(1);
      // The output's temporary files go at once (the next sync holds the lock over it); the state
      // folder's may belong to a writer finishing after the lock's release, so they go once a day
      // old: aged here, the next run removes them.
      expect(leftovers(dir)).toEqual([]);
      const dayOld = (Date.now() - 25 * 3600_000) / 1000;
      for (const name of leftovers(state)) utimesSync(join(state, name), dayOld, dayOld);
      // And a poll right after it finds nothing changed (by the tags, or by comparing).
      const again = await runCli(syncArgs);
      expect(again.code, again.stderr).toBe(0);
      expect(leftovers(state), `round ${round}`).toEqual([]);
      const answer = JSON.parse(again.stdout) as { unchanged?: boolean; changed?: boolean };
      expect(answer.unchanged === true || answer.changed === false, again.stdout.slice(0, 300)).toBe(true);
    }
    expect(killedMidRun).toBeGreaterThan(3);
    expect(layered).toBeGreaterThan(3);
    figures.killedSync = { rounds: 12, killedMidRun, layered };
  }, 300_000);
});
