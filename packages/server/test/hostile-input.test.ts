import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';

describe('bad input never gets a 500', () => {
  let t: TestServer;
  let revision: string;
  beforeAll(async () => {
    t = await startTestServer({ bodyLimit: 64 * 1024 });
    revision = t.demo.tenant.topics.systemRequirements!.currentRevisionId;
  });
  afterAll(() => t.close());

  it('malformed JSON is 422 with a detail array', async () => {
    for (const rawBody of ['{', '{"name": }', 'null x', '[1,2', '\u0000']) {
      const res = await t.api('POST', '/records/', { rawBody });
      expect(res.status).toBe(422);
      expect(Array.isArray(res.body.detail)).toBe(true);
    }
  });

  it('a body over the published limit is 413', async () => {
    const res = await t.api('POST', '/records/', {
      rawBody: JSON.stringify({ name: 'x'.repeat(70 * 1024) }),
    });
    expect(res.status).toBe(413);
    expect(res.body.detail).toMatch(/limit/);
  });

  it('deep nesting and __proto__ keys are refused; nothing is polluted', async () => {
    const deep = '{"a":'.repeat(5000) + '1' + '}'.repeat(5000);
    const res = await t.api('POST', '/records/', {
      rawBody: `{"name":"x","form":{},"context":{"knowledge_unit_topic_id":"${revision}"},"data":${deep}}`,
    });
    expect(res.status).toBe(422);
    expect(res.body.detail[0].type).toBe('json_too_deep');
    const proto = await t.api('POST', '/records/', {
      rawBody: `{"name":"x","form":{},"context":{"knowledge_unit_topic_id":"${revision}"},"data":{"__proto__":{"polluted":true}}}`,
    });
    expect(proto.status).toBe(422);
    expect(({} as any).polluted).toBeUndefined();
    const ctor = await t.api('POST', '/records/', {
      body: {
        name: 'x',
        form: {},
        context: { knowledge_unit_topic_id: revision },
        data: { constructor: { prototype: { polluted: true } } },
      },
    });
    expect(ctor.status).toBeLessThan(500);
    expect(({} as any).polluted).toBeUndefined();
  });

  it('NUL, lone surrogates and __proto__ are refused where they are, at any depth', async () => {
    const refusal = async (data: string) => {
      const res = await t.api('POST', '/records/', {
        rawBody: `{"name":"x","form":{},"context":{"knowledge_unit_topic_id":"${revision}"},"data":${data}}`,
      });
      expect(res.status, res.text).toBe(422);
      return res.body.detail.map((d: { loc: unknown[]; type: string }) => [d.loc.join('.'), d.type]);
    };
    expect(await refusal('{"name":"a\\u0000b"}')).toEqual([['body.data.name', 'string_nul']]);
    expect(await refusal('{"list":["ok","\\ud800"]}')).toEqual([['body.data.list.1', 'string_unicode']]);
    expect(await refusal('{"ok":{"a\\u0000":1}}')).toEqual([['body.data.ok', 'string_nul']]);
    expect(await refusal('{"ok":{"\\udc00x":1}}')).toEqual([['body.data.ok.\udc00x', 'string_unicode']]);
    expect(await refusal('{"ok":[{"__proto__":1}]}')).toEqual([
      ['body.data.ok.0.__proto__', 'key_forbidden'],
    ]);
    // Deeper than nine steps: the first eight and the value's own key.
    const deep = `{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{"i":{"j":"\\u0000"}}}}}}}}}}`;
    expect(await refusal(deep)).toEqual([['body.data.a.b.c.d.e.f.j', 'string_nul']]);
    // A surrogate pair is text: accepted.
    const pair = await t.api('POST', '/records/', {
      rawBody: `{"name":"\\ud83d\\ude00","form":{},"context":{"knowledge_unit_topic_id":"${revision}"},"data":{"\\ud83d\\ude00":"\\ud83d\\ude00"}}`,
    });
    expect(pair.status, pair.text).toBe(201);
    expect(pair.body.name).toBe('😀');
  });

  it('wrong types, unknown fields, invalid ids and content types are 4xx with a clear detail', async () => {
    const wrong = await t.api('POST', '/records/', {
      body: { name: 5, form: [], data: 'x', context: { knowledge_unit_topic_id: revision }, extra: true },
    });
    expect(wrong.status).toBe(422);
    expect(wrong.body.detail.map((d: any) => d.loc.join('.'))).toEqual(
      expect.arrayContaining(['body.name', 'body.form', 'body.data', 'body.extra']),
    );
    expect((await t.api('GET', '/records/not-an-id')).status).toBe(422);
    expect((await t.api('GET', `/kt/${'z'.repeat(24)}`)).status).toBe(422);
    const text = await t.api('POST', '/records/', {
      rawBody: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(text.status).toBe(415);
    const empty = await t.api('POST', '/records/', { rawBody: '' });
    expect(empty.status).toBe(422);
  });

  it('oversized batches and lists are 422', async () => {
    const ids = Array.from({ length: 1001 }, (_, i) => i.toString(16).padStart(24, '0')).join(',');
    expect((await t.api('GET', `/records/?id__in=${ids}`)).status).toBe(422);
  });

  it('generated bodies against every write endpoint: always a documented 4xx or success, never 5xx', async () => {
    const targets = [
      ['POST', '/records/'],
      ['PATCH', `/records/${t.demo.tenant.topics.systemRequirements!.recordIds[0]}`],
      ['POST', '/kt/'],
      ['POST', '/traces/'],
      ['POST', '/traces/batch/list'],
    ] as const;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...targets),
        fc.jsonValue({ maxDepth: 4 }),
        async ([method, path], body) => {
          const res = await t.api(method, path, { body });
          expect([200, 201, 404, 409, 413, 422]).toContain(res.status);
          expect(res.body?.detail ?? 'ok').toBeDefined();
        },
      ),
      { numRuns: 150 },
    );
    expect((await t.api('GET', '/healthz')).status).toBe(200);
  });
});
