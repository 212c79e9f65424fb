import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { openStorage } from '@rxs/server';
import { afterAll, describe, expect, it } from 'vitest';
import { call, type Reply } from './support/http.js';
import { killAll, rxsBin as bin, startServe, type ServeProcess } from './support/process.js';
import { Prng } from './support/prng.js';
import { summarize, writeFigures } from './support/stats.js';

/**
 * Crash consistency: `rxs serve` (a real process on a real SQLite file) is killed with SIGKILL in
 * the middle of a stream of concurrent writes, again and again. After every restart, every write
 * the server acknowledged (201/200/204) must be there, byte for byte; writes in flight at the kill
 * may or may not have happened, but never half; SQLite's integrity check must pass; and the history
 * holds exactly one version for each change that happened, none for one that did not.
 */

const KILLS = Number(process.env.RXS_SOAK_KILLS ?? 50);

const crashSchema = {
  components: [
    { type: 'textfield', id: 'Field_c1', key: 'title', label: 'Title', validate: { required: true } },
    { type: 'number', id: 'Field_c2', key: 'count', label: 'Count' },
    { type: 'textarea', id: 'Field_c3', key: 'body', label: 'Body' },
  ],
};
const RELATIONS = ['is_related', 'mentions', 'has_parent', 'is_parent', 'is_mentioned_by'] as const;

type Pending =
  | { kind: 'create' }
  | { kind: 'patch'; data: Record<string, unknown>; fromVersion: string }
  | { kind: 'delete' };

interface RecordModel {
  name: string;
  id?: string;
  /** The last acknowledged body. */
  acked?: any;
  deleted: boolean;
  pending?: Pending;
  /** The request body of the create (to check an adopted, unacknowledged create). */
  request: any;
  topic?: TopicModel;
  lane: string;
  /** Its own changes that happened (acknowledged, or in flight and found applied): one version each. */
  changes: number;
}

interface TraceModel {
  triple: string;
  source: RecordModel;
  target: RecordModel;
  relation: string;
  id?: string;
  acked?: any;
  deleted: boolean;
  pending?: 'create' | 'delete';
}

interface RevisionModel {
  id: string;
  status: 'draft' | 'approved';
  version: string;
  schemaLabel: string;
  pending?: { kind: 'approve' } | { kind: 'patch'; schemaLabel: string };
}

interface TopicModel {
  name: string;
  historyId?: string;
  revisions: RevisionModel[];
  pending?: { kind: 'create' } | { kind: 'draft' };
  records: RecordModel[];
  step: number;
  dropped?: boolean;
}

const stats = {
  kills: 0,
  acked: {} as Record<string, number>,
  inFlightAtKill: { applied: 0, notApplied: 0 },
  integrityChecks: 0,
  historyChecks: 0,
  restartMs: [] as number[],
  verifyMs: [] as number[],
};
const count = (what: string) => (stats.acked[what] = (stats.acked[what] ?? 0) + 1);

class CrashWorld {
  records = new Map<string, RecordModel>();
  traces = new Map<string, TraceModel>();
  topics: TopicModel[] = [];
  failures: string[] = [];
  acksThisCycle = 0;
  stopping = false;
  private seq = 0;

  constructor(
    readonly prng: Prng,
    readonly key: string,
    readonly baseRevision: string,
  ) {}

  uid(prefix: string) {
    return `${prefix}-${(this.seq++).toString().padStart(6, '0')}`;
  }

  private unexpected(what: string, reply: Reply) {
    this.failures.push(`${what}: HTTP ${reply.status} ${reply.text.slice(0, 300)}`);
    this.stopping = true;
  }

  private ack() {
    this.acksThisCycle++;
  }

  liveRecords(lane: string) {
    return [...this.records.values()].filter(
      (r) => r.lane === lane && r.acked && !r.deleted && !r.pending && !r.topic,
    );
  }

