import { createServer, request as httpRequest, type Server } from 'node:http';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tempPath } from '@rxs/exchange/export';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/harness.js';
import { protectedText } from '../../exchange/src/export/writers/csv-text.js';
import { pythonCsvRows } from '../../exchange/test/support/spreadsheet-readers.js';
import { runCli } from './run-cli.js';

interface Seen {
  method: string;
  url: string;
  conditional: boolean;
  status: number;
  /** The request body, as text. */
  body: string;
}

/**
 * A proxy in front of the service that notes every request (to see what a sync downloads) and, as
 * `plain`, removes the ETags: the service as it was published, without conditional requests.
 */
async function startProxy(target: string, options: { plain: boolean }) {
  const seen: Seen[] = [];
  const upstream = new URL(target);
  const server: Server = createServer((req, res) => {
    const headers = { ...req.headers, host: upstream.host };
    const body: Buffer[] = [];
    req.on('data', (chunk: Buffer) => body.push(chunk));
    if (options.plain) delete headers['if-none-match'];
    const forward = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers },
      (answer) => {
        seen.push({
          method: req.method!,
          url: req.url!,
          conditional: req.headers['if-none-match'] !== undefined,
          status: answer.statusCode!,
          body: Buffer.concat(body).toString('utf8'),
        });
        const out = { ...answer.headers };
        if (options.plain) delete out.etag;
        res.writeHead(answer.statusCode!, out);
        answer.pipe(res);
      },
    );
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    seen,
    take: () => seen.splice(0, seen.length),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('rxs sync: an unchanged poll downloads nothing', () => {
  let t: TestServer;
  let dir: string;
  let keyFile: string;
  let revision: string;
  let ids: string[];
  let tagged: Awaited<ReturnType<typeof startProxy>>;
  let plain: Awaited<ReturnType<typeof startProxy>>;
  const sync = (url: string, name: string, ...args: string[]) =>
    runCli([
      'sync',
      '--url',
      url,
      '--api-key-file',
      keyFile,
      '--quiet',
      '--state',
      join(dir, `${name}.state`),
      '--kt',
      revision,
      '--traces',
      '--format',
      'csv',
      '--out',
      join(dir, `${name}.csv`),
      '--json',
      '--exit-code',
      ...args,
    ]);
  const reports = (name: string) => {
    const folder = join(dir, `${name}.state`, 'reports');
    return existsSync(folder) ? readdirSync(folder).length : 0;
  };

  /**
   * What a snapshot holds: each topic's records, as lines sorted by id (a spliced poll's base read
   * through its overlay, as the state's format describes), and its trace files (the generation's
   * name and times differ).
   */
  const snapshot = (name: string) => {
    const stateDir = join(dir, `${name}.state`);
    const state = JSON.parse(readFileSync(join(stateDir, 'state.json'), 'utf8'));
    const folder = join(stateDir, state.generation);
    const lines = (file: string) => readFileSync(join(folder, file), 'utf8').split('\n').filter(Boolean);
    const records = (topic: { file: string; overlay?: string }) => {
      const byId = new Map(lines(topic.file).map((line) => [JSON.parse(line).id as string, line]));
      for (const line of topic.overlay === undefined ? [] : lines(topic.overlay)) {
        const value = JSON.parse(line);
        if (Object.keys(value).join() === 'id,gone' && value.gone === true) byId.delete(value.id);
        else byId.set(value.id, line);
      }
      return [...byId.keys()].sort().map((id) => byId.get(id));
    };
    type Topic = { historyId: string; recordCount: number; fields: unknown; file: string; overlay?: string };
    return {
      topics: state.topics.map((x: Topic) => [x.historyId, x.recordCount, x.fields, records(x)]),
      files: Object.fromEntries(
        readdirSync(folder)
          // A spliced poll's row index (where each record's row is in its output): its own.
          .filter((file) => !file.endsWith('.rows') && !file.startsWith('topic-'))
          .sort()
          .map((file) => [file, readFileSync(join(folder, file), 'utf8')]),
      ),
    };
  };
  /** The newest report, without its moments, its state folder's name and the proxy's address. */
  const report = (name: string, url: string) => {
    const folder = join(dir, `${name}.state`, 'reports');
    const newest = readdirSync(folder).sort().pop()!;
    const text = readFileSync(join(folder, newest), 'utf8')
      .split(`${name}.state`)
      .join('<STATE>')
      .split(url)
      .join('<URL>');
    const { exportedAt: _a, previousExportedAt: _b, ...rest } = JSON.parse(text);
    return rest;
  };

  beforeAll(async () => {
    t = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), 'rxs-sync-probe-'));
    keyFile = join(dir, 'owner.key');
    writeFileSync(keyFile, `${t.ownerKey}\n`);
    revision = t.demo.tenant.topics.systemRequirements!.currentRevisionId;
    ids = t.demo.tenant.topics.systemRequirements!.recordIds;
    tagged = await startProxy(t.url, { plain: false });
    plain = await startProxy(t.url, { plain: true });
  });
  afterAll(async () => {
    await tagged?.close();
    await plain?.close();
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('asks with its tags and, when nothing changed, leaves output, snapshot and reports untouched', async () => {
    const first = await sync(tagged.url, 'a');
    expect(first.code, first.stderr).toBe(2);
    expect(existsSync(join(dir, 'a.state', 'probe.json'))).toBe(true);
    tagged.take();
    const out = statSync(join(dir, 'a.csv'));
    const state = readFileSync(join(dir, 'a.state', 'state.json'));

    const second = await sync(tagged.url, 'a');
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ changed: false, unchanged: { checkedBy: 'etag' } });
    const asked = tagged.take();
    // Two conditional requests (the listing with its revision, the traces), both "unchanged", nothing else.
    expect(asked.map((r) => [r.method, r.conditional, r.status])).toEqual([
      ['GET', true, 304],
      ['POST', true, 412],
    ]);
    expect(asked[0]!.url).toContain('with_revision=true');
    expect(statSync(join(dir, 'a.csv')).mtimeMs).toBe(out.mtimeMs);
    expect(readFileSync(join(dir, 'a.state', 'state.json')).equals(state)).toBe(true);
    expect(reports('a')).toBe(1);

    // What a run killed after its commit left (a report being written, the feed cache being
    // renamed) goes with the next poll a day later, even one that finds nothing changed.
    const dayAgo = (Date.now() - 25 * 60 * 60 * 1000) / 1000;
    const report = tempPath(join(dir, 'a.state', 'reports', '2026-11-27T00-00-00.000Z.json'));
    writeFileSync(report, '{"half":');
    const feed = tempPath(join(dir, 'a.state', 'feed'));
    mkdirSync(feed);
    for (const left of [report, feed]) utimesSync(left, dayAgo, dayAgo);
    const third = await sync(tagged.url, 'a');
    expect(JSON.parse(third.stdout)).toMatchObject({ changed: false, unchanged: { checkedBy: 'etag' } });
    expect(readdirSync(join(dir, 'a.state')).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    expect(readdirSync(join(dir, 'a.state', 'reports')).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    tagged.take();
  });

  it('a changed record, a new trace or a re-touched output file make a full sync; each path gives the same files', async () => {
    // The same changes seen through the service with ETags (a) and without (b).
    expect((await sync(plain.url, 'b')).code).toBe(2);
    expect(existsSync(join(dir, 'b.state', 'probe.json'))).toBe(false);
    const same = () =>
      expect(readFileSync(join(dir, 'a.csv')).equals(readFileSync(join(dir, 'b.csv')))).toBe(true);
    same();

    const record = (await t.api('GET', `/records/${ids[0]}`)).body;
    await t.api('PATCH', `/records/${ids[0]}`, { body: { data: { ...record.data, priority: 'low' } } });
    const [a1, b1] = [await sync(tagged.url, 'a'), await sync(plain.url, 'b')];
    expect([a1.code, b1.code]).toEqual([2, 2]);
    expect(JSON.parse(a1.stdout).changes).toEqual(JSON.parse(b1.stdout).changes);
    same();
    expect(
      tagged.take().some((r) => r.method === 'GET' && !r.conditional && r.url.startsWith('/records/?')),
    ).toBe(true);

    await t.api('POST', '/traces/', {
      body: {
        source: { node_id: ids[1], node_type: 'Record' },
        target: { node_id: ids[2], node_type: 'Record' },
        relation_type: 'mentions',
      },
    });
    const [a2, b2] = [await sync(tagged.url, 'a'), await sync(plain.url, 'b')];
    expect([a2.code, b2.code]).toEqual([2, 2]);
    expect(JSON.parse(a2.stdout).changes.traces).toMatchObject({ added: 1 });
    same();

    // Nothing changed: (a) asks and stops, (b) downloads and compares; both exit 0 with the same file.
    tagged.take();
    plain.take();
    const [a3, b3] = [await sync(tagged.url, 'a'), await sync(plain.url, 'b')];
    expect([a3.code, b3.code]).toEqual([0, 0]);
    expect(tagged.take()).toHaveLength(2);
    expect(plain.take().length).toBeGreaterThan(3);
    same();

    // Someone edited the output: a full sync writes it again.
    writeFileSync(join(dir, 'a.csv'), 'edited by hand\n');
    expect((await sync(tagged.url, 'a')).code).toBe(0);
    same();
    // Other options (here the format) are another export: a full sync.
    tagged.take();
    const relabelled = await sync(tagged.url, 'a', '--labels');
    expect(relabelled.stderr).toBe('');
    expect(tagged.take().length).toBeGreaterThan(3);
  });

  it('after random changes, the changes feed (a) and full downloads (b) give the same outputs, snapshots and reports', async () => {
    const draft = await t.api('POST', '/kt/', {
      body: {
        knowledge_topic_name: 'Feed sync',
        type: 'multi_record',
        knowledge_topic_schema: {
          components: [
            { type: 'textfield', key: 'title', label: 'Title' },
            { type: 'textarea', key: 'text', label: 'Text' },
          ],
        },
      },
    });
    const topic = (await t.api('POST', `/kt/${draft.body._id}/approve`)).body._id as string;
    const live: string[] = [];
    const deleted: string[] = [];
    // Names and titles stay unique: records get distinct readable ids (duplicates are an export error).
    let made = 0;
    const create = async (text: string) => {
      const res = await t.api('POST', '/records/', {
        body: {
          name: `R${++made} ${text}`.slice(0, 40),
          form: {},
          data: { title: `T${made} ${text}`, text },
          context: { knowledge_unit_topic_id: topic },
        },
      });
      expect(res.status, res.text).toBe(201);
      live.push(res.body._id);
    };
    for (const text of ['one', 'two', 'three', 'four']) await create(text);
    const run = (url: string, name: string) =>
      runCli([
        'sync',
        '--url',
        url,
        '--api-key-file',
        keyFile,
        '--quiet',
        '--state',
        join(dir, `${name}.state`),
        '--kt',
        topic,
        '--traces',
        '--format',
        'csv',
        '--out',
        join(dir, `${name}.csv`),
        '--json',
      ]);
    const compare = async () => {
      tagged.take();
      const [a, b] = [await run(tagged.url, 'feed-a'), await run(plain.url, 'feed-b')];
      expect([a.code, a.stderr]).toEqual([0, '']);
      expect([b.code, b.stderr]).toEqual([0, '']);
      const [ja, jb] = [JSON.parse(a.stdout), JSON.parse(b.stdout)];
      // Nothing changed: (a) learns it from the tags, (b) by comparing; else the same changes.
      if (ja.unchanged) expect(jb.changed).toBe(false);
      else expect(ja.changes).toEqual(jb.changes);
      expect(readFileSync(join(dir, 'feed-a.csv'), 'utf8')).toBe(
        readFileSync(join(dir, 'feed-b.csv'), 'utf8'),
      );
      expect(snapshot('feed-a')).toEqual(snapshot('feed-b'));
      if (!ja.unchanged) expect(report('feed-a', tagged.url)).toEqual(report('feed-b', plain.url));
      return tagged.take();
    };
    await compare();

    let viaFeed = 0;
    let tracesViaFeed = 0;
    const links: string[] = [];
    const outside = t.demo.tenant.topics.verificationTests!.recordIds;
    const link = async (from: string, to: string) => {
      const res = await t.api('POST', '/traces/', {
        body: {
          source: { node_id: from, node_type: 'Record' },
          target: { node_id: to, node_type: 'Record' },
          relation_type: 'mentions',
        },
      });
      if (res.status === 201) links.push(res.body._id);
    };
    const text = fc.string({ unit: fc.constantFrom('a', 'Z', ' ', '\n', '"', ',', 'é', '<'), maxLength: 10 });
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            fc.record({ kind: fc.constant('create' as const), text }),
            fc.record({ kind: fc.constant('update' as const), pick: fc.nat(), text }),
            fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }),
            fc.record({ kind: fc.constant('restore' as const), pick: fc.nat() }),
            fc.record({ kind: fc.constant('link' as const), pick: fc.nat() }),
            fc.record({ kind: fc.constant('link-out' as const), pick: fc.nat() }),
            fc.record({ kind: fc.constant('unlink' as const), pick: fc.nat() }),
          ),
          { minLength: 1, maxLength: 4 },
        ),
        async (steps) => {
          for (const s of steps) {
            if (s.kind === 'create') await create(s.text);
            else if (s.kind === 'update' && live.length) {
              const id = live[s.pick % live.length]!;
              await t.api('PATCH', `/records/${id}`, {
                body: { data: { title: `T${++made} ${s.text}`, text: `${s.text}\n${s.text}` } },
              });
            } else if (s.kind === 'delete' && live.length > 1) {
              const [id] = live.splice(s.pick % live.length, 1);
              await t.api('DELETE', `/records/${id}`);
              deleted.push(id!);
            } else if (s.kind === 'restore' && deleted.length) {
              const [id] = deleted.splice(s.pick % deleted.length, 1);
              await t.api('POST', `/records/${id}/restore`);
              live.push(id!);
            } else if (s.kind === 'link' && live.length > 1) {
              await link(live[s.pick % live.length]!, live[(s.pick + 1) % live.length]!);
            } else if (s.kind === 'link-out' && live.length) {
              // To a record of another topic: exported, as a trace with one end in the topic.
              await link(outside[s.pick % outside.length]!, live[s.pick % live.length]!);
            } else if (s.kind === 'unlink' && links.length) {
              const [id] = links.splice(s.pick % links.length, 1);
              await t.api('DELETE', `/traces/${id}`);
            }
          }
          const asked = await compare();
          // (a) read the changes, not the whole listing, whenever its records changed; and the
          // trace changes, never the traces of every record.
          const listed = asked.filter((r) => r.url.startsWith('/records/?') && !r.url.includes('limit=1'));
          const fed = asked.filter((r) => r.url.startsWith('/records/changes?') && r.url.includes('since='));
          const tracesFed = asked.filter((r) => r.url.startsWith('/traces/changes?since='));
          if (fed.length > 0) viaFeed++;
          if (tracesFed.length > 0) tracesViaFeed++;
          expect(listed, 'a full listing on the feed path').toEqual([]);
          expect(
            asked.filter(
              (r) => r.url.startsWith('/traces/batch/list') && JSON.parse(r.body).nodes.length > 0,
            ),
            'the traces of every record on the feed path',
          ).toEqual([]);
        },
      ),
      { numRuns: 12 },
    );
    expect(viaFeed).toBeGreaterThan(5);
    expect(tracesViaFeed).toBeGreaterThan(5);
  }, 240_000);

  it('a feed poll of csv or jsonl is spliced from the previous output: after random changes, a column change and a re-approval, the same files and reports as full downloads', async () => {
    const draft = await t.api('POST', '/kt/', {
      body: {
        knowledge_topic_name: 'Spliced sync',
        type: 'multi_record',
        knowledge_topic_schema: {
          components: [
            { type: 'textfield', key: 'title', label: 'Title' },
            { type: 'textarea', key: 'text', label: 'Text' },
          ],
        },
      },
    });
    let topic = (await t.api('POST', `/kt/${draft.body._id}/approve`)).body._id as string;
    const live: string[] = [];
    const deleted: string[] = [];
    let made = 0;
    // Every third record is named like a readable id (REQ-7), the others get made-up ones.
    const nameOf = (text: string) => (made % 3 === 0 ? `REQ-${made}` : `R${made} ${text}`.slice(0, 40));
    const create = async (text: string) => {
      made++;
      const res = await t.api('POST', '/records/', {
        body: {
          name: nameOf(text),
          form: {},
          data: { title: `T${made} ${text}`, text },
          context: { knowledge_unit_topic_id: topic },
        },
      });
      expect(res.status, res.text).toBe(201);
      live.push(res.body._id);
    };
    // Enough records that a few changes stay beside the kept listing, and more make it written anew.
    for (let i = 0; i < 40; i++) await create(['one', 'two', 'three', 'four', 'five'][i % 5]!);
    const formats = ['csv', 'jsonl'] as const;
    /** Whether (a)'s kept listing is the one before with the changes beside it. */
    const linked = (format: string) =>
      JSON.parse(readFileSync(join(dir, `splice-${format}-a.state`, 'feed.json'), 'utf8')).topics.some(
        (topic: { changes?: string }) => topic.changes !== undefined,
      );
    const run = (url: string, name: string, format: string, ...extra: string[]) =>
      runCli([
        'sync',
        '--url',
        url,
        '--api-key-file',
        keyFile,
        '--quiet',
        '--state',
        join(dir, `${name}.state`),
        '--kt',
        topic,
        '--format',
        format,
        '--out',
        join(dir, `${name}.${format}`),
        '--json',
        ...extra,
      ]);
    /** The inode of each topic's records file (its base) in a snapshot, by history id. */
    const bases = (name: string) => {
      const stateDir = join(dir, `${name}.state`);
      if (!existsSync(join(stateDir, 'state.json'))) return new Map<string, number>();
      const state = JSON.parse(readFileSync(join(stateDir, 'state.json'), 'utf8'));
      return new Map<string, number>(
        state.topics.map((topic: { historyId: string; file: string }) => [
          topic.historyId,
          statSync(join(stateDir, state.generation, topic.file)).ino,
        ]),
      );
    };
    /**
     * How many topics of a snapshot are a base with an overlay. Their base is the file of the poll
     * before (`before`: its inodes), linked, not copied; a state with overlays says version 2.
     */
    const overlays = (name: string, before: Map<string, number>) => {
      const stateDir = join(dir, `${name}.state`);
      const state = JSON.parse(readFileSync(join(stateDir, 'state.json'), 'utf8'));
      const topics = state.topics.filter((topic: { overlay?: string }) => topic.overlay !== undefined);
      const after = bases(name);
      for (const topic of topics) expect(after.get(topic.historyId)).toBe(before.get(topic.historyId));
      expect(state.version).toBe(topics.length > 0 ? 2 : 1);
      return topics.length;
    };
    /** An output without what differs between two runs anyway: the moment and the proxy's address. */
    const output = (name: string, format: string, url: string) =>
      readFileSync(join(dir, `${name}.${format}`), 'utf8')
        .split(url)
        .join('<URL>')
        .replace(/"exportedAt":"[^"]*"/, '"exportedAt":"<NOW>"');
    /** How (a)'s spliced polls found the records: the previous poll's row index or its rows. */
    const splicedFrom = { index: 0, compacted: 0, rows: 0 };
    /** How the spliced polls of the last `compare` found the records. */
    let lastFound: string[] = [];
    /** How (a)'s spliced polls kept the snapshot: the base before with an overlay, or one file. */
    const layered = { overlay: 0, whole: 0, compacted: 0 };
    /** Each format through the feed (a) and by full downloads (b); returns how (a) polled. */
    const compare = async (...extra: string[]) => {
      const polls: string[] = [];
      lastFound = [];
      for (const format of formats) {
        const [a, b] = [`splice-${format}-a`, `splice-${format}-b`];
        const before = bases(a);
        const overlaidBefore = existsSync(join(dir, `${a}.state`, 'state.json')) && overlays(a, before) > 0;
        const [ra, rb] = [
          await run(tagged.url, a, format, ...extra),
          await run(plain.url, b, format, ...extra),
        ];
        // Warnings only where the run follows a re-approval, and the same on both paths.
        expect([ra.code, ra.stderr]).toEqual([0, rb.stderr]);
        expect([rb.code, extra.length > 0 || rb.stderr === '']).toEqual([0, true]);
        const [ja, jb] = [JSON.parse(ra.stdout), JSON.parse(rb.stdout)];
        if (ja.unchanged) {
          expect(jb.changed).toBe(false);
          polls.push('unchanged');
        } else {
          expect(ja.changes).toEqual(jb.changes);
          expect(ja.summary.topics).toEqual(jb.summary.topics);
          expect(ja.summary.warnings).toEqual(jb.summary.warnings);
          expect(report(a, tagged.url)).toEqual(report(b, plain.url));
          polls.push(ja.poll);
          if (ja.poll === 'spliced') {
            splicedFrom[ja.splicedFrom as 'index' | 'compacted' | 'rows']++;
            lastFound.push(ja.splicedFrom);
            const overlaid = overlays(a, before) > 0;
            layered[overlaid ? 'overlay' : 'whole']++;
            if (overlaidBefore && !overlaid) layered.compacted++;
          }
        }
        expect(output(a, format, tagged.url)).toBe(output(b, format, plain.url));
        expect(snapshot(a)).toEqual(snapshot(b));
      }
      return polls;
    };
    await compare();

    const update = (id: string, body: object) => t.api('PATCH', `/records/${id}`, { body });
    let spliced = 0;
    const kept = { linked: 0, written: 0 };
    const text = fc.string({ unit: fc.constantFrom('a', 'Z', ' ', '\n', '"', ',', 'é', '='), maxLength: 10 });
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            fc.record({ kind: fc.constant('create' as const), text }),
            fc.record({ kind: fc.constant('update' as const), pick: fc.nat(), text }),
            fc.record({ kind: fc.constant('rename' as const), pick: fc.nat(), text }),
            fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }),
            fc.record({ kind: fc.constant('restore' as const), pick: fc.nat() }),
          ),
          { minLength: 1, maxLength: 4 },
        ),
        async (steps) => {
          for (const s of steps) {
            if (s.kind === 'create') await create(s.text);
            else if (s.kind === 'update' && live.length) {
              made++;
              await update(live[s.pick % live.length]!, {
                data: { title: `T${made} ${s.text}`, text: `${s.text}\n${s.text}` },
              });
            } else if (s.kind === 'rename' && live.length) {
              made++;
              await update(live[s.pick % live.length]!, { name: nameOf(s.text) });
            } else if (s.kind === 'delete' && live.length > 1) {
              const [id] = live.splice(s.pick % live.length, 1);
              await t.api('DELETE', `/records/${id}`);
              deleted.push(id!);
            } else if (s.kind === 'restore' && deleted.length) {
              const [id] = deleted.splice(s.pick % deleted.length, 1);
              await t.api('POST', `/records/${id}/restore`);
              live.push(id!);
            }
          }
          const polls = await compare();
          expect(polls.filter((poll) => poll === 'full' || poll === 'feed')).toEqual([]);
          spliced += polls.filter((poll) => poll === 'spliced').length;
          if (polls[0] === 'spliced') kept[linked('csv') ? 'linked' : 'written']++;
        },
      ),
      { numRuns: 10 },
    );
    expect(spliced).toBeGreaterThan(10);
    expect(splicedFrom.index).toBeGreaterThan(5);
    // Polls by the index keep the base and write an overlay; grown large, it is written whole again.
    expect(layered.overlay).toBe(splicedFrom.index);
    // Written whole again by the index, not by walking the rows.
    expect(splicedFrom.compacted).toBeGreaterThan(0);
    expect(layered.compacted).toBeGreaterThanOrEqual(splicedFrom.compacted);
    expect(layered.whole).toBeGreaterThan(0);
    expect(layered.compacted).toBeGreaterThan(0);
    expect(kept.linked).toBeGreaterThan(0);
    expect(kept.written).toBeGreaterThan(0);

    // A snapshot without a row index (one from before the index, or whose index was lost): the
    // poll walks the previous output's rows, with the same files as full downloads.
    for (const format of formats) {
      const stateDir = join(dir, `splice-${format}-a.state`);
      const state = JSON.parse(readFileSync(join(stateDir, 'state.json'), 'utf8'));
      const indexes = state.topics.filter((topic: { rows?: string }) => topic.rows !== undefined);
      expect(indexes.length).toBe(1);
      for (const topic of indexes) rmSync(join(stateDir, state.generation, topic.rows));
    }
    await update(live[0]!, { data: { title: 'T walked', text: 'by rows' } });
    expect(await compare()).toEqual(['spliced', 'spliced']);
    expect(lastFound).toEqual(['rows', 'rows']);

    // The spliced CSV as the program that reads it sees it: one row per record, values whole, in the
    // documented form (apostrophes before formula starts, docs/formats/csv.md).
    const rows = pythonCsvRows(join(dir, 'splice-csv-a.csv'));
    const titles = (await t.api('GET', `/records/?context__knowledge_unit_topic_id=${topic}`)).body.map(
      (record: { data: { title: string } }) => record.data.title,
    );
    const column = rows[0]!.indexOf('Title');
    expect(column).toBeGreaterThan(-1);
    expect(rows.slice(1).map((row) => row.length)).toEqual(titles.map(() => rows[0]!.length));
    expect(
      rows
        .slice(1)
        .map((row) => row[column])
        .sort(),
    ).toEqual(titles.map(protectedText).sort());

    /** Both paths refuse the export alike, naming the readable id two records share. */
    const refusedAlike = async (readableId: string) => {
      for (const format of formats) {
        const [ra, rb] = [
          await run(tagged.url, `splice-${format}-a`, format),
          await run(plain.url, `splice-${format}-b`, format),
        ];
        expect([ra.code, rb.code]).toEqual([1, 1]);
        expect(ra.stderr).toContain(readableId);
        expect(ra.stderr).toBe(rb.stderr);
      }
    };
    // Two records with one readable id: both paths refuse the export alike; fixed, splicing resumes.
    made++;
    await update(live[0]!, { name: 'REQ-DUP-1' });
    await update(live[1]!, { name: 'REQ-DUP-1' });
    await refusedAlike('REQ-DUP-1');
    await update(live[1]!, { name: 'REQ-DUP-2' });
    expect(await compare()).toEqual(['spliced', 'spliced']);

    // A key the form does not declare adds a column: a full rendering, until the columns are the
    // form's again.
    const keyed = (await t.api('GET', `/records/${live[2]}`)).body;
    await update(live[2]!, { data: { ...keyed.data, extra: 'not in the form' } });
    expect(await compare()).toEqual(['feed', 'feed']);
    await update(live[2]!, { data: { title: 'T again', text: 'no extra' } });
    expect(await compare()).toEqual(['feed', 'feed']);
    await update(live[3]!, { data: { title: 'T later', text: 'spliced again' } });
    expect(await compare()).toEqual(['spliced', 'spliced']);
    // The run before rendered everything and wrote the row index this poll found its records in.
    expect(lastFound).toEqual(['index', 'index']);

    // A changed record takes the readable id of a kept one, found by the row index's hashes: both
    // paths refuse the export alike; renamed again, the index serves the next poll.
    await update(live[6]!, { name: 'REQ-KEPT-1' });
    expect(await compare()).toEqual(['spliced', 'spliced']);
    await update(live[5]!, { name: 'REQ-KEPT-1' });
    const byIndex = splicedFrom.index + splicedFrom.compacted;
    await refusedAlike('REQ-KEPT-1');
    await update(live[5]!, { name: 'REQ-KEPT-2' });
    expect(await compare()).toEqual(['spliced', 'spliced']);
    expect(splicedFrom.index + splicedFrom.compacted).toBe(byIndex + 2);

    // The same refusal from a poll that writes the snapshot whole again (its overlay past an
    // eighth of its base): the kept records' readable ids come from the index there too.
    /** The largest share of its base a topic's overlay has in (a)'s snapshots (0 without one). */
    const overlayShare = () =>
      Math.max(
        ...formats.map((format) => {
          const stateDir = join(dir, `splice-${format}-a.state`);
          const state = JSON.parse(readFileSync(join(stateDir, 'state.json'), 'utf8'));
          const topic = state.topics[0];
          if (topic.overlay === undefined) return 0;
          const size = (file: string) => statSync(join(stateDir, state.generation, file)).size;
          return size(topic.overlay) / size(topic.file);
        }),
      );
    for (let round = 0; round < 2 && overlayShare() <= 1 / 8; round++) {
      for (const id of live)
        await update(id, { data: { title: `T grown ${round}`, text: 'grown '.repeat(40) } });
      expect(await compare()).toEqual(['spliced', 'spliced']);
    }
    expect(overlayShare()).toBeGreaterThan(1 / 8);
    await update(live[5]!, { name: 'REQ-KEPT-1' });
    await refusedAlike('REQ-KEPT-1');
    await update(live[5]!, { name: 'REQ-KEPT-3' });
    expect(await compare()).toEqual(['spliced', 'spliced']);
    expect(lastFound).toEqual(['compacted', 'compacted']);

    // A re-approval with a new field: followed by a full run; the new revision then splices.
    const next = await t.api('POST', `/kt/${topic}/draft`);
    await t.api('PATCH', `/kt/${next.body._id}`, {
      body: {
        knowledge_topic_schema: {
          components: [
            ...next.body.knowledge_topic_schema.components,
            { type: 'textfield', key: 'owner', label: 'Owner' },
          ],
        },
      },
    });
    await t.api('POST', `/kt/${next.body._id}/approve`);
    expect(await compare('--follow-latest')).toEqual(['full', 'full']);
    topic = next.body._id;
    await update(live[4]!, { data: { title: 'T owned', text: 'after', owner: 'me' } });
    expect(await compare()).toEqual(['full', 'full']);
    await update(live[0]!, { data: { title: 'T owned too', text: 'later', owner: 'you' } });
    await t.api('DELETE', `/records/${live[1]}`);
    expect(await compare()).toEqual(['spliced', 'spliced']);
    expect(lastFound).toEqual(['index', 'index']);
  }, 300_000);
});
