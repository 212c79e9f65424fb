import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_TRACE_ROLE_NAME, MAX_TRACE_ROLES, TRACE_MODEL_RELATION_TYPES } from '@rxs/contract';
import { webClient, type WebClient } from '../web-client.js';
import { call } from './support/http.js';
import {
  killAll,
  memoryProbeArgs,
  probeHeap,
  rssOf,
  startServe,
  type ServeProcess,
} from './support/process.js';
import { summarize, writeFigures } from './support/stats.js';
import { csvWithColumns, csvWithRows, xlsxWithSharedString } from './support/hostile-files.js';

/**
 * The request budget: one tenant's requests, however expensive, must not cost the others
 * memory or time. A tenant holds large records (RECORDS of RECORD_MB each, one of them with VERSIONS
 * versions); its viewer (or, for imports and bulk writes, its editor; for the trace model, its
 * owner) sends each expensive request of the API and the web app, once alone and four at once,
 * while a client of its own process asks /healthz every 20 ms and the server's resident memory is
 * sampled. Targets: alone, /healthz p99 under 250 ms and RSS within 300 MB of idle; four at once,
 * /healthz p99 under 1 s and RSS within 600 MB. Every answer is a documented one (never a 500).
 * Figures: .tmp/reliability/budget.json.
 */

const RECORDS = Number(process.env.RXS_SOAK_BUDGET_RECORDS ?? 200);
const RECORD_MB = Number(process.env.RXS_SOAK_BUDGET_RECORD_MB ?? 2);
const VERSIONS = Number(process.env.RXS_SOAK_BUDGET_VERSIONS ?? 120);
/** A CSV check of this many rows, and one header of this many columns: uploads built cheaply. */
const CSV_ROWS = Number(process.env.RXS_SOAK_BUDGET_CSV_ROWS ?? 300_000);
const CSV_COLUMNS = Number(process.env.RXS_SOAK_BUDGET_CSV_COLUMNS ?? 200_000);
/** One shared string of this many MB in an XLSX of a few hundred KB. */
const XLSX_STRING_MB = Number(process.env.RXS_SOAK_BUDGET_XLSX_STRING_MB ?? 300);
const MB = 1024 * 1024;
/** A bulk write of the most records a request takes, its body just within the default body limit. */
const BULK_RECORDS = 1000;
const BULK_BODY_BYTES = 4.9 * MB;

const ALONE = { healthzP99Ms: 250, rssGrowthMb: 300 };
const FOUR = { healthzP99Ms: 1000, rssGrowthMb: 600 };
/** Statuses an expensive request may get: its answer, or a documented refusal. */
const DOCUMENTED = new Set([200, 201, 413, 422, 429]);

const prober = fileURLToPath(new URL('./support/healthz-prober.cjs', import.meta.url));

interface Attack {
  name: string;
  /** Sends the request and reads its whole answer without keeping it; resolves to its status. */
  send(): Promise<number>;
}

interface Measured {
  name: string;
  requests: number;
  statuses: number[];
  healthz: ReturnType<typeof summarize>;
  idleRssMb: number;
  peakRssMb: number;
  rssGrowthMb: number;
  seconds: number;
}

/** Reads a response to its end chunk by chunk, keeping nothing. */
async function drain(response: Response): Promise<number> {
  if (response.body) for await (const _chunk of response.body) void _chunk;
  return response.status;
}

async function measure(server: ServeProcess, name: string, attacks: Attack[]): Promise<Measured> {
  const pid = server.child.pid!;
  // Idle: after a full collection, so one attack's garbage is not the next one's baseline.
  const idle = (await probeHeap(server)).rss;
  const probe = spawn(process.execPath, [prober, server.url, '20'], { stdio: ['pipe', 'pipe', 'inherit'] });
  let probeOutput = '';
  probe.stdout.on('data', (chunk: Buffer) => (probeOutput += chunk.toString()));
  const probeDone = new Promise<void>((resolve) => probe.once('exit', () => resolve()));
  let peak = idle;
  const sampler = setInterval(() => {
    try {
      peak = Math.max(peak, rssOf(pid));
    } catch {
      // the server is gone: the requests say so
    }
  }, 10);
  const started = performance.now();
  await new Promise((r) => setTimeout(r, 200));
  const statuses = await Promise.all(attacks.map((a) => a.send().catch(() => -1)));
  await new Promise((r) => setTimeout(r, 200));
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  probe.stdin.end();
  await probeDone;
  const latencies = JSON.parse(probeOutput.trim()) as number[];
  const result: Measured = {
    name,
    requests: attacks.length,
    statuses,
    healthz: summarize(latencies),
    idleRssMb: Math.round(idle / MB),
    peakRssMb: Math.round(peak / MB),
    rssGrowthMb: Math.round((peak - idle) / MB),
    seconds: Math.round(seconds * 10) / 10,
  };
  console.log(
    `budget: ${name} ×${attacks.length}: ${statuses.join(',')}; /healthz p99 ${result.healthz.p99} ms (max ${result.healthz.max}); RSS +${result.rssGrowthMb} MB; ${result.seconds} s`,
  );
  return result;
}