  // ---- record lanes: create, patch (with the expected version) and delete their own records ----
  async recordLane(url: string, lane: string): Promise<void> {
    const prng = this.prng;
    while (!this.stopping) {
      const mine = this.liveRecords(lane);
      const roll = prng.next();
      if (mine.length > 0 && roll < 0.3) {
        const record = prng.pick(mine);
        const data = { title: `patched ${this.uid('p')}`, count: prng.int(0, 1e6), body: prng.text(300) };
        record.pending = { kind: 'patch', data, fromVersion: record.acked.version };
        const reply = await this.send(url, 'PATCH', `/records/${record.id}`, {
          data,
          version: record.acked.version,
        });
        if (!reply) return;
        if (reply.status !== 200) return this.unexpected(`PATCH /records/${record.id}`, reply);
        record.acked = reply.body;
        record.pending = undefined;
        record.changes++;
        count('record patched');
      } else if (mine.length > 3 && roll < 0.4) {
        const record = prng.pick(mine);
        record.pending = { kind: 'delete' };
        const reply = await this.send(url, 'DELETE', `/records/${record.id}`);
        if (!reply) return;
        if (reply.status !== 204) return this.unexpected(`DELETE /records/${record.id}`, reply);
        record.deleted = true;
        record.pending = undefined;
        record.changes++;
        count('record deleted');
      } else if (!(await this.createRecord(url, lane, this.baseRevision))) {
        return;
      }
      this.ack();
    }
  }

  /** Creates a record; returns it when acknowledged, undefined when the server died first. */
  async createRecord(url: string, lane: string, revision: string, topic?: TopicModel) {
    const name = this.uid(`crash-r-${lane}`);
    const request = {
      name,
      form: {},
      data: { title: name, count: this.prng.int(0, 1000), body: this.prng.text(600) },
      context: { knowledge_unit_topic_id: revision },
    };
    const record: RecordModel = {
      name,
      request,
      deleted: false,
      pending: { kind: 'create' },
      topic,
      lane,
      changes: 0,
    };
    this.records.set(name, record);
    topic?.records.push(record);
    const reply = await this.send(url, 'POST', '/records/', request);
    if (!reply) return undefined;
    if (reply.status !== 201) {
      this.unexpected('POST /records/', reply);
      return undefined;
    }
    record.id = reply.body._id;
    record.acked = reply.body;
    record.pending = undefined;
    record.changes = 1;
    count('record created');
    return record;
  }

  // ---- the graph lane: its own records, traces between them, deleting traces and linked records ----
  async graphLane(url: string): Promise<void> {
    const prng = this.prng;
    while (!this.stopping) {
      const mine = this.liveRecords('graph');
      const live = [...this.traces.values()].filter((t) => t.acked && !t.deleted && !t.pending);
      const roll = prng.next();
      if (mine.length < 4 || roll < 0.25) {
        if (!(await this.createRecord(url, 'graph', this.baseRevision))) return;
      } else if (roll < 0.75) {
        const source = prng.pick(mine);
        const target = prng.pick(mine.filter((r) => r !== source));
        const relation = prng.pick(RELATIONS);
        const triple = `${source.id}>${target.id}:${relation}`;
        if (this.traces.has(triple)) continue;
        const trace: TraceModel = { triple, source, target, relation, deleted: false, pending: 'create' };
        this.traces.set(triple, trace);
        const reply = await this.send(url, 'POST', '/traces/', {
          source: { node_id: source.id, node_type: 'Record' },
          target: { node_id: target.id, node_type: 'Record' },
          relation_type: relation,
        });
        if (!reply) return;
        if (reply.status !== 201) return this.unexpected('POST /traces/', reply);
        trace.id = reply.body._id;
        trace.acked = reply.body;
        trace.pending = undefined;
        count('trace created');
      } else if (roll < 0.9 && live.length > 0) {
        const trace = prng.pick(live);
        trace.pending = 'delete';
        const reply = await this.send(url, 'DELETE', `/traces/${trace.id}`);
        if (!reply) return;
        if (reply.status !== 204) return this.unexpected(`DELETE /traces/${trace.id}`, reply);
        trace.deleted = true;
        trace.pending = undefined;
        count('trace deleted');
      } else {
        // Deleting a linked record removes its traces in the same transaction.
        const linked = mine.filter((r) => live.some((t) => t.source === r || t.target === r));
        if (linked.length === 0) continue;
        const record = prng.pick(linked);
        record.pending = { kind: 'delete' };
        const reply = await this.send(url, 'DELETE', `/records/${record.id}`);
        if (!reply) return;
        if (reply.status !== 204) return this.unexpected(`DELETE /records/${record.id}`, reply);
        record.deleted = true;
        record.pending = undefined;
        record.changes++;
        for (const t of this.traces.values())
          if (t.source === record || t.target === record) t.deleted = true;
        count('linked record deleted');
      }
      this.ack();
    }
  }

