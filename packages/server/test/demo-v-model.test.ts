import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '@rxs/client';
import { exportParts, exportSourceOf } from '@rxs/exchange/export';
import { CoverageCollector } from '@rxs/exchange';
import { testDatabase } from './harness.js';
import { startReplica, type Replica } from './replicas.js';

/**
 * `rxs serve --demo` seeds a V-model of a steam sterilizer: every topic with records that validate
 * against its form, traces along the V, and the deliberate gaps the traceability report must find.
 */
describe.runIf(testDatabase === 'sqlite')('the demo V-model', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rxs-demo-v-'));
  let replica: Replica;
  let demo: any;

  beforeAll(async () => {
    replica = await startReplica(['--demo', '--data-dir', dataDir]);
    demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8'));
  }, 60_000);
  afterAll(async () => {
    await replica?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Coverage of the topics in this order, by readable ids, through the export procedure. */
  async function coverage(...topics: string[]) {
    const url = replica.url;
    const client = createClient({
      techdocUrl: url,
      recordsUrl: url,
      tracerUrl: url,
      apiKey: demo.tenant.users.owner.apiKey,
    });
    const collector = new CoverageCollector();
    const revisionIds = topics.map((key) => demo.tenant.topics[key].currentRevisionId as string);
    for await (const part of exportParts(exportSourceOf(client), { revisionIds, traces: true }))
      await collector.write(part);
    return collector.report().rules.map((r) => ({
      rule: `${r.rule.source.name} → ${r.rule.target.name}`,
      covered: `${r.covered}/${r.total}`,
      uncovered: r.uncovered,
      orphans: r.orphans,
    }));
  }

  it('holds seven topics of a few dozen records along the V', async () => {
    const topics = demo.tenant.topics;
    expect(Object.keys(topics).sort()).toEqual(
      [
        'designOutputs',
        'releaseRecords',
        'riskControls',
        'systemRequirements',
        'userNeeds',
        'validationStudies',
        'verificationTests',
      ].sort(),
    );
    const records = Object.values(topics).reduce((n: number, t: any) => n + t.recordIds.length, 0);
    expect(records).toBeGreaterThanOrEqual(28);
    expect(demo.traceIds.length).toBeGreaterThanOrEqual(25);
  });

  it('shows its deliberate gaps in the traceability report', async () => {
    expect(await coverage('userNeeds', 'systemRequirements', 'designOutputs')).toEqual([
      {
        rule: 'User Needs → System Requirements',
        covered: '4/6',
        uncovered: ['UN-5', 'UN-6'],
        orphans: [],
      },
      {
        rule: 'System Requirements → Design Outputs',
        covered: '4/4',
        uncovered: [],
        orphans: ['DO-3', 'DO-6'],
      },
    ]);
    const [verification] = await coverage('systemRequirements', 'verificationTests');
    expect(verification!.uncovered.map((id) => id.slice(0, 7))).toEqual(['REQ_004']);
    expect(verification!.orphans).toEqual(['TC-004']);
    const [validation] = await coverage('validationStudies', 'userNeeds');
    expect(validation).toMatchObject({ covered: '3/3', orphans: ['UN-5', 'UN-6'] });
  }, 60_000);
});
