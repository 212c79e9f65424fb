import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemo, type DemoInfo } from '@rxs/server';
import { startTestServer, type TestServer } from '../../server/test/harness.js';
import { runCli } from './run-cli.js';

type Tenant = 'source' | 'target';

interface Listed {
  _id: string;
  name: string;
  data: Record<string, unknown>;
  context: { global_element_id?: string | null };
}

interface Outline {
  entries: { record_id: string; level: number }[];
  updated_at: string | null;
}

/** A topic of the export and its copy in the other tenant. */
interface TopicPair {
  key: string;
  name: string;
  typeName: string;
  targetRevision: string;
  targetHistory: string;
}

/** What one import of a file into fresh topics of the other tenant gave. */
interface Copy {
  pairs: TopicPair[];
  importArgs: string[];
  report: any;
  /** The copies by their source id (the SPEC-OBJECT IDENTIFIER they were imported from). */
  bySourceId: Map<string, Listed>;
  records: Listed[];
  sourceIdOf: (recordId: string) => string;
}

/** The SPEC-OBJECTs of an exported file: IDENTIFIER and the LONG-NAME of its SPEC-OBJECT-TYPE. */
function specObjectsOf(xml: string): { identifier: string; typeName: string }[] {
  const typeNames = new Map(
    [...xml.matchAll(/<SPEC-OBJECT-TYPE IDENTIFIER="([^"]+)"[^>]*LONG-NAME="([^"]+)"/g)].map((m) => [
      m[1]!,
      m[2]!,
    ]),
  );
  return [...xml.matchAll(/<SPEC-OBJECT IDENTIFIER="([^"]+)"[\s\S]*?<SPEC-OBJECT-TYPE-REF>([^<]+)</g)].map(
    (m) => ({ identifier: m[1]!, typeName: typeNames.get(m[2]!)! }),
  );
}

/** Levels of the source outlines put before the export, over all of a topic's records in demo order. */
const OUTLINED: Record<string, number[]> = {
  systemRequirements: [1, 2, 3, 1],
  userNeeds: [1, 2, 2, 1, 2, 3],
};