  // ---- the KT lane: create a topic, approve it, give it records, re-approve it (records move) ----
  async topicLane(url: string): Promise<void> {
    while (!this.stopping) {
      let topic = this.topics.findLast((t) => !t.dropped);
      if (!topic || topic.step >= 6) {
        topic = { name: this.uid('crash-kt'), revisions: [], records: [], step: 0 };
        this.topics.push(topic);
      }
      const ok = await this.topicStep(url, topic);
      if (!ok) return;
      this.ack();
    }
  }

  private async topicStep(url: string, topic: TopicModel): Promise<boolean> {
    const last = topic.revisions[topic.revisions.length - 1];
    switch (topic.step) {
      case 0: {
        topic.pending = { kind: 'create' };
        const label = `Title ${topic.name}`;
        const reply = await this.send(url, 'POST', '/kt/', {
          knowledge_topic_name: topic.name,
          type: 'multi_record',
          knowledge_topic_schema: withLabel(label),
        });
        if (!reply) return false;
        if (reply.status !== 201) return (this.unexpected('POST /kt/', reply), false);
        topic.historyId = reply.body.knowledge_topic_history_id;
        topic.revisions.push({ id: reply.body._id, status: 'draft', version: '1.0', schemaLabel: label });
        topic.pending = undefined;
        count('KT created');
        break;
      }
      case 1:
      case 5: {
        last!.pending = { kind: 'approve' };
        const reply = await this.send(url, 'POST', `/kt/${last!.id}/approve`);
        if (!reply) return false;
        if (reply.status !== 200) return (this.unexpected(`POST /kt/${last!.id}/approve`, reply), false);
        last!.status = 'approved';
        last!.pending = undefined;
        count(topic.step === 1 ? 'KT approved' : 'KT re-approved (records moved)');
        break;
      }
      case 2: {
        for (let i = 0; i < 2; i++) {
          const created = await this.createRecord(url, 'kt', last!.id, topic);
          if (!created) return false;
        }
        break;
      }
      case 3: {
        topic.pending = { kind: 'draft' };
        const reply = await this.send(url, 'POST', `/kt/${last!.id}/draft`);
        if (!reply) return false;
        if (reply.status !== 201) return (this.unexpected(`POST /kt/${last!.id}/draft`, reply), false);
        topic.revisions.push({
          id: reply.body._id,
          status: 'draft',
          version: reply.body.version,
          schemaLabel: last!.schemaLabel,
        });
        topic.pending = undefined;
        count('KT draft opened');
        break;
      }
      case 4: {
        const label = `Title v2 ${this.uid('l')}`;
        last!.pending = { kind: 'patch', schemaLabel: label };
        const reply = await this.send(url, 'PATCH', `/kt/${last!.id}`, {
          knowledge_topic_schema: withLabel(label),
        });
        if (!reply) return false;
        if (reply.status !== 200) return (this.unexpected(`PATCH /kt/${last!.id}`, reply), false);
        last!.schemaLabel = label;
        last!.pending = undefined;
        count('KT draft edited');
        break;
      }
    }
    topic.step++;
    return true;
  }

  /** A request of a lane; undefined when the connection died (the server was killed). */
  private async send(url: string, method: string, path: string, body?: unknown) {
    try {
      return await call(url, method, path, { key: this.key, body });
    } catch {
      return undefined;
    }
  }

