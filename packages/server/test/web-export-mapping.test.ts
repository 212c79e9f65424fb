import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';
import { webClient, type WebClient } from './web-client.js';

/** The commented example mapping file shipped for the demo data. */
const example = readFileSync(new URL('../../../docs/mapping.example.jsonc', import.meta.url), 'utf8');

/** The web app's export with a mapping file (pasted or uploaded in the export form). */
describe('web app export with a mapping file', () => {
  let t: TestServer;
  let viewer: WebClient;
  let revisions: string;

  beforeAll(async () => {
    t = await startTestServer();
    viewer = webClient(t.url);
    const { email, password } = t.demo.tenant.users.viewer;
    expect((await viewer.signIn(email, password)).status).toBe(200);
    const { systemRequirements, verificationTests } = t.demo.tenant.topics;
    revisions = `${systemRequirements!.currentRevisionId},${verificationTests!.currentRevisionId}`;
  });
  afterAll(() => t.close());

  it('POST /api/export with the example mapping: need types, prefixes and verifies links', async () => {
    const response = await viewer.request('POST', '/api/export', {
      body: { revisions, format: 'needs', traces: true, mapping: example },
    });
    expect(response.status, response.text).toBe(200);
    const needs = Object.values(response.body.versions[response.body.current_version].needs) as {
      id: string;
      type: string;
      verifies?: string[];
    }[];
    const byId = new Map(needs.map((need) => [need.id, need]));
    expect(byId.get('REQ_001')?.type).toBe('req');
    const tests = needs.filter((need) => need.type === 'test');
    expect(tests).toHaveLength(4);
    expect(tests.every((need) => need.id.startsWith('TC'))).toBe(true);
    expect(tests.flatMap((need) => need.verifies ?? [])).toEqual(['REQ_001', 'REQ_002', 'REQ_003']);
  });

  it('a bad mapping is a 422 with one item per mistake, at its place, before any byte of the file', async () => {
    const bad = await viewer.request('POST', '/api/export', {
      body: {
        revisions,
        format: 'json',
        mapping:
          '{"topics": [{"name": "Verification Tests", "needType": "Test", "identifier": {"pattern": "("}}]}',
      },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((d: { loc: string[] }) => d.loc)).toEqual([
      ['body', 'mapping', 'topics[0] ("Verification Tests").needType'],
      ['body', 'mapping', 'topics[0] ("Verification Tests").identifier.pattern'],
    ]);
    expect(bad.body.detail[1].msg).toMatch(/^Mapping file: is not a valid regular expression/);

    const wrongField = await viewer.request('POST', '/api/export', {
      body: {
        revisions,
        format: 'csv',
        mapping: '{"topics": [{"name": "System Requirements", "fields": {"title": "Nmae"}}]}',
      },
    });
    expect(wrongField.status).toBe(422);
    expect(wrongField.body.detail[0].msg).toMatch(
      /"System Requirements" has no field "Nmae"; its semantic field names are: "Name"/,
    );
  });

  it('POST needs the session CSRF token like every other change', async () => {
    const response = await viewer.request('POST', '/api/export', {
      body: { revisions, format: 'json', mapping: example },
      csrf: null,
    });
    expect(response.status).toBe(403);
  });
});
