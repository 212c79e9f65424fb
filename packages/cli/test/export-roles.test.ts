import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemo, type DemoInfo } from '@rxs/server';
import { startTestServer, type TestServer } from '../../server/test/harness.js';
import { runCli } from './run-cli.js';

/**
 * `rxs export --traces` of the demo V-model (server/src/demo/trace-model.ts): links named by the
 * tenant's trace model roles in a needs.json and a ReqIF, and by relation type alone with
 * `--links-by relation-type`.
 */
describe('rxs export --traces names links by the trace model', () => {
  let t: TestServer;
  let demo: DemoInfo;
  let dir: string;
  let keyFile: string;
  const rxs = (...args: string[]) => runCli([...args, '--url', t.url, '--api-key-file', keyFile, '--quiet']);
  const exportTo = async (file: string, format: string, ...more: string[]) => {
    const run = await rxs(
      'export',
      ...Object.values(demo.tenant.topics).flatMap((topic) => ['--kt', topic.currentRevisionId]),
      '--traces',
      '--format',
      format,
      '--out',
      file,
      ...more,
    );
    expect(run.code, run.stdout + run.stderr).toBe(0);
    return readFileSync(file, 'utf8');
  };

  beforeAll(async () => {
    t = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), 'rxs-export-roles-'));
    demo = await seedDemo(t.server.app.services, {
      dataDir: join(dir, 'demo'),
      baseUrl: t.url,
      vModel: true,
    });
    keyFile = join(dir, 'owner.key');
    writeFileSync(keyFile, `${demo.tenant.users.owner.apiKey}\n`);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("needs.json: a link type per role, held by the need at the role's from end, incoming its backward name", async () => {
    const doc = JSON.parse(await exportTo(join(dir, 'v-model.needs.json'), 'needs'));
    const version = doc.versions[doc.current_version];
    const links = Object.entries(version.needs_schema.properties as Record<string, Record<string, unknown>>)
      .filter(([, field]) => field.field_type === 'links')
      .map(([option, field]) => [option, field.outgoing ?? option, field.incoming]);
    expect(links).toEqual(
      expect.arrayContaining([
        ['verifies', 'verifies', 'verified by'],
        ['derives', 'derives from', 'refined by'],
        ['implements', 'implements', 'implemented by'],
      ]),
    );
    const needs = Object.values(version.needs) as Record<string, unknown>[];
    const topicOf = (need: Record<string, unknown>) => need.rxs_topic;
    const linked = (option: string) => needs.filter((need) => (need[option] as string[]).length > 0);
    // Verification tests verify system requirements; system requirements derive from user needs
    // (whose traces run need -> requirement: the link sits on the requirement all the same).
    expect(linked('verifies').length).toBeGreaterThan(0);
    for (const need of linked('verifies'))
      expect(topicOf(need)).toBe(demo.tenant.topics.verificationTests!.name);
    expect(linked('derives').length).toBeGreaterThan(0);
    for (const need of linked('derives'))
      expect(topicOf(need)).toBe(demo.tenant.topics.systemRequirements!.name);
  }, 60_000);

  it('ReqIF: a SPEC-RELATION-TYPE per role, LONG-NAME its forward name; --links-by relation-type as before', async () => {
    const xml = await exportTo(join(dir, 'v-model.reqif'), 'reqif');
    const types = new Map(
      [...xml.matchAll(/<SPEC-RELATION-TYPE IDENTIFIER="([^"]+)"[^>]*LONG-NAME="([^"]+)"/g)].map((m) => [
        m[1],
        m[2],
      ]),
    );
    expect(types.get('RT-is_related.verifies.from')).toBe('verifies');
    expect(types.get('RT-contributes_to.derives.to')).toBe('derives from');
    expect(types.get('RT-is_related.implements.to')).toBe('implements');

    const plain = await exportTo(join(dir, 'v-model-plain.reqif'), 'reqif', '--links-by', 'relation-type');
    const plainTypes = [
      ...plain.matchAll(/<SPEC-RELATION-TYPE IDENTIFIER="([^"]+)"[^>]*LONG-NAME="([^"]+)"/g),
    ];
    expect(plainTypes.length).toBeGreaterThan(0);
    for (const [, id, name] of plainTypes) expect(id).toBe(`RT-${name}`);
  }, 60_000);
});