  // ---- after a restart: everything acknowledged is there, intact; in-flight writes all or nothing ----
  async verify(url: string, since: string): Promise<void> {
    const problems: string[] = [];
    const outcome = (applied: boolean) =>
      applied ? stats.inFlightAtKill.applied++ : stats.inFlightAtKill.notApplied++;
    await this.verifyTopics(url, problems, outcome);

    const listing = await call(url, 'GET', `/records/?audit_info__start_date=${since}`, { key: this.key });
    expect(listing.status).toBe(200);
    const byId = new Map<string, any>();
    const byName = new Map<string, any>();
    for (const row of listing.body as any[]) {
      if (byName.has(row.name)) problems.push(`two records named ${row.name}`);
      byId.set(row._id, row);
      byName.set(row.name, row);
    }
    const known = new Set<string>();
    for (const record of [...this.records.values()]) {
      const pending = record.pending;
      record.pending = undefined;
      if (pending?.kind === 'create') {
        const found = byName.get(record.name);
        outcome(!!found);
        if (!found) {
          this.records.delete(record.name);
          if (record.topic) record.topic.records = record.topic.records.filter((r) => r !== record);
          continue;
        }
        if (JSON.stringify(found.data) !== JSON.stringify(record.request.data))
          problems.push(`record ${record.name} was created with other data than sent`);
        record.id = found._id;
        record.acked = found;
        record.changes = 1;
      }
      if (!record.id) continue;
      known.add(record.id);
      const found = byId.get(record.id);
      if (record.deleted) {
        if (found) problems.push(`record ${record.id} was deleted (204) but is back`);
        continue;
      }
      if (pending?.kind === 'delete') {
        outcome(!found);
        if (!found) {
          record.deleted = true;
          record.changes++;
          continue;
        }
      }
      if (!found) {
        problems.push(`acknowledged record ${record.id} (${record.name}) is missing`);
        continue;
      }
      let expected = record.acked;
      if (pending?.kind === 'patch') {
        const applied = found.version !== record.acked.version;
        outcome(applied);
        if (applied) {
          if (JSON.stringify(found.data) !== JSON.stringify(pending.data))
            problems.push(`record ${record.id}: an in-flight patch was half applied`);
          expected = found;
          record.changes++;
        }
      }
      const comparable = (r: any) =>
        JSON.stringify({ ...r, context: { ...r.context, knowledge_unit_topic_id: 0 } });
      if (comparable(found) !== comparable(expected))
        problems.push(
          `record ${record.id} differs from its acknowledged state:\n${comparable(found)}\n${comparable(expected)}`,
        );
      record.acked = found;
      if (!record.topic && found.context.knowledge_unit_topic_id !== this.baseRevision)
        problems.push(`record ${record.id} moved to another revision`);
    }
    for (const row of listing.body as any[]) {
      if (!known.has(row._id)) problems.push(`record ${row._id} (${row.name}) was never written`);
    }

    // Every topic's records live under its current revision: a re-approval moved all or none.
    for (const topic of this.topics) {
      if (topic.dropped || topic.revisions.length === 0) continue;
      const current = topic.revisions.filter((r) => r.status === 'approved').pop();
      for (const record of topic.records) {
        if (!record.acked || record.deleted) continue;
        if (record.acked.context.knowledge_unit_topic_id !== current?.id)
          problems.push(
            `record ${record.id} of ${topic.name} is under ${record.acked.context.knowledge_unit_topic_id}, not the current revision ${current?.id}`,
          );
      }
    }

    await this.verifyTraces(url, problems, outcome);
    expect(problems, problems.join('\n')).toEqual([]);
  }

