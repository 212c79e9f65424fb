import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from './run-cli.js';
import { useDemoExport } from './support/demo-export.js';

/** The commented example shipped for the demo data. */
const example = fileURLToPath(new URL('../../../docs/mapping.example.jsonc', import.meta.url));

interface Snapshot {
  topics: {
    name: string;
    presentation: { needType: string; idPrefix: string; reqifTypeName: string; titleField?: string };
    records: { id: string; readableId: string }[];
  }[];
  traces: { linkType?: string; source: { readableId?: string }; target: { readableId?: string } }[];
  linkTypes?: { name: string; incoming: string }[];
}

describe('rxs export and sync with a mapping file', () => {
  const demo = useDemoExport('rxs-mapping-cli-');
  const exportArgs = (...args: string[]) => demo.exportArgs('--traces', ...args);

  it('the example mapping gives the demo topics their types, prefixes, readable ids and link names', async () => {
    const out = join(demo.dir, 'mapped.json');
    const result = await runCli(exportArgs('--mapping', example, '--format', 'json', '--out', out));
    expect(result.code, result.stderr).toBe(0);
    const snapshot = JSON.parse(readFileSync(out, 'utf8')) as Snapshot;
    const [reqs, testTopic] = snapshot.topics;
    expect(reqs!.presentation).toMatchObject({
      needType: 'req',
      idPrefix: 'REQ',
      reqifTypeName: 'System Requirement',
      titleField: 'Name',
    });
    expect(testTopic!.presentation).toMatchObject({
      needType: 'test',
      idPrefix: 'TC',
      reqifTypeName: 'Verification Test',
    });
    expect(reqs!.records.map((r) => r.readableId)).toEqual(['REQ_001', 'REQ_002', 'REQ_003', 'REQ_004']);
    expect(testTopic!.records.map((r) => r.readableId)).toEqual(['TC-001', 'TC-002', 'TC-003', 'TC-004']);
    const named = snapshot.traces.map((trace) => [
      trace.source.readableId,
      trace.linkType,
      trace.target.readableId,
    ]);
    expect(named).toEqual(
      expect.arrayContaining([
        ['TC-001', 'verifies', 'REQ_001'],
        ['TC-002', 'verifies', 'REQ_002'],
        ['TC-003', 'verifies', 'REQ_003'],
        ['REQ_002', 'refines', 'REQ_001'],
      ]),
    );
    // Without the file: the built-in defaults, no link names.
    const plainOut = join(demo.dir, 'plain.json');
    const plain = await runCli(exportArgs('--format', 'json', '--out', plainOut));
    expect(plain.code, plain.stderr).toBe(0);
    const defaults = JSON.parse(readFileSync(plainOut, 'utf8')) as Snapshot;
    expect(defaults.topics[1]!.presentation).toMatchObject({ needType: 'test', idPrefix: 'TEST' });
    expect(defaults.traces.every((trace) => trace.linkType === undefined)).toBe(true);
  });

  it('needs: need types, id prefixes and the verifies links of the example mapping', async () => {
    const out = join(demo.dir, 'mapped.needs.json');
    const result = await runCli(exportArgs('--mapping', example, '--format', 'needs', '--out', out));
    expect(result.code, result.stderr).toBe(0);
    const file = JSON.parse(readFileSync(out, 'utf8'));
    const needs = Object.values(file.versions[file.current_version].needs) as Record<string, unknown>[];
    const ofTopic = (name: string) => needs.filter((need) => need.rxs_topic === name);
    expect(ofTopic('System Requirements').map((n) => [n.id, n.type])).toEqual(
      ['REQ_001', 'REQ_002', 'REQ_003', 'REQ_004'].map((id) => [id, 'req']),
    );
    const testNeeds = ofTopic('Verification Tests');
    expect(testNeeds.map((n) => n.type)).toEqual(['test', 'test', 'test', 'test']);
    expect(testNeeds.every((n) => String(n.id).startsWith('TC'))).toBe(true);
    expect(testNeeds.map((n) => n.verifies)).toEqual([['REQ_001'], ['REQ_002'], ['REQ_003'], []]);
  });

  it('a profile names the mapping file; --mapping overrides it', async () => {
    const other = join(demo.dir, 'other.json');
    writeFileSync(other, JSON.stringify({ topics: [{ name: 'Verification Tests', needType: 'vtest' }] }));
    const config = join(demo.dir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({ profiles: { demo: { url: demo.t.url, apiKeyFile: demo.keyFile, mapping: example } } }),
    );
    const base = [
      'export',
      '--config',
      config,
      '--profile',
      'demo',
      '--quiet',
      '--kt',
      demo.tests,
      '--format',
      'json',
    ];
    const fromProfile = join(demo.dir, 'profile.json');
    const run = await runCli([...base, '--out', fromProfile]);
    expect(run.code, run.stderr).toBe(0);
    expect((JSON.parse(readFileSync(fromProfile, 'utf8')) as Snapshot).topics[0]!.presentation.idPrefix).toBe(
      'TC',
    );
    const overridden = join(demo.dir, 'overridden.json');
    const again = await runCli([...base, '--mapping', other, '--out', overridden]);
    expect(again.code, again.stderr).toBe(0);
    expect((JSON.parse(readFileSync(overridden, 'utf8')) as Snapshot).topics[0]!.presentation).toMatchObject({
      needType: 'vtest',
      idPrefix: 'VTEST',
    });
    // The example also names System Requirements, which this export lacks: a warning, not an error.
    expect(run.stderr).toMatch(/settings for the topic "System Requirements".*not in this export/);
  });

  it('a missing or invalid mapping file stops the export with every mistake and writes nothing', async () => {
    const out = join(demo.dir, 'never.json');
    const missing = await runCli(exportArgs('--mapping', join(demo.dir, 'nope.jsonc'), '--out', out));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/nope\.jsonc has a mistake.*\n {2}\(file\): there is no such file/);

    const invalid = join(demo.dir, 'invalid.jsonc');
    writeFileSync(
      invalid,
      `{ // two mistakes
        "topics": [{ "name": "System Requirements", "needType": "Req", "identifier": { "pattern": "REQ_\\\\d+" } }]
      }`,
    );
    const bad = await runCli(exportArgs('--mapping', invalid, '--out', out));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('has 2 mistakes');
    expect(bad.stderr).toContain(
      'topics[0] ("System Requirements").needType: "Req" is not a Sphinx-Needs type',
    );
    expect(bad.stderr).toContain(
      'topics[0] ("System Requirements").identifier.pattern: has 0 capture groups',
    );

    const wrongField = join(demo.dir, 'wrong-field.json');
    writeFileSync(
      wrongField,
      JSON.stringify({ topics: [{ name: 'Verification Tests', fields: { title: 'Titel' } }] }),
    );
    const field = await runCli(exportArgs('--mapping', wrongField, '--out', out));
    expect(field.code).toBe(1);
    expect(field.stderr).toMatch(
      /"Verification Tests" has no field "Titel"; its semantic field names are: .*"Title"/,
    );
    expect(() => readFileSync(out)).toThrow();
  });

  it('rxs sync --mapping: the snapshot and output carry the mapped ids and link names', async () => {
    const out = join(demo.dir, 'sync.json');
    const state = join(demo.dir, 'state');
    const result = await runCli([
      'sync',
      '--url',
      demo.t.url,
      '--api-key-file',
      demo.keyFile,
      '--quiet',
      '--kt',
      demo.requirements,
      '--kt',
      demo.tests,
      '--traces',
      '--state',
      state,
      '--mapping',
      example,
      '--format',
      'json',
      '--out',
      out,
    ]);
    expect(result.code, result.stderr).toBe(0);
    const snapshot = JSON.parse(readFileSync(out, 'utf8')) as Snapshot;
    expect(snapshot.topics[1]!.records[0]!.readableId).toBe('TC-001');
    expect(snapshot.traces.some((trace) => trace.linkType === 'verifies')).toBe(true);
  });
});
