import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, testDatabase, type TestServer } from '../harness.js';
import { call, canonical, rawRequest, type Reply } from './support/http.js';
import { writeFigures } from './support/stats.js';
import {
  ILL_FORMED_STRINGS,
  PROTO_KEYS,
  ResponseChecker,
  operationsOf,
  requestsFor,
  withOwnKey,
  type GeneratedRequest,
  type IdPools,
  type Operation,
} from './support/openapi.js';

/**
 * Hostile input against every endpoint, with requests generated from our own /openapi.json
 * (fast-check) plus fixed catalogues: malformed and deeply nested JSON, huge strings and arrays,
 * `__proto__`/`constructor` keys, invalid ids, unicode edge cases, header and protocol abuse.
 * Always a documented status (never a 500), every error a JSON `{detail}`, every success shaped as
 * documented, the process alive and no prototype polluted.
 */

/** The interface document's error table: every operation may answer these. */
const DOCUMENTED_ERRORS = [401, 403, 404, 409, 413, 415, 422];
const SEED = 20240611;

function prototypeSnapshot(): string {
  return JSON.stringify(
    [Object.prototype, Array.prototype, Function.prototype, String.prototype].map((p) =>
      Object.getOwnPropertyNames(p).sort(),
    ),
  );
}

function assertNotPolluted(snapshot: string): void {
  expect(prototypeSnapshot()).toBe(snapshot);
  const probe = {} as Record<string, unknown>;
  expect(probe.polluted).toBeUndefined();
  expect(([] as unknown as Record<string, unknown>).polluted).toBeUndefined();
}