  private async verifyTopics(url: string, problems: string[], outcome: (applied: boolean) => void) {
    const revisions: any[] = [];
    let after = '';
    for (;;) {
      const page = await call(url, 'GET', `/kt/?name=crash-kt&limit=500${after}`, { key: this.key });
      expect(page.status).toBe(200);
      revisions.push(...page.body);
      if (page.body.length < 500) break;
      after = `&after=${page.body[page.body.length - 1]._id}`;
    }
    const byId = new Map(revisions.map((r) => [r._id, r]));
    const known = new Set<string>();
    for (const topic of this.topics) {
      if (topic.dropped) continue;
      const pending = topic.pending;
      topic.pending = undefined;
      if (pending?.kind === 'create') {
        const found = revisions.find((r) => r.knowledge_topic_name === topic.name);
        outcome(!!found);
        if (!found) {
          topic.dropped = true;
          continue;
        }
        topic.historyId = found.knowledge_topic_history_id;
        topic.revisions.push({
          id: found._id,
          status: 'draft',
          version: '1.0',
          schemaLabel: `Title ${topic.name}`,
        });
        topic.step = 1;
      }
      if (pending?.kind === 'draft') {
        const found = revisions.find(
          (r) =>
            r.knowledge_topic_history_id === topic.historyId && !topic.revisions.some((m) => m.id === r._id),
        );
        outcome(!!found);
        if (found) {
          const from = topic.revisions[topic.revisions.length - 1]!;
          topic.revisions.push({
            id: found._id,
            status: 'draft',
            version: found.version,
            schemaLabel: from.schemaLabel,
          });
          topic.step = 4;
        }
      }
      for (const revision of topic.revisions) {
        known.add(revision.id);
        const found = byId.get(revision.id);
        if (!found) {
          problems.push(`acknowledged KT revision ${revision.id} of ${topic.name} is missing`);
          continue;
        }
        const p = revision.pending;
        revision.pending = undefined;
        if (p?.kind === 'approve') {
          outcome(found.status === 'approved');
          if (found.status === 'approved') {
            revision.status = 'approved';
            topic.step++;
          }
        }
        if (p?.kind === 'patch') {
          const label = found.knowledge_topic_schema.components[0]?.label;
          outcome(label === p.schemaLabel);
          if (label === p.schemaLabel) {
            revision.schemaLabel = label;
            topic.step++;
          }
        }
        const facts = {
          name: found.knowledge_topic_name,
          history: found.knowledge_topic_history_id,
          status: found.status,
          version: found.version,
          schema: JSON.stringify(found.knowledge_topic_schema),
        };
        const expected = {
          name: topic.name,
          history: topic.historyId,
          status: revision.status,
          version: revision.version,
          schema: JSON.stringify(withLabel(revision.schemaLabel)),
        };
        if (JSON.stringify(facts) !== JSON.stringify(expected))
          problems.push(
            `KT revision ${revision.id}: ${JSON.stringify(facts)} is not ${JSON.stringify(expected)}`,
          );
      }
      const approved = topic.revisions.filter((r) => r.status === 'approved').pop();
      const shown = byId.get(topic.revisions[0]!.id)?.latest_revision_id;
      if (approved && shown !== approved.id)
        problems.push(`topic ${topic.name}: current revision is ${shown}, expected ${approved.id}`);
    }
    for (const revision of revisions)
      if (!known.has(revision._id)) problems.push(`KT revision ${revision._id} was never written`);
  }

  private async verifyTraces(url: string, problems: string[], outcome: (applied: boolean) => void) {
    const nodes = [...this.records.values()].filter((r) => r.lane === 'graph' && r.id).map((r) => r.id!);
    const edges = new Map<string, any>();
    for (let i = 0; i < nodes.length; i += 500) {
      const reply = await call(url, 'POST', '/traces/batch/list', {
        key: this.key,
        body: {
          nodes: nodes.slice(i, i + 500).map((id) => ({ node_id: id, node_type: 'Record', version: '1' })),
        },
      });
      expect(reply.status).toBe(200);
      for (const result of Object.values(reply.body.results) as any[])
        for (const edge of result.edges) edges.set(edge._id, edge);
    }
    const byTriple = new Map(
      [...edges.values()].map((e) => [`${e.source}>${e.target}:${e.relation_type[0]}`, e]),
    );
    const known = new Set<string>();
    for (const trace of [...this.traces.values()]) {
      const pending = trace.pending;
      trace.pending = undefined;
      const found = byTriple.get(trace.triple);
      const endGone = trace.source.deleted || trace.target.deleted;
      if (pending === 'create') {
        outcome(!!found);
        if (!found) {
          this.traces.delete(trace.triple);
          continue;
        }
        trace.id = found._id;
        trace.acked = found;
      }
      if (!trace.id) continue;
      known.add(trace.id);
      if (endGone) trace.deleted = true;
      if (trace.deleted) {
        if (found) problems.push(`trace ${trace.id} was deleted (or its record was) but is still there`);
        continue;
      }
      if (pending === 'delete') {
        outcome(!found);
        if (!found) {
          trace.deleted = true;
          continue;
        }
      }
      if (!found) problems.push(`acknowledged trace ${trace.id} (${trace.triple}) is missing`);
      else if (found._id !== trace.id) problems.push(`trace ${trace.triple} changed its id`);
    }
    for (const edge of edges.values())
      if (!known.has(edge._id)) problems.push(`trace ${edge._id} was never written`);
  }
}