describe('the request budget: one tenant cannot take the server from the others', () => {
  let dataDir = '';
  let server: ServeProcess;
  afterAll(async () => {
    await server?.stop();
    killAll();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it(`keeps /healthz and memory within budget during every expensive request (${RECORDS} records of ${RECORD_MB} MB)`, async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'rxs-budget-'));
    server = await startServe(['--demo', '--data-dir', dataDir], {}, memoryProbeArgs);
    const demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8'));
    const users = demo.tenant.users;
    const ownerKey: string = users.owner.apiKey;
    const editorKey: string = users.editor.apiKey;
    const viewerKey: string = users.viewer.apiKey;
    const api = (method: string, path: string, body?: unknown, key = ownerKey) =>
      call(server.url, method, path, { key, body });

    // The hostile tenant's data: large records, one with many versions, and a baseline before
    // half of them changed.
    const topic = await api('POST', '/kt/', {
      knowledge_topic_name: 'Large records',
      type: 'multi_record',
      knowledge_topic_schema: {
        components: [
          { type: 'textfield', key: 'title', label: 'Title' },
          { type: 'textarea', key: 'body', label: 'Body' },
        ],
      },
    });
    expect(topic.status).toBe(201);
    const approved = (await api('POST', `/kt/${topic.body._id}/approve`)).body;
    const revision: string = approved._id;
    const historyId: string = approved.knowledge_topic_history_id;
    // Bulk writes go to a topic of their own, so the records they add change no other request's.
    const bulkTopic = await api('POST', '/kt/', {
      knowledge_topic_name: 'Bulk writes',
      type: 'multi_record',
      knowledge_topic_schema: {
        components: [
          { type: 'textfield', key: 'title', label: 'Title' },
          { type: 'textarea', key: 'body', label: 'Body' },
        ],
      },
    });
    expect(bulkTopic.status).toBe(201);
    const bulkRevision: string = (await api('POST', `/kt/${bulkTopic.body._id}/approve`)).body._id;
    const body = (i: number, v: number) =>
      `${i}/${v} `.padEnd(64, '.') + 'lorem ipsum dolor sit amet '.repeat(Math.ceil((RECORD_MB * MB) / 27));
    const ids: string[] = [];
    for (let i = 0; i < RECORDS; i++) {
      const created = await api('POST', '/records/', {
        name: `LARGE-${i}`,
        form: {},
        data: { title: `large ${i}`, body: body(i, 0).slice(0, RECORD_MB * MB) },
        context: { knowledge_unit_topic_id: revision },
      });
      expect(created.status, created.text.slice(0, 300)).toBe(201);
      ids.push(created.body._id);
    }
    const baseline = await api('POST', '/baselines/', {
      name: 'before',
      knowledge_topic_revision_ids: [revision],
    });
    expect(baseline.status, baseline.text).toBe(201);
    await new Promise((r) => setTimeout(r, 20));
    for (let i = 0; i < RECORDS; i += 2) {
      const changed = await api('PATCH', `/records/${ids[i]}`, {
        data: { title: `large ${i} changed`, body: body(i, 1).slice(0, RECORD_MB * MB) },
      });
      expect(changed.status).toBe(200);
    }
    const historied = ids[1]!;
    for (let v = 1; v < VERSIONS; v++) {
      const changed = await api('PATCH', `/records/${historied}`, {
        data: { title: `version ${v}`, body: body(1, v).slice(0, RECORD_MB * MB) },
      });
      expect(changed.status).toBe(200);
    }

    const viewer: WebClient = webClient(server.url);
    expect((await viewer.signIn(users.viewer.email, users.viewer.password)).status).toBe(200);
    const editors: WebClient[] = [];
    for (let i = 0; i < 4; i++) {
      const editor = webClient(server.url);
      expect((await editor.signIn(users.editor.email, users.editor.password)).status).toBe(200);
      editors.push(editor);
    }
    const webGet = (client: WebClient, path: string) =>
      fetch(`${server.url}${path}`, { headers: { cookie: client.cookie!, accept: 'application/json' } }).then(
        drain,
      );
    const webPost = (client: WebClient, path: string, payload: Uint8Array | string, type: string) =>
      fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { cookie: client.cookie!, 'x-csrf-token': client.csrfToken!, 'content-type': type },
        body: payload,
      }).then(drain);
    const keyGet = (path: string) =>
      fetch(`${server.url}${path}`, { headers: { 'x-api-key': viewerKey } }).then(drain);
    const keySend = (method: string, path: string, payload: string, key: string) =>
      fetch(`${server.url}${path}`, {
        method,
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: payload,
      }).then(drain);

    let bulkWrites = 0;
    const bulkBody = () => {
      const batch = bulkWrites++;
      const text = 'bulk '.repeat(Math.floor(BULK_BODY_BYTES / BULK_RECORDS / 5) - 40);
      const records = Array.from({ length: BULK_RECORDS }, (_, i) => ({
        name: `BULK-${batch}-${i}`,
        form: {},
        data: { title: `bulk ${batch}/${i}`, body: text },
        context: { knowledge_unit_topic_id: bulkRevision },
      }));
      const payload = JSON.stringify({ records });
      expect(payload.length).toBeLessThan(5 * MB);
      return payload;
    };

    // The largest trace model: MAX_TRACE_ROLES roles of names as long as allowed, over the demo's
    // topics (each relation type between each ordered pair, so that no two name the same traces).
    const topicIds: string[] = Object.values(demo.tenant.topics as Record<string, { historyId: string }>).map(
      (t) => t.historyId,
    );
    const pairs = topicIds.flatMap((from) => topicIds.map((to) => [from, to] as const));
    const roles = pairs
      .flatMap(([from, to]) => TRACE_MODEL_RELATION_TYPES.map((relation) => ({ from, to, relation })))
      .slice(0, MAX_TRACE_ROLES)
      .map(({ from, to, relation }, k) => ({
        id: `role-${k}`,
        forward_name: `forward ${k} `.padEnd(MAX_TRACE_ROLE_NAME, '.'),
        backward_name: `backward ${k} `.padEnd(MAX_TRACE_ROLE_NAME, '.'),
        from: { topic_history_id: from },
        to: { topic_history_id: to },
        trace_source: 'from',
        relation_type: relation,
      }));
    expect(roles).toHaveLength(MAX_TRACE_ROLES);
    /**
     * Replaces the model as a client does: reads its version, sends the whole model in the order
     * opposite to the one it has (so every PUT is a change and a version), and on 409 (another
     * replaced it meanwhile) reads it again; the status of the last try.
     */
    const replaceTraceModel = async () => {
      let status = 0;
      for (let attempt = 0; attempt < 8; attempt++) {
        const current = await api('GET', '/trace-model');
        if (current.status !== 200) return current.status;
        const reversed = current.body.roles[0]?.id === roles[0]!.id;
        const payload = JSON.stringify({
          version: current.body.version,
          roles: reversed ? [...roles].reverse() : roles,
        });
        status = await keySend('PUT', '/trace-model', payload, ownerKey);
        if (status !== 409) return status;
      }
      return status;
    };

    const asOf = encodeURIComponent(baseline.body.at);
    const listing = `/records/?context__knowledge_unit_topic_id=${revision}`;
    const csvRows = csvWithRows(CSV_ROWS);
    const csvColumns = csvWithColumns(CSV_COLUMNS);
    const xlsxBomb = await xlsxWithSharedString(XLSX_STRING_MB * MB);
    const importPath = (name: string) =>
      `/api/import/check?revision=${revision}&name=${encodeURIComponent(name)}`;
    const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

    const kinds: { name: string; make: (n: number) => Attack }[] = [
      {
        name: 'GET /records/ (present listing, reference)',
        make: () => ({ name: '', send: () => keyGet(listing) }),
      },
      {
        name: 'GET /records/{id}/versions',
        make: () => ({ name: '', send: () => keyGet(`/records/${historied}/versions`) }),
      },
      {
        name: 'GET /records/?as_of&limit=50',
        make: () => ({ name: '', send: () => keyGet(`${listing}&as_of=${asOf}&limit=50`) }),
      },
      {
        name: 'GET /records/?as_of (full)',
        make: () => ({ name: '', send: () => keyGet(`${listing}&as_of=${asOf}`) }),
      },
      {
        name: 'GET /records/changes?limit=100000',
        make: () => ({
          name: '',
          send: () => keyGet(`/records/changes?context__knowledge_unit_topic_id=${revision}&limit=100000`),
        }),
      },
      {
        name: `POST /records/bulk (${BULK_RECORDS} records, ${BULK_BODY_BYTES / MB} MB)`,
        make: () => ({ name: '', send: () => keySend('POST', '/records/bulk', bulkBody(), editorKey) }),
      },
      {
        name: `PUT /trace-model (${MAX_TRACE_ROLES} roles)`,
        make: () => ({ name: '', send: replaceTraceModel }),
      },
      {
        name: 'GET /trace-model',
        make: () => ({ name: '', send: () => keyGet('/trace-model') }),
      },
      {
        name: 'web record history',
        make: () => ({ name: '', send: () => webGet(viewer, `/api/records/${historied}/history`) }),
      },
      {
        name: 'web records table (25 rows)',
        make: () => ({ name: '', send: () => webGet(viewer, `/api/revisions/${revision}/records?limit=25`) }),
      },
      {
        name: 'web baseline compare',
        make: () => ({
          name: '',
          send: () => webGet(viewer, `/api/baselines/compare?from=${baseline.body._id}&to=now`),
        }),
      },
      {
        name: 'web XLSX export',
        make: () => ({
          name: '',
          send: () => webGet(viewer, `/api/export?revisions=${revision}&format=xlsx`),
        }),
      },
      {
        name: 'web ReqIF export',
        make: () => ({
          name: '',
          send: () => webGet(viewer, `/api/export?revisions=${revision}&format=reqif`),
        }),
      },
      {
        name: 'web ReqIFZ export',
        make: () => ({
          name: '',
          send: () => webGet(viewer, `/api/export?revisions=${revision}&format=reqifz`),
        }),
      },
      {
        // A PDF of the whole topic with its change summary: the CPU-heaviest download there is.
        name: 'web baseline PDF',
        make: () => ({
          name: '',
          send: () => webGet(viewer, `/api/baselines/${baseline.body._id}/document?format=pdf`),
        }),
      },
      {
        name: 'web baseline DOCX',
        make: () => ({
          name: '',
          send: () => webGet(viewer, `/api/baselines/${baseline.body._id}/document?format=docx`),
        }),
      },
      {
        name: 'web document view',
        make: () => ({ name: '', send: () => webGet(viewer, `/api/topics/${historyId}/document`) }),
      },
      {
        name: 'web document view at the baseline',
        make: () => ({
          name: '',
          send: () => webGet(viewer, `/api/topics/${historyId}/document?as_of=${asOf}`),
        }),
      },
      {
        name: 'web trace model',
        make: () => ({ name: '', send: () => webGet(viewer, '/api/trace-model') }),
      },
      {
        name: 'web approval impact',
        make: () => ({
          name: '',
          send: () => webPost(viewer, `/api/revisions/${revision}/impact`, '{}', 'application/json'),
        }),
      },
      {
        name: `web import check: CSV of ${CSV_ROWS} rows`,
        make: (n) => ({
          name: '',
          send: () => webPost(editors[n]!, importPath('rows.csv'), csvRows, 'text/csv'),
        }),
      },
      {
        name: `web import check: CSV header of ${CSV_COLUMNS} columns`,
        make: (n) => ({
          name: '',
          send: () => webPost(editors[n]!, importPath('columns.csv'), csvColumns, 'text/csv'),
        }),
      },
      {
        name: `web import check: XLSX with a ${XLSX_STRING_MB} MB shared string`,
        make: (n) => ({
          name: '',
          send: () => webPost(editors[n]!, importPath('bomb.xlsx'), xlsxBomb, XLSX_TYPE),
        }),
      },
    ];

    const figures: Measured[] = [];
    const failures: string[] = [];
    // RXS_SOAK_BUDGET_ONLY=`text|text`: only the requests whose names contain one of them.
    const only = process.env.RXS_SOAK_BUDGET_ONLY?.split('|').filter(Boolean);
    for (const kind of kinds.filter((k) => !only || only.some((part) => k.name.includes(part)))) {
      for (const [count, target] of [
        [1, ALONE],
        [4, FOUR],
      ] as const) {
        const measured = await measure(
          server,
          kind.name,
          Array.from({ length: count }, (_, n) => kind.make(n)),
        );
        figures.push(measured);
        const undocumented = measured.statuses.filter((s) => !DOCUMENTED.has(s));
        if (undocumented.length) failures.push(`${kind.name} ×${count}: answered ${undocumented.join(', ')}`);
        if (count === 1 && measured.statuses[0] === 429)
          failures.push(`${kind.name} alone: 429 (nothing else was running)`);
        if (measured.healthz.p99 > target.healthzP99Ms)
          failures.push(
            `${kind.name} ×${count}: /healthz p99 ${measured.healthz.p99} ms > ${target.healthzP99Ms}`,
          );
        if (measured.rssGrowthMb > target.rssGrowthMb)
          failures.push(`${kind.name} ×${count}: RSS +${measured.rssGrowthMb} MB > ${target.rssGrowthMb}`);
      }
    }
    writeFigures('budget', {
      records: RECORDS,
      recordMb: RECORD_MB,
      versions: VERSIONS,
      figures,
      failures,
    });
    expect(failures).toEqual([]);
    // The server is still whole.
    expect((await call(server.url, 'GET', '/healthz')).status).toBe(200);
  }, 1_800_000);
});
