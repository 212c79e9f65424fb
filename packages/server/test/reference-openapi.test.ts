import { readFileSync } from 'node:fs';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';

/**
 * A client generated from the service's published OpenAPI must accept our answers: every response
 * of the operations we serve is validated against the reference document's schema for it.
 */
const referenceDir = new URL('../../../reference/openapi/', import.meta.url);
const documents = Object.fromEntries(
  ['techdoc', 'records', 'tracer'].map((name) => [
    name,
    JSON.parse(readFileSync(new URL(`${name}.json`, referenceDir), 'utf8')),
  ]),
);

function validatorFor(service: string, path: string, method: string, status: string) {
  const ajv = addFormats.default(new Ajv.default({ strict: false, allErrors: true }));
  const doc = documents[service];
  ajv.addSchema({ components: doc.components, $id: 'ref' });
  const response = doc.paths[path][method].responses[status];
  const schema = response.content['application/json'].schema;
  const rewritten = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"ref#/components/'));
  return ajv.compile(rewritten);
}

describe('responses conform to the reference OpenAPI', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  const check = (service: string, path: string, method: string, status: string, body: unknown) => {
    const validate = validatorFor(service, path, method, status);
    const ok = validate(body);
    expect(ok, JSON.stringify(validate.errors?.slice(0, 5), null, 1)).toBe(true);
  };

  it('techdoc: GET /kt/{id}, GET /kt/, POST /kt/, PATCH /kt/{id}', async () => {
    const rev = t.demo.tenant.topics.systemRequirements!.currentRevisionId;
    check('techdoc', '/kt/{knowledge_topic_id}', 'get', '200', (await t.api('GET', `/kt/${rev}`)).body);
    check('techdoc', '/kt/', 'get', '200', (await t.api('GET', '/kt/')).body);
    const created = await t.api('POST', '/kt/', {
      body: {
        knowledge_topic_name: 'Conformance',
        type: 'multi_record',
        knowledge_topic_schema: { components: [] },
      },
    });
    check('techdoc', '/kt/', 'post', '201', created.body);
    check(
      'techdoc',
      '/kt/{knowledge_topic_id}',
      'patch',
      '200',
      (await t.api('PATCH', `/kt/${created.body._id}`, { body: { knowledge_topic_name: 'Conformance 2' } }))
        .body,
    );
    check('techdoc', '/kt/{knowledge_topic_id}', 'get', '422', (await t.api('GET', '/kt/xyz')).body);
  });

  it('records: GET /records/, GET /records/{id}, POST /records/, and 422 bodies', async () => {
    const topic = t.demo.tenant.topics.systemRequirements!;
    check(
      'records',
      '/records/',
      'get',
      '200',
      (await t.api('GET', `/records/?context__knowledge_unit_topic_id=${topic.currentRevisionId}`)).body,
    );
    check(
      'records',
      '/records/{id}',
      'get',
      '200',
      (await t.api('GET', `/records/${topic.recordIds[0]}`)).body,
    );
    const created = await t.api('POST', '/records/', {
      body: {
        name: 'R',
        form: {},
        data: { name: 'x' },
        context: { knowledge_unit_topic_id: topic.currentRevisionId },
      },
    });
    check('records', '/records/', 'post', '201', created.body);
    check(
      'records',
      '/records/',
      'post',
      '422',
      (await t.api('POST', '/records/', { body: { form: {} } })).body,
    );
  });

  it('tracer: POST /traces/batch/list with 1 and 2 hops', async () => {
    const ids = t.demo.tenant.topics.systemRequirements!.recordIds;
    for (const n_hops of [1, 2]) {
      const res = await t.api('POST', '/traces/batch/list', {
        body: { nodes: ids.map((id) => ({ node_id: id, node_type: 'Record', version: '1.0' })), n_hops },
      });
      expect(res.status).toBe(200);
      check('tracer', '/traces/batch/list', 'post', '200', res.body);
    }
  });
});