function withLabel(label: string) {
  const [first, ...rest] = crashSchema.components;
  return { components: [{ ...first, label }, ...rest] };
}

/** SQLite's own checks of the file the killed process left behind (after the restart recovered it). */
async function checkIntegrity(dataDir: string): Promise<void> {
  const storage = await openStorage({ url: join(dataDir, 'rxs.db') });
  try {
    expect(await storage.integrityCheck()).toEqual([]);
    const orphans = await sql`PRAGMA foreign_key_check`.execute(storage.db);
    expect(orphans.rows).toEqual([]);
    stats.integrityChecks++;
  } finally {
    await storage.close();
  }
}

/**
 * History after a kill: every change that happened left exactly one version, and no version exists
 * for a change that did not happen. Read from the file itself (WAL lets it be read beside the server):
 * - a record's version numbers have no gap (none lost, none twice);
 * - a live record's last version is the record as it is; a record that is gone was last deleted;
 * - each record of the world has one created/updated/deleted version per change of its own;
 * - a live trace was last created, and a trace that is gone was last deleted;
 * - the changes feed's log holds every version, and ends at each listing counter.
 */
function checkHistory(dataDir: string, world: CrashWorld): void {
  const db = new SQLite(join(dataDir, 'rxs.db'), { readonly: true, fileMustExist: true });
  const problems: string[] = [];
  const rows = (query: string) => db.prepare(query).all() as Record<string, unknown>[];
  const lastVersion = (of: string) =>
    `v.n = (SELECT MAX(w.n) FROM record_versions w WHERE w.record_id = ${of})`;
  try {
    for (const row of rows(
      `SELECT record_id, COUNT(*) AS versions, MIN(n) AS first, MAX(n) AS last FROM record_versions
       GROUP BY tenant_id, record_id HAVING MAX(n) - MIN(n) + 1 <> COUNT(*)`,
    ))
      problems.push(`versions with a gap or a repeat: ${JSON.stringify(row)}`);
    for (const row of rows(
      `SELECT r.id, v.action, v.version AS versionOfHistory, r.version FROM records r
       LEFT JOIN record_versions v ON v.record_id = r.id AND ${lastVersion('r.id')}
       WHERE v.record_id IS NULL OR v.action = 'deleted' OR v.version <> r.version OR v.name <> r.name
         OR v.data <> r.data OR v.context <> r.context OR v.kt_revision_id IS NOT r.kt_revision_id`,
    ))
      problems.push(`a live record whose last version is not the record: ${JSON.stringify(row)}`);
    for (const row of rows(
      `SELECT v.record_id, v.n, v.action FROM record_versions v
       WHERE ${lastVersion('v.record_id')} AND v.action <> 'deleted'
         AND NOT EXISTS (SELECT 1 FROM records r WHERE r.id = v.record_id)`,
    ))
      problems.push(`a version of a change that did not happen (the record is gone): ${JSON.stringify(row)}`);
    const ownChanges = new Map(
      rows(
        `SELECT record_id, COUNT(*) AS c FROM record_versions
         WHERE action IN ('created', 'updated', 'deleted') GROUP BY record_id`,
      ).map((r) => [r.record_id as string, r.c as number]),
    );
    for (const record of world.records.values()) {
      if (!record.id) continue;
      const versions = ownChanges.get(record.id) ?? 0;
      if (versions !== record.changes)
        problems.push(`record ${record.id}: ${record.changes} changes happened, ${versions} versions`);
    }
    for (const row of rows(
      `SELECT e.trace_id, SUM(e.action = 'created') AS created, SUM(e.action = 'deleted') AS deleted,
         EXISTS (SELECT 1 FROM traces t WHERE t.id = e.trace_id) AS live
       FROM trace_events e GROUP BY e.trace_id
       HAVING created <> 1 OR deleted > 1 OR live = deleted`,
    ))
      problems.push(`a trace whose events are not its life: ${JSON.stringify(row)}`);
    for (const row of rows(
      `SELECT t.id FROM traces t WHERE NOT EXISTS (SELECT 1 FROM trace_events e WHERE e.trace_id = t.id)`,
    ))
      problems.push(`a trace without its event: ${JSON.stringify(row)}`);
    // The changes feed's log (migrations/006_changes_feeds.ts) went with every change: each version
    // is logged under its revision, and each revision's counter (its ETag) is its log's newest step.
    for (const row of rows(
      `SELECT v.record_id, v.n FROM record_versions v WHERE NOT EXISTS (
         SELECT 1 FROM record_listing_changes c WHERE c.tenant_id = v.tenant_id
           AND c.kt_revision_id = coalesce(v.kt_revision_id, '') AND c.record_id = v.record_id)`,
    ))
      problems.push(`a version the changes feed does not know of: ${JSON.stringify(row)}`);
    for (const row of rows(
      `SELECT t.tenant_id, t.kt_revision_id, t.changes, (SELECT MAX(c.seq) FROM record_listing_changes c
         WHERE c.tenant_id = t.tenant_id AND c.kt_revision_id = t.kt_revision_id) AS logged
       FROM record_listing_tags t WHERE logged IS NOT t.changes`,
    ))
      problems.push(`a listing counter and its changes log disagree: ${JSON.stringify(row)}`);
  } finally {
    db.close();
  }
  expect(problems, problems.slice(0, 20).join('\n')).toEqual([]);
  stats.historyChecks++;
}