describe('rxs export --format reqif --traces of the V-model, rxs import into another tenant', () => {
  let t: TestServer;
  let demo: DemoInfo;
  let dir: string;
  const keyFiles = {} as Record<Tenant, string>;
  const keys = {} as Record<Tenant, string>;
  const rxs = (tenant: Tenant, ...args: string[]) =>
    runCli([...args, '--url', t.url, '--api-key-file', keyFiles[tenant], '--quiet']);
  const api = (tenant: Tenant, method: string, path: string, body?: unknown) =>
    t.api(method, path, { key: keys[tenant], ...(body !== undefined && { body }) });
  const recordsOf = async (tenant: Tenant, revision: string) => {
    const listed = await api(tenant, 'GET', `/records/?context__knowledge_unit_topic_id=${revision}`);
    expect(listed.status, listed.text).toBe(200);
    return listed.body as Listed[];
  };
  const outlineOf = async (tenant: Tenant, history: string) => {
    const got = await api(tenant, 'GET', `/records/outline/${history}`);
    expect(got.status, got.text).toBe(200);
    return got.body as Outline;
  };
  /** Every trace touching the records, once, as "source -relation-> target" by `nameOf`. */
  const tracesOf = async (tenant: Tenant, records: Listed[], nameOf: (id: string) => string) => {
    const listed = await api(tenant, 'POST', '/traces/batch/list', {
      nodes: records.map((record) => ({ node_id: record._id, node_type: 'Record' })),
    });
    expect(listed.status, listed.text).toBe(200);
    const edges = new Map<string, string>();
    for (const result of Object.values(
      listed.body.results as Record<
        string,
        { edges: { _id: string; source: string; target: string; relation_type: string[] }[] }
      >,
    ))
      for (const edge of result.edges)
        edges.set(
          edge._id,
          `${nameOf(edge.source)} -${[...edge.relation_type].sort().join(',')}-> ${nameOf(edge.target)}`,
        );
    return [...edges.values()].sort();
  };

  // The export and what the source tenant holds, by the SPEC-OBJECT IDENTIFIER of each record.
  let exported: string;
  let sourceRecords: Map<string, Listed[]>;
  let identifierOf: Map<string, string>;
  let typeNameOf: Map<string, string>;
  let sourceTraces: string[];

  beforeAll(async () => {
    t = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), 'rxs-reqif-tenant-'));
    // The whole V-model demo on the same database (the plain demo's tenants are discarded first).
    demo = await seedDemo(t.server.app.services, {
      dataDir: join(dir, 'demo'),
      baseUrl: t.url,
      vModel: true,
    });
    keys.source = demo.tenant.users.owner.apiKey;
    keys.target = demo.otherTenant.users.owner.apiKey;
    for (const tenant of ['source', 'target'] as const) {
      keyFiles[tenant] = join(dir, `${tenant}.key`);
      writeFileSync(keyFiles[tenant], `${keys[tenant]}\n`);
    }

    for (const [key, levels] of Object.entries(OUTLINED)) {
      const topic = demo.tenant.topics[key]!;
      expect(topic.recordIds).toHaveLength(levels.length);
      const entries = topic.recordIds.map((record_id, i) => ({ record_id, level: levels[i]! }));
      const put = await api('source', 'PUT', `/records/outline/${topic.historyId}`, { entries });
      expect(put.status, put.text).toBe(200);
    }

    exported = join(dir, 'v-model.reqif');
    const exporting = await rxs(
      'source',
      'export',
      ...Object.values(demo.tenant.topics).flatMap((topic) => ['--kt', topic.currentRevisionId]),
      '--traces',
      '--format',
      'reqif',
      '--out',
      exported,
    );
    expect(exporting.code, exporting.stdout + exporting.stderr).toBe(0);
    const objects = specObjectsOf(readFileSync(exported, 'utf8'));

    sourceRecords = new Map();
    identifierOf = new Map();
    typeNameOf = new Map();
    for (const [key, topic] of Object.entries(demo.tenant.topics)) {
      const records = await recordsOf('source', topic.currentRevisionId);
      expect(records.map((r) => r._id).sort()).toEqual([...topic.recordIds].sort());
      sourceRecords.set(key, records);
      for (const record of records) {
        const object = objects.find(
          (o) => o.identifier === record.context.global_element_id || o.identifier === `R-${record._id}`,
        );
        expect(object, `SPEC-OBJECT of ${record.name}`).toBeDefined();
        identifierOf.set(record._id, object!.identifier);
        expect(typeNameOf.get(key) ?? object!.typeName).toBe(object!.typeName);
        typeNameOf.set(key, object!.typeName);
      }
    }
    expect(objects).toHaveLength(identifierOf.size);
    sourceTraces = await tracesOf(
      'source',
      [...sourceRecords.values()].flat(),
      (id) => identifierOf.get(id) ?? `outside:${id}`,
    );
    // Every demo trace is between records of the exported topics.
    expect(sourceTraces).toHaveLength(demo.traceIds.length);
    expect(sourceTraces.join('\n')).not.toContain('outside:');
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * `file` imported into new topics of the other tenant (same names and forms, approved), one
   * --type for each topic's ReqIF type name. `fileId` is the IDENTIFIER the file gives a source id.
   */
  async function copyInto(file: string, fileId: (identifier: string) => string): Promise<Copy> {
    const pairs: TopicPair[] = [];
    for (const [key, topic] of Object.entries(demo.tenant.topics)) {
      const revision = (await api('source', 'GET', `/kt/${topic.currentRevisionId}`)).body;
      const draft = await api('target', 'POST', '/kt/', {
        knowledge_topic_name: revision.knowledge_topic_name,
        type: revision.type,
        knowledge_topic_schema: revision.knowledge_topic_schema,
      });
      expect(draft.status, draft.text).toBe(201);
      const approved = await api('target', 'POST', `/kt/${draft.body._id}/approve`);
      expect(approved.status, approved.text).toBe(200);
      pairs.push({
        key,
        name: topic.name,
        typeName: typeNameOf.get(key)!,
        targetRevision: approved.body._id,
        targetHistory: approved.body.knowledge_topic_history_id,
      });
    }
    const importArgs = [
      'import',
      file,
      ...pairs.flatMap((pair) => ['--type', `${pair.typeName}=${pair.targetRevision}`]),
      // The file's record ids are the source tenant's: its rows are copied in as new records.
      '--new-records',
      '--json',
    ];
    const first = await rxs('target', ...importArgs);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const report = JSON.parse(first.stdout);
    expect(report.imports.map((r: { created: number }) => r.created)).toEqual(
      pairs.map((pair) => sourceRecords.get(pair.key)!.length),
    );

    // The same number of records, names and values, found by their readable id (the record name).
    const records: Listed[] = [];
    const bySourceId = new Map<string, Listed>();
    const sourceIds = new Map<string, string>();
    for (const pair of pairs) {
      const copies = await recordsOf('target', pair.targetRevision);
      const originals = sourceRecords.get(pair.key)!;
      expect(copies, pair.name).toHaveLength(originals.length);
      const byName = new Map(copies.map((copy) => [copy.name, copy]));
      for (const original of originals) {
        const copy = byName.get(original.name);
        expect(copy, `${pair.name}: ${original.name}`).toBeDefined();
        expect(copy!.data, `${pair.name}: ${original.name}`).toEqual(original.data);
        const sourceId = fileId(identifierOf.get(original._id)!);
        if (copy!.context.global_element_id === sourceId) bySourceId.set(sourceId, copy!);
        sourceIds.set(copy!._id, identifierOf.get(original._id)!);
      }
      records.push(...copies);
    }
    return {
      pairs,
      importArgs,
      report,
      bySourceId,
      records,
      sourceIdOf: (id) => sourceIds.get(id) ?? `outside:${id}`,
    };
  }

  /** The same traces between corresponding records, none to records outside; the same outlines. */
  async function expectTracesAndOutlines(copy: Copy) {
    expect(await tracesOf('target', copy.records, copy.sourceIdOf)).toEqual(sourceTraces);
    expect(copy.report.relations).toMatchObject({ created: sourceTraces.length, existing: 0, skipped: 0 });
    for (const [key, levels] of Object.entries(OUTLINED)) {
      const pair = copy.pairs.find((p) => p.key === key)!;
      const outline = await outlineOf('target', pair.targetHistory);
      expect(
        outline.entries.map(({ record_id, level }) => ({ object: copy.sourceIdOf(record_id), level })),
        pair.name,
      ).toEqual(
        demo.tenant.topics[key]!.recordIds.map((id, i) => ({
          object: identifierOf.get(id),
          level: levels[i],
        })),
      );
    }
  }

  /** A second import of the same file: nothing created or updated, no trace created, outlines as they were. */
  async function expectSecondImportChangesNothing(copy: Copy) {
    const outlines = await Promise.all(copy.pairs.map((pair) => outlineOf('target', pair.targetHistory)));
    const traces = await tracesOf('target', copy.records, copy.sourceIdOf);
    const again = await rxs('target', ...copy.importArgs);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    const second = JSON.parse(again.stdout);
    for (const [i, pair] of copy.pairs.entries())
      expect(second.imports[i], pair.name).toMatchObject({
        created: 0,
        updated: 0,
        unchanged: sourceRecords.get(pair.key)!.length,
      });
    expect(second.relations).toMatchObject({ created: 0 });
    for (const [i, pair] of copy.pairs.entries())
      expect(await outlineOf('target', pair.targetHistory), pair.name).toEqual(outlines[i]);
    expect(await tracesOf('target', copy.records, copy.sourceIdOf)).toEqual(traces);
    for (const pair of copy.pairs)
      expect(await recordsOf('target', pair.targetRevision), pair.name).toHaveLength(
        sourceRecords.get(pair.key)!.length,
      );
  }

  it('as exported: the same records, names and values; a second import changes nothing', async () => {
    const copy = await copyInto(exported, (identifier) => identifier);
    await expectSecondImportChangesNothing(copy);
  });

  it('as exported: the same traces and outlines (the copies keep the R-<id> they were exported as)', async () => {
    const copy = await copyInto(exported, (identifier) => identifier);
    await expectTracesAndOutlines(copy);
  });

  it('with IDENTIFIERs the import keeps as source ids: the records, traces and outlines; a second import changes nothing', async () => {
    const renamed = join(dir, 'v-model-source-ids.reqif');
    const asSourceId = (identifier: string) => identifier.replace(/^R-/, 'SRC-');
    writeFileSync(renamed, readFileSync(exported, 'utf8').replace(/\bR-(?=[0-9a-f]{24}\b)/g, 'SRC-'));
    const copy = await copyInto(renamed, asSourceId);
    expect(copy.bySourceId.size).toBe(identifierOf.size);
    await expectTracesAndOutlines(copy);
    await expectSecondImportChangesNothing(copy);
  });
});