describe('hostile input, generated from our own OpenAPI document', () => {
  let t: TestServer;
  let operations: Operation[];
  let pools: IdPools;
  let revision: string;
  const checker = new ResponseChecker();
  const snapshot = prototypeSnapshot();
  const seen = new Map<string, Set<number>>();
  let generated = 0;

  beforeAll(async () => {
    t = await startTestServer();
    const doc = await call(t.url, 'GET', '/openapi.json');
    expect(doc.status).toBe(200);
    operations = operationsOf(doc.body);
    const { tenant, otherTenant } = t.demo;
    const requirements = tenant.topics.systemRequirements!;
    revision = requirements.currentRevisionId;
    const risks = otherTenant.topics.riskRegister!;
    const draft = await t.api('POST', '/kt/', {
      body: {
        knowledge_topic_name: 'Hostile draft',
        type: 'multi_record',
        knowledge_topic_schema: { components: [] },
      },
    });
    const revisions = [
      revision,
      ...requirements.oldRevisionIds,
      tenant.topics.verificationTests!.currentRevisionId,
      draft.body._id,
      risks.currentRevisionId,
      requirements.historyId,
    ];
    const records = [...requirements.recordIds.slice(0, 5), ...risks.recordIds];
    pools = {
      kt_revision_id: revisions,
      knowledge_unit_topic_id: revisions,
      knowledge_topic_history_id: [requirements.historyId, risks.historyId],
      id: records,
      node_id: records,
      trace_id: t.demo.traceIds,
      after: records,
      any: [...revisions, ...records, ...t.demo.traceIds],
    };
  });
  afterAll(async () => {
    await t?.close();
  });

  async function send(request: GeneratedRequest, headers: Record<string, string> = {}): Promise<Reply> {
    return call(t.url, request.method, request.url, { key: t.ownerKey, rawBody: request.body, headers });
  }

  /** The checks every answer passes, whatever was sent. */
  async function expectDocumented(
    operation: Operation,
    request: GeneratedRequest,
    res: Reply,
  ): Promise<void> {
    const what = `${request.method} ${request.url.slice(0, 200)} ${request.body?.slice(0, 300) ?? ''} -> ${res.status} ${res.text.slice(0, 300)}`;
    generated++;
    const statuses = seen.get(operation.name) ?? new Set();
    statuses.add(res.status);
    seen.set(operation.name, statuses);
    expect(res.status, what).toBeLessThan(500);
    expect([...operation.responses.keys(), ...DOCUMENTED_ERRORS], what).toContain(res.status);
    expect(res.headers.get('x-request-id'), what).toBeTruthy();
    if (res.status === 204) {
      expect(res.text, what).toBe('');
      return;
    }
    expect(res.headers.get('content-type'), what).toMatch(/^application\/json/);
    expect(res.body, `${what}: not JSON`).not.toBeUndefined();
    if (res.status >= 400) {
      expectErrorBody(res, what);
      return;
    }
    expect(checker.check(operation, res.status, res.body), what).toBeUndefined();
    // What was acknowledged reads back exactly so.
    const created = res.body as { _id?: string };
    if (request.method !== 'GET' && created._id) {
      const path = operation.path.startsWith('/kt/') ? `/kt/${created._id}` : undefined;
      const readBack =
        path ?? (operation.path.startsWith('/records/') ? `/records/${created._id}` : undefined);
      if (readBack && !operation.path.endsWith('/approve') && !operation.path.endsWith('/draft')) {
        const again = await t.api('GET', readBack);
        expect(again.status, what).toBe(200);
        expect(again.body, `${what}: read back differs`).toEqual(res.body);
      }
    }
  }

  /**
   * Whether the client resolves a dot segment of the path away before sending (`..`, `%2e%2e`): the
   * request is then another path's (`/records/outline/..` is `/records/`), never the operation's.
   */
  function leavesOperation(url: string): boolean {
    return (
      new URL(url, t.url).pathname.replace(/\/$/, '') !== url.split('?')[0]!.replace(/\/$/, '') &&
      /(^|\/)(\.|%2e){1,2}(\/|\?|$)/i.test(url)
    );
  }

  /** Such a request: whatever path it reached answers without a fault, errors as `{detail}`. */
  function expectAnsweredElsewhere(url: string, res: Reply): void {
    const what = `${url} (sent as ${new URL(url, t.url).pathname}) -> ${res.status} ${res.text.slice(0, 200)}`;
    expect(res.status, what).toBeLessThan(500);
    if (res.status >= 400) expectErrorBody(res, what);
  }

  function expectErrorBody(res: Reply, what: string): void {
    const detail = (res.body as { detail?: unknown })?.detail;
    if (res.status === 422) {
      expect(Array.isArray(detail), `${what}: 422 detail must be an array`).toBe(true);
      for (const item of detail as { loc: unknown; msg: unknown; type: unknown }[]) {
        expect(Array.isArray(item.loc), what).toBe(true);
        for (const part of item.loc as unknown[]) expect(['string', 'number'], what).toContain(typeof part);
        expect(typeof item.msg, what).toBe('string');
        expect(typeof item.type, what).toBe('string');
      }
    } else {
      expect(typeof detail, `${what}: detail must be a sentence`).toBe('string');
      expect((detail as string).length, what).toBeGreaterThan(0);
    }
  }

  it('the document lists every operation of the three services', () => {
    const names = operations.map((o) => o.name).sort();
    expect(names).toEqual(
      [
        'GET /kt/',
        'POST /kt/',
        'GET /kt/{kt_revision_id}',
        'PATCH /kt/{kt_revision_id}',
        'POST /kt/{kt_revision_id}/draft',
        'POST /kt/{kt_revision_id}/approve',
        'GET /records/',
        'POST /records/',
        'POST /records/bulk',
        'GET /records/{id}',
        'PATCH /records/{id}',
        'DELETE /records/{id}',
        'POST /traces/',
        'GET /traces/{trace_id}',
        'DELETE /traces/{trace_id}',
        'POST /traces/{trace_id}/review',
        'GET /traces/{trace_id}/history',
        'POST /traces/batch/list',
        'GET /records/changes',
        'GET /records/count',
        'GET /traces/changes',
        'GET /records/{id}/versions',
        'GET /records/{id}/versions/{n}',
        'POST /records/{id}/restore',
        'GET /kt/{kt_revision_id}/approval',
        'POST /baselines/',
        'GET /baselines/',
        'GET /baselines/{baseline_id}',
        'GET /baselines/{baseline_id}/history',
        'GET /account',
        'POST /baselines/{baseline_id}/signatures',
        'POST /baselines/{baseline_id}/refusals',
        'GET /trace-model',
        'PUT /trace-model',
        'GET /trace-model/history',
        'GET /records/outline/{knowledge_topic_history_id}',
        'PUT /records/outline/{knowledge_topic_history_id}',
      ].sort(),
    );
  });

  // Reads first, deletions last: the pools of real ids stay useful for as long as possible.
  const OPERATION_NAMES = [
    'GET /kt/',
    'GET /kt/{kt_revision_id}',
    'GET /records/',
    'GET /records/{id}',
    'GET /traces/{trace_id}',
    'GET /traces/{trace_id}/history',
    'POST /traces/batch/list',
    'GET /records/changes',
    'GET /records/count',
    'GET /traces/changes',
    'GET /records/{id}/versions',
    'GET /records/{id}/versions/{n}',
    'GET /kt/{kt_revision_id}/approval',
    'GET /baselines/',
    'GET /baselines/{baseline_id}',
    'GET /baselines/{baseline_id}/history',
    'GET /account',
    'GET /trace-model',
    'GET /trace-model/history',
    'GET /records/outline/{knowledge_topic_history_id}',
    'POST /baselines/',
    'POST /baselines/{baseline_id}/signatures',
    'POST /baselines/{baseline_id}/refusals',
    'POST /kt/',
    'PATCH /kt/{kt_revision_id}',
    'POST /kt/{kt_revision_id}/draft',
    'POST /kt/{kt_revision_id}/approve',
    'POST /records/',
    'POST /records/bulk',
    'PATCH /records/{id}',
    'POST /traces/',
    'POST /traces/{trace_id}/review',
    'PUT /trace-model',
    'PUT /records/outline/{knowledge_topic_history_id}',
    'DELETE /traces/{trace_id}',
    'DELETE /records/{id}',
    'POST /records/{id}/restore',
  ];
  for (const name of OPERATION_NAMES) {
    it(`${name}: generated valid and hostile requests get documented answers`, async () => {
      const operation = operations.find((o) => o.name === name);
      expect(operation, `${name} is not in /openapi.json`).toBeDefined();
      for (const hostile of [false, true]) {
        await fc.assert(
          fc.asyncProperty(requestsFor(operation!, { pools, hostile }), async (request) => {
            const res = await send(request);
            if (leavesOperation(request.url)) expectAnsweredElsewhere(request.url, res);
            else await expectDocumented(operation!, request, res);
          }),
          { seed: SEED, numRuns: hostile ? 90 : 40 },
        );
      }
      assertNotPolluted(snapshot);
    }, 90_000);
  }

  /** Operations whose body is optional, and what an empty one answers at the concrete ids below. */
  const OPTIONAL_BODY = new Map([
    ['POST /kt/{kt_revision_id}/approve', [409]],
    ['POST /records/{id}/restore', [409]],
    // A review of the demo trace, or 404 once the generated requests deleted it.
    ['POST /traces/{trace_id}/review', [200, 404]],
  ]);
  const bodyOperations = () => operations.filter((o) => o.body !== undefined);
  const concrete = (operation: Operation) =>
    operation.path
      .replace('{kt_revision_id}', revision)
      .replace('{id}', t.demo.tenant.topics.systemRequirements!.recordIds[0]!)
      .replace('{trace_id}', t.demo.traceIds[0]!)
      .replace('{knowledge_topic_history_id}', t.demo.tenant.topics.systemRequirements!.historyId);

  it('malformed JSON is 422 json_invalid on every operation that takes a body', async () => {
    const malformed = [
      '{',
      '{"name": }',
      '[1,2',
      'nul',
      'NaN',
      '{"a":1}garbage',
      '\ufeff{}',
      "{'a':1}",
      '{"a":1,}',
      '{"a" 1}',
      '"unterminated',
      '\u0000',
      '{"a":"\\x41"}',
      '{"a":01}',
    ];
    for (const operation of bodyOperations()) {
      for (const rawBody of malformed) {
        const res = await send({ method: operation.method, url: concrete(operation), body: rawBody });
        const what = `${operation.name} ${JSON.stringify(rawBody)} -> ${res.status} ${res.text}`;
        expect(res.status, what).toBe(422);
        expect(res.body.detail[0].type, what).toBe('json_invalid');
      }
      for (const rawBody of ['null', '[]', '1', '"text"', 'true', '', '   ']) {
        // Where the body is optional (approve, restore, review), an empty one is no body at all: the
        // call goes on: to a 409 for the approved revision and a present record (or restores a record
        // the generated requests above deleted), to a review of the trace.
        const expected = OPTIONAL_BODY.get(operation.name);
        if (expected && rawBody.trim() === '') {
          const res = await send({ method: operation.method, url: concrete(operation), body: rawBody });
          expect(
            expected,
            `${operation.name} ${JSON.stringify(rawBody)} -> ${res.status} ${res.text}`,
          ).toContain(res.status);
          continue;
        }
        const res = await send({ method: operation.method, url: concrete(operation), body: rawBody });
        expect(res.status, `${operation.name} ${JSON.stringify(rawBody)} -> ${res.status} ${res.text}`).toBe(
          422,
        );
        expectErrorBody(res, operation.name);
      }
    }
  });

  it('nesting to the limit is handled; deeper is 422 json_too_deep, even 100 000 levels', async () => {
    for (const operation of bodyOperations()) {
      for (const depth of [60, 64, 65, 1000, 100_000]) {
        const deep = '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
        const res = await send({
          method: operation.method,
          url: concrete(operation),
          body: `{"data":${deep}}`,
        });
        const what = `${operation.name} depth ${depth} -> ${res.status} ${res.text.slice(0, 200)}`;
        expect([...operation.responses.keys(), ...DOCUMENTED_ERRORS], what).toContain(res.status);
        if (depth >= 64) expect(res.body.detail[0].type, what).toBe('json_too_deep');
        const arrays = '['.repeat(depth) + ']'.repeat(depth);
        const res2 = await send({ method: operation.method, url: concrete(operation), body: arrays });
        expect(res2.status, `${operation.name} array depth ${depth}`).toBe(422);
      }
    }
    expect((await call(t.url, 'GET', '/healthz')).status).toBe(200);
  });

  it('huge strings, arrays and objects: 413 over the limit, a documented answer under it', async () => {
    const limit = t.server.app.initialConfig.bodyLimit!;
    const context = { knowledge_unit_topic_id: revision };
    const cases: [string, string][] = [
      ['name over maxLength', JSON.stringify({ name: 'n'.repeat(100_000), form: {}, data: {}, context })],
      [
        'a 4 MB string in data',
        JSON.stringify({ name: 'big', form: {}, data: { name: 's'.repeat(4_000_000) }, context }),
      ],
      [
        'an array of 400 000 numbers',
        JSON.stringify({ name: 'arr', form: {}, data: { big: new Array(400_000).fill(1) }, context }),
      ],
      [
        'an object of 100 000 keys',
        JSON.stringify({
          name: 'keys',
          form: {},
          data: Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i])),
          context,
        }),
      ],
      ['a body one byte over the limit', JSON.stringify({ name: 'x'.repeat(limit), form: {}, context })],
    ];
    for (const [label, rawBody] of cases) {
      const res = await t.api('POST', '/records/', { rawBody });
      const what = `${label} (${rawBody.length} bytes) -> ${res.status} ${res.text.slice(0, 200)}`;
      expect([201, 413, 422], what).toContain(res.status);
      if (rawBody.length > limit) expect(res.status, what).toBe(413);
      if (res.status >= 400) expectErrorBody(res, what);
    }
    const nodes = Array.from({ length: 10_000 }, (_, i) => ({
      node_id: i.toString(16).padStart(24, '0'),
      node_type: 'Record',
      version: '1',
    }));
    expect((await t.api('POST', '/traces/batch/list', { body: { nodes } })).status).toBe(422);
    const ids = Array.from({ length: 1001 }, (_, i) => i.toString(16).padStart(24, '0')).join(',');
    expect((await t.api('GET', `/records/?id__in=${ids}`)).status).toBe(422);
    expect((await t.api('GET', `/records/?context__knowledge_unit_topic_id__in=${ids}`)).status).toBe(422);
    expect((await t.api('GET', `/kt/?name=${'q'.repeat(40_000)}`)).status).toBe(422);
    expect((await call(t.url, 'GET', '/healthz')).status).toBe(200);
  }, 60_000);

  it('__proto__, constructor and other prototype keys anywhere: refused or stored as plain data, never polluting', async () => {
    const context = { knowledge_unit_topic_id: revision };
    for (const key of PROTO_KEYS) {
      const payloads = [
        withOwnKey({ name: `proto ${key}`, form: {}, data: {}, context }, key, { polluted: 'yes' }),
        { name: `proto ${key}`, form: {}, data: withOwnKey({}, key, { polluted: 'yes' }), context },
        {
          name: `proto ${key}`,
          form: withOwnKey({}, key, { prototype: { polluted: 'yes' } }),
          data: {},
          context,
        },
        {
          name: `proto ${key}`,
          form: {},
          data: { list: [withOwnKey({}, key, { polluted: 'yes' })] },
          context,
        },
        {
          name: `proto ${key}`,
          form: {},
          data: {},
          context: withOwnKey({ ...context }, key, { polluted: 'yes' }),
        },
      ];
      for (const body of payloads) {
        const res = await t.api('POST', '/records/', { rawBody: JSON.stringify(body) });
        const what = `${JSON.stringify(body)} -> ${res.status} ${res.text.slice(0, 300)}`;
        expect([201, 422], what).toContain(res.status);
        if (key === '__proto__') expect(res.status, what).toBe(422);
        if (res.status === 201) {
          const again = await t.api('GET', `/records/${res.body._id}`);
          expect(again.body, what).toEqual(res.body);
          expect(canonical(again.body.data), what).toBe(canonical(body.data));
        }
      }
      for (const operation of bodyOperations()) {
        const res = await send({
          method: operation.method,
          url: concrete(operation),
          body: JSON.stringify(withOwnKey({}, key, { polluted: 'yes' })),
        });
        expect([...operation.responses.keys(), ...DOCUMENTED_ERRORS], `${operation.name} ${key}`).toContain(
          res.status,
        );
      }
      for (const query of [`${key}=1`, `${key}[polluted]=yes`, `a[${key}][polluted]=yes`]) {
        for (const path of ['/kt/', `/records/?context__knowledge_unit_topic_id=${revision}&`]) {
          const res = await t.api('GET', `${path}${path.endsWith('&') ? '' : '?'}${query}`);
          expect([200, 422], `${path} ${query} -> ${res.status}`).toContain(res.status);
        }
      }
    }
    assertNotPolluted(snapshot);
  });

  it('unicode edge cases in names, data values and data keys read back exactly as sent', async () => {
    const texts = [
      '\ufeffBOM',
      '\u202eRTL override',
      'zero\u200bwidth\u200djoiner',
      'e\u0301 vs é',
      '😀👩‍👩‍👧‍👦🏳️‍🌈',
      '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𐍈',
      '\uffff\ufffe\ufdd0',
      '中文 العربية עברית',
      '\u0001\u001f\u007f\u0085',
      'tab\there',
      'new\nline',
      'carriage\rreturn',
      'line\u2028separator',
      'paragraph\u2029separator',
    ];
    const problems: string[] = [];
    for (const text of texts) {
      const data = { [text]: text, name: text };
      const res = await t.api('POST', '/records/', {
        body: { name: `u ${text}`, form: {}, data, context: { knowledge_unit_topic_id: revision } },
      });
      expect(res.status, `${JSON.stringify(text)} -> ${res.text}`).toBe(201);
      expect(res.body.name).toBe(`u ${text}`.trim());
      const again = await t.api('GET', `/records/${res.body._id}`);
      const listed = await t.api('GET', `/records/?id__in=${res.body._id}`);
      for (const [where, got] of [
        ['POST /records/ answer', res.body.data],
        ['GET /records/{id}', again.body.data],
        ['GET /records/ listing', listed.body[0]?.data],
      ] as const) {
        if (canonical(got) !== canonical(data))
          problems.push(`${where}: sent data ${JSON.stringify(data)}, got ${JSON.stringify(got)}`);
      }
    }
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('text that is not well-formed unicode (lone surrogates, NUL) is refused, never stored altered', async () => {
    const context = { knowledge_unit_topic_id: revision };
    for (const text of ILL_FORMED_STRINGS) {
      for (const body of [
        { name: text, form: {}, data: {}, context },
        { name: 'ok', form: {}, data: { name: text }, context },
        { name: 'ok', form: {}, data: { [text]: 1 }, context },
      ]) {
        const res = await t.api('POST', '/records/', { body });
        const what = `${JSON.stringify(body)} -> ${res.status} ${res.text.slice(0, 200)}`;
        expect([201, 422], what).toContain(res.status);
        if (res.status === 201) {
          // Accepted: then it must read back exactly as acknowledged.
          const again = await t.api('GET', `/records/${res.body._id}`);
          expect(again.body, `${what}: stored differently than acknowledged`).toEqual(res.body);
        }
      }
      const kt = await t.api('POST', '/kt/', {
        body: {
          knowledge_topic_name: text,
          type: 'multi_record',
          knowledge_topic_schema: { components: [] },
        },
      });
      expect([201, 422]).toContain(kt.status);
      if (kt.status === 201) {
        const again = await t.api('GET', `/kt/${kt.body._id}`);
        expect(again.body.knowledge_topic_name, `KT name ${JSON.stringify(text)} stored differently`).toBe(
          kt.body.knowledge_topic_name,
        );
      }
    }
  });

  it('invalid ids in every path parameter are 422 or 404 with a detail, never a 500', async () => {
    const invalid = [
      'not-an-id',
      'z'.repeat(24),
      '0'.repeat(23),
      '0'.repeat(25),
      'ABCDEF0123456789ABCDEF01',
      '__proto__',
      'constructor',
      '%2e%2e',
      '%20',
      "'%20OR%20'1'='1",
      'x'.repeat(199),
      encodeURIComponent('😀'.repeat(12)),
      '0'.repeat(24) + '%00',
    ];
    for (const operation of operations.filter((o) => o.parameters.some((p) => p.in === 'path'))) {
      for (const id of invalid) {
        const url = operation.path.replace(/\{[^}]+\}/, id);
        const res = await send({ method: operation.method, url, body: operation.body ? '{}' : undefined });
        const what = `${operation.method} ${url} -> ${res.status} ${res.text.slice(0, 200)}`;
        if (leavesOperation(url)) {
          expectAnsweredElsewhere(url, res);
          continue;
        }
        expect([404, 422], what).toContain(res.status);
        expectErrorBody(res, what);
      }
    }
  });

  it('query abuse: repeated, unknown and out-of-range parameters are documented answers', async () => {
    const queries = [
      '/kt/?limit=1&limit=2',
      '/kt/?limit=-1',
      '/kt/?limit=1.5',
      '/kt/?limit=1e3',
      '/kt/?limit=99999999999999999999',
      '/kt/?current=maybe',
      '/kt/?status=published',
      '/kt/?after=zzz',
      '/kt/?unknown=1',
      `/kt/?name=${encodeURIComponent('%_\\')}`,
      '/kt/?name=%E0%A4%A',
      `/records/?context__knowledge_unit_topic_id=${revision}&context__knowledge_unit_topic_id=${revision}`,
      `/records/?context__knowledge_unit_topic_id__in=,,,`,
      `/records/?id__in=${'0'.repeat(24)},nope`,
      `/records/?limit=0`,
      `/records/?limit=1001`,
      `/records/?audit_info__start_date=yesterday`,
      `/records/?audit_info__start_date=2020-13-45`,
      `/records/?audit_info__include_updated=sometimes`,
      `/records/?after=${'f'.repeat(24)}&limit=5`,
    ];
    for (const path of queries) {
      const res = await t.api('GET', path);
      const what = `${path} -> ${res.status} ${res.text.slice(0, 200)}`;
      expect([200, 422], what).toContain(res.status);
      if (res.status === 422) expectErrorBody(res, what);
      else expect(Array.isArray(res.body), what).toBe(true);
    }
  });

  it('dates beyond year 9999 in the record filters are refused or compared as dates', async () => {
    const all = await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}`);
    expect(all.body.length).toBeGreaterThan(0);
    const filter = (param: string, value: string) =>
      t.api(
        'GET',
        `/records/?context__knowledge_unit_topic_id=${revision}&${param}=${encodeURIComponent(value)}`,
      );
    // A start in the far future matches nothing; an end in the far future matches everything.
    for (const [param, value, expected] of [
      ['audit_info__start_date', '275760-09-13', 0],
      ['audit_info__start_date', '+020000-01-01T00:00:00Z', 0],
      ['audit_info__end_date', '275760-09-13', all.body.length],
      ['audit_info__end_date', '+020000-01-01T00:00:00Z', all.body.length],
      ['audit_info__start_date', '-000001-01-01T00:00:00Z', all.body.length],
    ] as const) {
      const res = await filter(param, value);
      const what = `${param}=${value} -> ${res.status}, ${Array.isArray(res.body) ? res.body.length : res.text} records`;
      expect([200, 422], what).toContain(res.status);
      if (res.status === 200) expect(res.body.length, what).toBe(expected);
    }
  });

  it('header abuse: keys, content types, request ids and methods', async () => {
    const rev = `/kt/${revision}`;
    for (const key of [
      '',
      ' ',
      `${t.ownerKey} `,
      ` ${t.ownerKey}`,
      'x'.repeat(10_000),
      `${t.ownerKey},${t.ownerKey}`,
      t.ownerKey.toUpperCase(),
      t.ownerKey.slice(0, -1),
    ]) {
      const res = await call(t.url, 'GET', rev, { headers: { 'x-api-key': key } });
      const what = `key ${JSON.stringify(key.slice(0, 60))} -> ${res.status}`;
      if (key.trim() === t.ownerKey) expect(res.status, what).toBe(200);
      else {
        expect(res.status, what).toBe(401);
        expectErrorBody(res, what);
      }
    }
    const body = JSON.stringify({
      name: 'ct',
      form: {},
      data: {},
      context: { knowledge_unit_topic_id: revision },
    });
    for (const [type, expected] of [
      ['application/json', 201],
      ['application/json; charset=utf-8', 201],
      ['APPLICATION/JSON', 201],
      ['application/merge-patch+json', 201],
      ['application/x-www-form-urlencoded', 415],
      ['multipart/form-data; boundary=x', 415],
      ['application/xml', 415],
      ['application/jsonx', 415],
      ['text/json', 415],
    ] as const) {
      const res = await call(t.url, 'POST', '/records/', {
        key: t.ownerKey,
        rawBody: body,
        headers: { 'content-type': type },
      });
      expect(res.status, `${type} -> ${res.status} ${res.text}`).toBe(expected);
    }
    const sane = await call(t.url, 'GET', '/healthz', { headers: { 'x-request-id': 'trace-123.abc' } });
    expect(sane.headers.get('x-request-id')).toBe('trace-123.abc');
    for (const id of ['<script>', 'a'.repeat(65), 'spaces are here', 'ünï']) {
      const res = await call(t.url, 'GET', '/healthz', {
        headers: { 'x-request-id': encodeURI(id) === id ? id : encodeURI(id) },
      });
      expect(res.headers.get('x-request-id')).not.toBe(id);
      expect(res.headers.get('x-request-id')).toMatch(/^[\w.-]{1,64}$/);
    }
    const many: Record<string, string> = {};
    for (let i = 0; i < 500; i++) many[`x-filler-${i}`] = String(i);
    expect((await call(t.url, 'GET', rev, { key: t.ownerKey, headers: many })).status).toBe(200);
    for (const method of ['OPTIONS', 'PUT', 'PROPFIND']) {
      const res = await call(t.url, method, rev, { key: t.ownerKey });
      expect(res.status, `${method} ${rev}`).toBe(404);
      expectErrorBody(res, method);
    }
    const head = await fetch(`${t.url}${rev}`, { method: 'HEAD', headers: { 'x-api-key': t.ownerKey } });
    expect(head.status).toBe(200);
    const getWithBody = await rawRequest(
      t.url,
      `GET ${rev} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${t.ownerKey}\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n{"a":`,
    );
    expect(getWithBody.status).toBeLessThan(500);
    const latin1Key = await rawRequest(
      t.url,
      Buffer.concat([
        Buffer.from(`GET ${rev} HTTP/1.1\r\nHost: x\r\nX-API-Key: `),
        Buffer.from([0xe9, 0xff, 0x80]),
        Buffer.from('\r\n\r\n'),
      ]),
    );
    expect(latin1Key.status).toBe(401);
  });

  it('text/plain bodies are not JSON: 415, like every other non-JSON type', async () => {
    const body = JSON.stringify({
      name: 'plain',
      form: {},
      data: {},
      context: { knowledge_unit_topic_id: revision },
    });
    for (const type of ['text/plain', 'text/plain; charset=utf-8']) {
      const res = await call(t.url, 'POST', '/records/', {
        key: t.ownerKey,
        rawBody: body,
        headers: { 'content-type': type },
      });
      expect(res.status, `${type} -> ${res.status} ${res.text}`).toBe(415);
    }
  });

  /** Protocol-level abuse that fetch refuses to send. */
  const MALFORMED_HTTP: [string, string | Buffer][] = [
    ['a header name with a space', 'GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n'],
    [
      'Content-Length and Transfer-Encoding together',
      'POST /records/ HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n0\r\n\r\n',
    ],
    [
      'an invalid chunk size',
      'POST /records/ HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
    ],
    [
      'a Content-Length shorter than the body',
      'POST /records/ HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Type: application/json\r\n\r\n{}',
    ],
    ['a 70 KB header', `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(70_000)}\r\n\r\n`],
    ['a 70 KB URL', `GET /kt/?name=${'a'.repeat(70_000)} HTTP/1.1\r\nHost: x\r\n\r\n`],
    ['no Host header', 'GET /healthz HTTP/1.1\r\n\r\n'],
    ['a NUL byte in a header', 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\u0000b\r\n\r\n'],
    [
      'garbage instead of a request line',
      '\u0016\u0003\u0001\u0002\u0000\u0001\u0000\u0001\u00fc\u0003\u0003\r\n\r\n',
    ],
  ];

  it('malformed HTTP is refused with a 4xx, and the server keeps serving', async () => {
    for (const [label, payload] of MALFORMED_HTTP) {
      const res = await rawRequest(t.url, payload);
      // 0: the server closed the connection, which is an answer too.
      const what = `${label} -> ${res.head.split('\r\n')[0]}`;
      if (res.status !== 0) expect(res.status, what).toBeGreaterThanOrEqual(400);
      expect(res.status, what).toBeLessThan(500);
      expect((await call(t.url, 'GET', '/healthz')).status, `after ${label}`).toBe(200);
    }
  });

  it('requests refused before routing still answer with the contract’s {detail} body', async () => {
    const problems: string[] = [];
    const cases: [string, string | Buffer][] = [
      [
        'bad percent-encoding in the path',
        `GET /records/%E0%A4%A HTTP/1.1\r\nHost: x\r\nX-API-Key: ${t.ownerKey}\r\n\r\n`,
      ],
      [
        'a path parameter over 200 characters',
        `GET /records/${'x'.repeat(250)} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${t.ownerKey}\r\n\r\n`,
      ],
      ...MALFORMED_HTTP,
    ];
    for (const [label, payload] of cases) {
      const res = await rawRequest(t.url, payload);
      if (res.status === 0) continue;
      let detail: unknown;
      try {
        detail = JSON.parse(res.body.replace(/^[0-9a-f]+\r\n|\r\n0\r\n\r\n$/g, '')).detail;
      } catch {
        detail = undefined;
      }
      if (typeof detail !== 'string')
        problems.push(`${label}: ${res.head.split('\r\n')[0]} ${JSON.stringify(res.body.slice(0, 120))}`);
    }
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('afterwards: no prototype polluted, the server healthy, the database sound', async () => {
    assertNotPolluted(snapshot);
    expect((await call(t.url, 'GET', '/healthz')).status).toBe(200);
    expect(await t.server.storage.integrityCheck()).toEqual([]);
    const summary = Object.fromEntries([...seen].map(([name, statuses]) => [name, [...statuses].sort()]));
    console.log(`hostile input (${testDatabase}), statuses seen per operation: ${JSON.stringify(summary)}`);
    writeFigures(`hostile-${testDatabase}`, { generatedRequests: generated, statusesPerOperation: summary });
  });
});