async function restart(dataDir: string, demo = false): Promise<ServeProcess> {
  const started = performance.now();
  const replica = await startServe(['--data-dir', dataDir, ...(demo ? ['--demo'] : [])]);
  stats.restartMs.push(performance.now() - started);
  return replica;
}

describe('crash consistency under SIGKILL', () => {
  const dirs: string[] = [];
  const tempDir = (prefix: string) => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };
  afterAll(() => {
    killAll();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it(
    `${KILLS} kills in the middle of concurrent writes lose no acknowledged record, KT revision, trace or version`,
    async () => {
      const started = Date.now();
      const dataDir = tempDir('rxs-crash-soak-');
      let replica = await restart(dataDir, true);
      const demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8'));
      const key: string = demo.tenant.users.owner.apiKey;
      const topic = await call(replica.url, 'POST', '/kt/', {
        key,
        body: {
          knowledge_topic_name: 'Crash base',
          type: 'multi_record',
          knowledge_topic_schema: crashSchema,
        },
      });
      const base = await call(replica.url, 'POST', `/kt/${topic.body._id}/approve`, { key });
      expect(base.status).toBe(200);
      const since = new Date().toISOString();
      const world = new CrashWorld(new Prng(20240601), key, base.body._id);

      for (let cycle = 0; cycle < KILLS; cycle++) {
        // Writers on every lane; the kill comes after a random number of acknowledgements.
        world.stopping = false;
        world.acksThisCycle = 0;
        const target = world.prng.int(3, 40);
        const lanes = [
          world.recordLane(replica.url, 'a'),
          world.recordLane(replica.url, 'b'),
          world.recordLane(replica.url, 'c'),
          world.graphLane(replica.url),
          world.topicLane(replica.url),
        ];
        const deadline = Date.now() + 20_000;
        while (world.acksThisCycle < target && !world.stopping && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 1));
        }
        expect(world.failures, world.failures.join('\n')).toEqual([]);
        expect(world.acksThisCycle).toBeGreaterThanOrEqual(target);
        await new Promise((r) => setTimeout(r, world.prng.int(0, 8)));
        await replica.stop('SIGKILL');
        world.stopping = true;
        stats.kills++;
        await Promise.all(lanes);
        expect(world.failures, world.failures.join('\n')).toEqual([]);

        replica = await restart(dataDir);
        const verifyStarted = performance.now();
        await checkIntegrity(dataDir);
        await world.verify(replica.url, since);
        checkHistory(dataDir, world);
        stats.verifyMs.push(performance.now() - verifyStarted);
      }
      await replica.stop('SIGTERM');
      // A clean stop, then once more from the top: the state is still exactly the same.
      replica = await restart(dataDir);
      await checkIntegrity(dataDir);
      await world.verify(replica.url, since);
      checkHistory(dataDir, world);
      await replica.stop('SIGTERM');

      const live = [...world.records.values()].filter((r) => r.acked && !r.deleted).length;
      const figures = {
        kills: stats.kills,
        acknowledgedWrites: stats.acked,
        inFlightAtKill: stats.inFlightAtKill,
        recordsAtEnd: live,
        tracesAtEnd: [...world.traces.values()].filter((t) => t.acked && !t.deleted).length,
        topicsAtEnd: world.topics.filter((t) => !t.dropped).length,
        integrityChecksPassed: stats.integrityChecks,
        historyChecksPassed: stats.historyChecks,
        restartMs: summarize(stats.restartMs),
        verifyMs: summarize(stats.verifyMs),
        durationSeconds: Math.round((Date.now() - started) / 1000),
      };
      console.log(`crash soak: ${JSON.stringify(figures, null, 2)}`);
      writeFigures('crash', figures);
      expect(stats.kills).toBeGreaterThanOrEqual(Math.min(KILLS, 50));
    },
    KILLS * 15_000 + 60_000,
  );

  it('a fresh database killed at any moment of its first start (migration) starts cleanly', async () => {
    const dataDir = tempDir('rxs-crash-first-');
    // Kill points spread over the start: before, during and after the migration.
    for (let delay = 600; delay <= 1800; delay += 200) {
      const child = spawn(process.execPath, [bin, 'serve', '--port', '0', '--data-dir', dataDir], {
        stdio: 'ignore',
      });
      const exited = new Promise((r) => child.once('exit', r));
      await new Promise((r) => setTimeout(r, delay));
      child.kill('SIGKILL');
      await exited;
      stats.kills++;
    }
    const replica = await restart(dataDir);
    expect((await call(replica.url, 'GET', '/healthz')).status).toBe(200);
    await checkIntegrity(dataDir);
    await replica.stop('SIGTERM');
  }, 120_000);

  it('`rxs serve --demo` killed while seeding the demo starts again on the next try', async () => {
    const dataDir = tempDir('rxs-crash-seed-');
    const child = spawn(process.execPath, [bin, 'serve', '--demo', '--port', '0', '--data-dir', dataDir], {
      stdio: 'ignore',
    });
    const exited = new Promise((r) => child.once('exit', r));
    // Kill as soon as the seed has written its first user, long before demo.json.
    const file = join(dataDir, 'rxs.db');
    let seeding = false;
    for (let i = 0; i < 3000 && !seeding; i++) {
      await new Promise((r) => setTimeout(r, 2));
      if (!existsSync(file)) continue;
      try {
        const db = new SQLite(file, { readonly: true, fileMustExist: true });
        try {
          seeding = (db.prepare('select count(*) as n from users').get() as { n: number }).n > 0;
        } finally {
          db.close();
        }
      } catch {
        // not migrated yet
      }
    }
    child.kill('SIGKILL');
    await exited;
    stats.kills++;
    expect(seeding).toBe(true);
    expect(existsSync(join(dataDir, 'demo.json'))).toBe(false);

    const replica = await restart(dataDir, true);
    try {
      const demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8'));
      const revision = demo.tenant.topics.systemRequirements.currentRevisionId;
      const res = await call(replica.url, 'GET', `/kt/${revision}`, { key: demo.tenant.users.owner.apiKey });
      expect(res.status).toBe(200);
      await checkIntegrity(dataDir);
    } finally {
      await replica.stop('SIGTERM');
    }
  }, 60_000);
});
