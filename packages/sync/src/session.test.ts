import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type {
  ExportedField,
  ExportedRecord,
  ExportedTopic,
  ExportedTrace,
  ExportPart,
} from '../../exchange/src/export/model.js';
import {
  createSyncSession,
  diffRecord,
  LOCK_FILE,
  readSyncState,
  renderReportText,
  SyncLockedError,
  SyncOrderError,
  SyncStreamError,
  writeReport,
  type ChangeReport,
  type StoredRecord,
  type SyncSessionOptions,
} from './index.js';
import { tempPath } from '../../exchange/src/files/index.js';

// ---------------------------------------------------------------------------------------------
// Fixtures: topics, records and whole exports as parts, and a sync that consumes them.

const root = mkdtempSync(join(tmpdir(), 'rxs-sync-test-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const freshDir = () => join(root, `state-${++dirs}`);

const SERVERS = {
  techdoc: 'http://techdoc.test',
  records: 'http://records.test',
  tracer: 'http://tracer.test',
};
const oid = (n: number, prefix = '6a') => `${prefix}${n.toString(16).padStart(22, '0')}`;

const HISTORY = oid(1, 'aa');
const REVISION = oid(1, 'bb');

const field = (key: string, name: string, extra: Partial<ExportedField> = {}): ExportedField => ({
  key,
  name,
  source: 'service-key',
  type: 'textfield',
  ...extra,
});

const FIELDS: ExportedField[] = [
  field('title_k', 'title'),
  field('prio_k', 'priority', {
    type: 'select',
    options: [
      { value: 'h', label: 'High' },
      { value: 'l', label: 'Low' },
    ],
  }),
  field('tags_k', 'tags', { type: 'checklist' }),
  field('risks', 'risks', {
    type: 'dynamiclist',
    itemFields: [field('sev_k', 'severity'), field('note_k', 'note')],
  }),
];

function topic(overrides: Partial<ExportedTopic> = {}): ExportedTopic {
  const fields = overrides.fields ?? FIELDS;
  return {
    revisionId: REVISION,
    historyId: HISTORY,
    name: 'System Requirements',
    version: '1.0',
    status: 'approved',
    latestRevisionId: overrides.revisionId ?? REVISION,
    // The schema only matters through its hash here: derive it from the fields.
    schema: { components: fields.map((f) => ({ key: f.key, type: f.type, label: f.name })) },
    fields,
    ...overrides,
  };
}

function rec(
  n: number,
  values: Record<string, unknown> = {},
  extra: Partial<ExportedRecord> = {},
): ExportedRecord {
  return {
    id: oid(n),
    name: `Requirement ${n}`,
    version: '1',
    topicRevisionId: REVISION,
    values: { title: `Title ${n}`, ...values },
    ...extra,
  };
}

const trace = (
  n: number,
  from: number,
  to: number,
  relation: 'is_related' | 'is_parent' = 'is_related',
): ExportedTrace => ({
  id: oid(n, 'cc'),
  source: { id: oid(from), type: 'Record' },
  target: { id: oid(to), type: 'Record' },
  relationTypes: [relation],
  suspect: false,
});

interface Snapshot {
  exportedAt?: string;
  topics: { topic: ExportedTopic; records: Iterable<ExportedRecord> }[];
  traces?: ExportedTrace[];
}

let clock = Date.parse('2026-08-01T00:00:00.000Z');
function* parts(snapshot: Snapshot): Generator<ExportPart> {
  clock += 60_000;
  yield {
    kind: 'header',
    header: {
      exportedAt: snapshot.exportedAt ?? new Date(clock).toISOString(),
      servers: SERVERS,
      revisionIds: snapshot.topics.map((t) => t.topic.revisionId),
      withTraces: snapshot.traces !== undefined,
    },
  };
  for (const { topic: t, records } of snapshot.topics) {
    yield { kind: 'topic', topic: t };
    let count = 0;
    for (const record of records) {
      count++;
      yield { kind: 'record', record };
    }
    yield { kind: 'topic-end', topic: t, recordCount: count };
  }
  if (snapshot.traces) yield { kind: 'traces', traces: snapshot.traces, linkTypes: [] };
  yield { kind: 'end', warnings: [] };
}

/** One complete sync, committed unless told otherwise. */
async function sync(
  dir: string,
  snapshot: Snapshot,
  options: SyncSessionOptions & { commit?: boolean } = {},
): Promise<ChangeReport> {
  const session = await createSyncSession(dir, options);
  for (const part of parts(snapshot)) await session.write(part);
  const report = session.report!;
  if (options.commit === false) await session.abort();
  else await session.commit();
  return report;
}

const one = (records: Iterable<ExportedRecord>, t = topic()): Snapshot => ({
  topics: [{ topic: t, records }],
});

/** The stored records of the topic with this history id, from the committed state. */
async function storedRecords(dir: string, historyId = HISTORY): Promise<StoredRecord[]> {
  const state = (await readSyncState(dir))!;
  const entry = state.topics.find((t) => t.historyId === historyId)!;
  return readFileSync(join(dir, state.generation, entry.file), 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as StoredRecord);
}

const ids = (refs: { id: string }[]) => refs.map((r) => r.id);
const topicOf = (report: ChangeReport, historyId = HISTORY) =>
  report.topics.find((t) => t.historyId === historyId)!;

/** A PID that belonged to a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '0']);
  return child.pid!;
}

// ---------------------------------------------------------------------------------------------

describe('sync sessions', () => {
  it('first sync: everything is added, the report says it is the initial snapshot, the state is on disk', async () => {
    const dir = freshDir();
    const report = await sync(dir, {
      exportedAt: '2026-08-11T09:30:00.000Z',
      ...one([rec(1), rec(2), rec(3)]),
      traces: [trace(1, 1, 2)],
    });
    expect(report.initial).toBe(true);
    expect(report.changed).toBe(true);
    expect(report.previousExportedAt).toBeNull();
    expect(report.notes.join(' ')).toMatch(/Initial snapshot/);
    const t = topicOf(report);
    expect(t.status).toBe('added');
    expect(ids(t.added)).toEqual([oid(1), oid(2), oid(3)]);
    expect(t.counts).toEqual({ before: 0, after: 3, added: 3, removed: 0, changed: 0, unchanged: 0 });
    expect(report.summary.traces).toEqual({ before: 0, after: 1, added: 1, removed: 0, changed: 0 });
    expect(report.summary.schemaChanges).toBe(0);

    const state = (await readSyncState(dir))!;
    expect(state.exportedAt).toBe('2026-08-11T09:30:00.000Z');
    expect(state.topics).toHaveLength(1);
    expect(state.topics[0]).toMatchObject({ historyId: HISTORY, revisionId: REVISION, recordCount: 3 });
    expect(state.topics[0]!.schemaHash).toMatch(/^[0-9a-f]{64}$/);
    expect(state.traces).toEqual({ file: 'traces.jsonl', count: 1 });
    expect((await storedRecords(dir)).map((r) => r.id)).toEqual([oid(1), oid(2), oid(3)]);
    expect(readFileSync(join(dir, state.generation, 'traces.jsonl'), 'utf8')).toBe(
      `${JSON.stringify([oid(1, 'cc'), { id: oid(1), type: 'Record' }, { id: oid(2), type: 'Record' }, ['is_related']])}\n`,
    );
    // Only the current generation, the state and nothing half written.
    expect(readdirSync(dir).sort()).toEqual([state.generation, 'state.json']);

    const text = renderReportText(report);
    expect(text).toMatch(/^Initial snapshot of 2026-08-11T09:30:00.000Z: 1 topics, 3 records, 1 traces\./);
    const path = await writeReport(dir, report);
    expect(path).toBe(join(dir, 'reports', '2026-08-11T09-30-00.000Z.json'));
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual(report);
    expect(await writeReport(dir, report)).toBe(join(dir, 'reports', '2026-08-11T09-30-00.000Z-2.json'));
  });

  it('an unchanged export reports no changes', async () => {
    const dir = freshDir();
    await sync(dir, one([rec(1), rec(2)]));
    const report = await sync(dir, one([rec(1), rec(2)]));
    expect(report.initial).toBe(false);
    expect(report.changed).toBe(false);
    expect(topicOf(report).counts).toEqual({
      before: 2,
      after: 2,
      added: 0,
      removed: 0,
      changed: 0,
      unchanged: 2,
    });
    expect(renderReportText(report)).toMatch(/^No changes since /);
  });

  it('records added, edited and deleted', async () => {
    const dir = freshDir();
    await sync(dir, one([rec(1), rec(2), rec(3), rec(5)]));
    const report = await sync(
      dir,
      one([
        rec(0),
        rec(1),
        rec(2, { title: 'New title' }),
        rec(3, {}, { name: 'Renamed', version: '2' }),
        rec(4),
        rec(6),
      ]),
    );
    const t = topicOf(report);
    expect(t.status).toBe('present');
    expect(ids(t.added)).toEqual([oid(0), oid(4), oid(6)]);
    expect(ids(t.removed)).toEqual([oid(5)]);
    expect(t.removed[0]!.name).toBe('Requirement 5');
    expect(t.changedRecords).toEqual([
      {
        id: oid(2),
        name: 'Requirement 2',
        nameChange: null,
        versionChange: null,
        fields: [{ field: 'title', change: 'modified', before: 'Title 2', after: 'New title' }],
      },
      {
        id: oid(3),
        name: 'Renamed',
        nameChange: { before: 'Requirement 3', after: 'Renamed' },
        versionChange: { before: '1', after: '2' },
        fields: [],
      },
    ]);
    expect(t.counts).toEqual({ before: 4, after: 6, added: 3, removed: 1, changed: 2, unchanged: 1 });
    expect(report.summary.records).toEqual({
      before: 4,
      after: 6,
      added: 3,
      removed: 1,
      changed: 2,
      unchanged: 1,
    });
    expect(report.changed).toBe(true);

    const text = renderReportText(report);
    expect(text).toContain(`+ ${oid(4)} Requirement 4`);
    expect(text).toContain(`- ${oid(5)} Requirement 5`);
    expect(text).toContain(`~ ${oid(2)} Requirement 2: title: "Title 2" -> "New title"`);
    expect(text).toContain(`~ ${oid(3)} Renamed: name "Requirement 3" -> "Renamed"`);
    // The state now holds the new snapshot.
    expect((await storedRecords(dir)).map((r) => r.id)).toEqual([0, 1, 2, 3, 4, 6].map((n) => oid(n)));
  });

  it('field-level differences: values added and removed, arrays, nested dynamiclist items, key order ignored', async () => {
    const dir = freshDir();
    await sync(
      dir,
      one([
        rec(1, { tags: ['a', 'b'], risks: [{ severity: 'high', note: 'n1' }, { severity: 'low' }] }),
        rec(2, { priority: 'h', meta: { a: 1, b: [1, 2] } }),
        rec(3, { risks: [{ severity: 'high', note: 'n1' }] }),
      ]),
    );
    const report = await sync(
      dir,
      one([
        rec(1, { tags: ['a', 'c'], risks: [{ severity: 'high', note: 'n1' }, { severity: 'medium' }] }),
        rec(2, { meta: { b: [1, 2], a: 1 }, tags: [] }),
        rec(3, { risks: [{ note: 'n1', severity: 'high' }] }),
      ]),
    );
    const changes = topicOf(report).changedRecords;
    expect(ids(changes)).toEqual([oid(1), oid(2)]);
    expect(changes[0]!.fields).toEqual([
      { field: 'tags', change: 'modified', before: ['a', 'b'], after: ['a', 'c'] },
      {
        field: 'risks',
        change: 'modified',
        before: [{ severity: 'high', note: 'n1' }, { severity: 'low' }],
        after: [{ severity: 'high', note: 'n1' }, { severity: 'medium' }],
      },
    ]);
    expect(changes[1]!.fields).toEqual([
      { field: 'tags', change: 'added', after: [] },
      { field: 'priority', change: 'removed', before: 'h' },
    ]);
    expect(topicOf(report).counts.unchanged).toBe(1);
  });

  it('traces added, removed and changed', async () => {
    const dir = freshDir();
    const records = [rec(1), rec(2), rec(3)];
    await sync(dir, { ...one(records), traces: [trace(1, 1, 2), trace(2, 2, 3), trace(3, 1, 3)] });
    const report = await sync(dir, {
      ...one(records),
      // Unsorted and with a duplicate, as edges reached from both ends may come.
      traces: [trace(4, 3, 1), trace(3, 1, 3, 'is_parent'), trace(1, 1, 2), trace(4, 3, 1)],
    });
    expect(report.changed).toBe(true);
    expect(report.traces.compared).toBe(true);
    expect(ids(report.traces.added)).toEqual([oid(4, 'cc')]);
    expect(ids(report.traces.removed)).toEqual([oid(2, 'cc')]);
    expect(report.traces.changed).toEqual([{ before: trace(3, 1, 3), after: trace(3, 1, 3, 'is_parent') }]);
    expect(report.summary.traces).toEqual({ before: 3, after: 3, added: 1, removed: 1, changed: 1 });
    expect(report.summary.records.changed).toBe(0);
    expect(renderReportText(report)).toContain(
      `+ ${oid(4, 'cc')}: Record ${oid(3)} -> Record ${oid(1)} (is_related)`,
    );

    // A link that became suspect is a changed trace, and says so; a review changes it back.
    const suspect = { ...trace(1, 1, 2), suspect: true };
    const flagged = await sync(dir, {
      ...one(records),
      traces: [suspect, trace(3, 1, 3, 'is_parent'), trace(4, 3, 1)],
    });
    expect(flagged.traces.changed).toEqual([{ before: trace(1, 1, 2), after: suspect }]);
    expect(renderReportText(flagged)).toContain(
      `(is_related) => ${oid(1, 'cc')}: Record ${oid(1)} -> Record ${oid(2)} (is_related, suspect)`,
    );
    const reviewed = await sync(dir, {
      ...one(records),
      traces: [trace(1, 1, 2), trace(3, 1, 3, 'is_parent'), trace(4, 3, 1)],
    });
    expect(reviewed.traces.changed).toEqual([{ before: suspect, after: trace(1, 1, 2) }]);

    // An export without traces compares none and keeps none; the next one with traces adds all.
    const without = await sync(dir, one(records));
    expect(without.traces.compared).toBe(false);
    expect(without.changed).toBe(false);
    expect(without.notes.join(' ')).toMatch(/no traces/);
    expect((await readSyncState(dir))!.traces).toBeNull();
    const again = await sync(dir, { ...one(records), traces: [trace(1, 1, 2)] });
    expect(ids(again.traces.added)).toEqual([oid(1, 'cc')]);
    expect(again.notes.join(' ')).toMatch(/previous snapshot had no traces/);
  });

  it('schema changes: a renamed semantic name does not change the records; added, removed, modified fields', async () => {
    const dir = freshDir();
    await sync(
      dir,
      one([
        rec(1, { priority: 'h', tags: ['x'], risks: [{ severity: 'high' }] }),
        rec(2, { priority: 'l', risks: [{ severity: 'low', note: 'n' }] }),
      ]),
    );
    // prio_k: "priority" -> "urgency" (and a new option); sev_k inside the list: "severity" -> "level";
    // tags_k removed; owner_k added; title_k becomes a textarea.
    const fields: ExportedField[] = [
      field('title_k', 'title', { type: 'textarea' }),
      field('prio_k', 'urgency', {
        type: 'select',
        options: [
          { value: 'h', label: 'High' },
          { value: 'l', label: 'Low' },
          { value: 'm', label: 'Medium' },
        ],
      }),
      field('risks', 'risks', {
        type: 'dynamiclist',
        itemFields: [field('sev_k', 'level'), field('note_k', 'note')],
      }),
      field('owner_k', 'owner'),
    ];
    const report = await sync(
      dir,
      one(
        [
          rec(1, { urgency: 'h', risks: [{ level: 'high' }] }),
          rec(2, { urgency: 'm', risks: [{ level: 'low', note: 'n' }] }),
        ],
        topic({ fields, name: 'System Requirements v2' }),
      ),
    );
    const t = topicOf(report);
    expect(t.schema.changed).toBe(true);
    expect(t.schema.fieldsRenamed).toEqual([
      { key: 'prio_k', before: 'priority', after: 'urgency' },
      { key: 'risks[].sev_k', before: 'risks[].severity', after: 'risks[].level' },
    ]);
    expect(t.schema.fieldsAdded).toEqual([{ key: 'owner_k', name: 'owner', type: 'textfield' }]);
    expect(t.schema.fieldsRemoved).toEqual([{ key: 'tags_k', name: 'tags', type: 'checklist' }]);
    expect(t.schema.fieldsModified.map((m) => [m.key, !!m.type, !!m.label, !!m.options])).toEqual([
      ['title_k', true, false, false],
      ['prio_k', false, false, true],
    ]);
    expect(t.renamed).toEqual({ before: 'System Requirements', after: 'System Requirements v2' });
    expect(t.reapproved).toBe(false);
    expect(report.summary.schemaChanges).toBe(1);
    // Record 1 lost its tags (the field is gone) but its renamed values compare equal; record 2
    // changed its urgency, reported under the new name.
    expect(t.changedRecords.map((c) => [c.id, c.fields])).toEqual([
      [oid(1), [{ field: 'tags', change: 'removed', before: ['x'] }]],
      [oid(2), [{ field: 'urgency', change: 'modified', before: 'l', after: 'm' }]],
    ]);
    const text = renderReportText(report);
    expect(text).toContain('field renamed: "priority" -> "urgency" (key prio_k)');
    expect(text).toContain('renamed: "System Requirements" -> "System Requirements v2"');
  });

  it('re-approval: the same history id under a new revision id is the same topic, noted in the report', async () => {
    const dir = freshDir();
    await sync(dir, one([rec(1), rec(2)]));
    const newRevision = oid(2, 'bb');
    const report = await sync(
      dir,
      one(
        [
          rec(1, {}, { topicRevisionId: newRevision }),
          rec(2, { title: 'edited' }, { topicRevisionId: newRevision }),
        ],
        topic({ revisionId: newRevision, version: '2.0' }),
      ),
    );
    const t = topicOf(report);
    expect(t.status).toBe('present');
    expect(t.reapproved).toBe(true);
    expect(t.previousRevisionId).toBe(REVISION);
    expect(t.revisionId).toBe(newRevision);
    expect(t.versionChange).toEqual({ before: '1.0', after: '2.0' });
    expect(t.schema.changed).toBe(false);
    expect(t.counts).toMatchObject({ added: 0, removed: 0, changed: 1, unchanged: 1 });
    expect(report.summary.reapprovals).toBe(1);
    expect(report.changed).toBe(true);
    expect(report.notes.join(' ')).toContain(
      `re-approved since the previous snapshot: revision ${REVISION} -> ${newRevision}`,
    );
    expect(renderReportText(report)).toContain(`re-approved: revision ${REVISION} -> ${newRevision}`);
    expect((await readSyncState(dir))!.topics[0]!.revisionId).toBe(newRevision);
  });

  it('topics no longer exported are removed with their records; new topics are added', async () => {
    const dir = freshDir();
    const other = topic({ historyId: oid(2, 'aa'), revisionId: oid(3, 'bb'), name: 'Risks' });
    await sync(dir, one([rec(1), rec(2)]));
    const report = await sync(dir, { topics: [{ topic: other, records: [rec(7)] }] });
    expect(report.topics.map((t) => [t.name, t.status])).toEqual([
      ['Risks', 'added'],
      ['System Requirements', 'removed'],
    ]);
    expect(ids(topicOf(report).removed)).toEqual([oid(1), oid(2)]);
    expect(ids(topicOf(report, oid(2, 'aa')).added)).toEqual([oid(7)]);
    expect(report.summary.topics).toEqual({ before: 1, after: 1, added: 1, removed: 1, changed: 2 });
    expect(report.summary.schemaChanges).toBe(0);
    expect(renderReportText(report)).toContain('System Requirements (no longer exported)');
  });

  it('lists are cut at the detail limit, counts stay complete', async () => {
    const dir = freshDir();
    await sync(dir, one([1, 2, 3, 4, 5].map((n) => rec(n))));
    const report = await sync(dir, one([1, 2, 3, 4, 5].map((n) => rec(n, { title: 'x' }))), {
      detailLimit: 2,
    });
    const t = topicOf(report);
    expect(t.counts.changed).toBe(5);
    expect(t.changedRecords).toHaveLength(2);
    expect(t.omitted.changed).toBe(3);
    expect(report.truncated).toBe(true);
    expect(report.notes.join(' ')).toMatch(/cut at 2 entries/);
    expect(renderReportText(report)).toContain('... and 3 more');
  });
});

describe('a broken export stream fails clearly and leaves the state as it was', () => {
  it('records out of _id order', async () => {
    const dir = freshDir();
    await sync(dir, one([rec(1), rec(2)]));
    const before = await readSyncState(dir);
    await expect(sync(dir, one([rec(1), rec(3), rec(2)]))).rejects.toThrow(SyncOrderError);
    await expect(sync(dir, one([rec(1), rec(3), rec(2)]))).rejects.toThrow(
      `Records of "System Requirements" arrived out of _id order: ${oid(2)} came after ${oid(3)}`,
    );
    await expect(sync(dir, one([rec(1), rec(1)]))).rejects.toThrow(
      `Record ${oid(1)} of "System Requirements" arrived twice`,
    );
    expect(await readSyncState(dir)).toEqual(before);
    // The failed sessions aborted themselves: no lock, no temporary generation.
    expect(readdirSync(dir).sort()).toEqual([before!.generation, 'state.json']);
  });

  it('parts out of place, a wrong record count, a topic twice', async () => {
    const dir = freshDir();
    const bad = async (partsList: ExportPart[]) => {
      const session = await createSyncSession(dir);
      for (const part of partsList) await session.write(part);
    };
    const [header, topicPart, recordPart] = [...parts(one([rec(1)]))] as [ExportPart, ExportPart, ExportPart];
    await expect(bad([topicPart])).rejects.toThrow(/before the header/);
    await expect(bad([header, recordPart])).rejects.toThrow(/outside a topic/);
    await expect(
      bad([header, topicPart, recordPart, { kind: 'topic-end', topic: topic(), recordCount: 2 }]),
    ).rejects.toThrow(/has 2 records, but 1 arrived/);
    await expect(bad([header, topicPart, recordPart, { kind: 'end', warnings: [] }])).rejects.toThrow(
      SyncStreamError,
    );
    const twice = {
      topics: [
        { topic: topic(), records: [rec(1)] },
        { topic: topic(), records: [rec(2)] },
      ],
    };
    await expect(sync(dir, twice)).rejects.toThrow(/is in the export twice/);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('crash safety', () => {
  const base = () => one([rec(1), rec(2, { tags: ['a'] }), rec(3)]);
  const next = () => one([rec(1), rec(2, { tags: ['b'] }), rec(4)]);

  async function expectComparedWithBase(dir: string) {
    const report = await sync(dir, next());
    const t = topicOf(report);
    expect(report.initial).toBe(false);
    expect(ids(t.added)).toEqual([oid(4)]);
    expect(ids(t.removed)).toEqual([oid(3)]);
    expect(ids(t.changedRecords)).toEqual([oid(2)]);
  }

  it('abort after the whole export (the output file failed) leaves the old state; the next sync compares against it', async () => {
    const dir = freshDir();
    await sync(dir, base());
    const before = await readSyncState(dir);
    const report = await sync(dir, next(), { commit: false });
    expect(report.changed).toBe(true);
    expect(await readSyncState(dir)).toEqual(before);
    expect(readdirSync(dir).sort()).toEqual([before!.generation, 'state.json']);
    await expectComparedWithBase(dir);
  });

  it('an export that throws mid-stream leaves the old state', async () => {
    const dir = freshDir();
    await sync(dir, base());
    const before = await readSyncState(dir);
    const session = await createSyncSession(dir);
    async function* failing(): AsyncGenerator<ExportPart> {
      let n = 0;
      for (const part of parts(next())) {
        if (++n === 4) throw new Error('connection reset');
        yield part;
      }
    }
    await expect(
      (async () => {
        try {
          for await (const part of failing()) await session.write(part);
        } catch (error) {
          await session.close(); // as writeExport does on failure
          throw error;
        }
      })(),
    ).rejects.toThrow('connection reset');
    await expect(session.commit()).rejects.toThrow(/aborted/);
    expect(await readSyncState(dir)).toEqual(before);
    await expectComparedWithBase(dir);
  });

  it('a process that died mid-sync: its lock is taken over, its leftovers removed, the old state compared against', async () => {
    const dir = freshDir();
    await sync(dir, base());
    const before = await readSyncState(dir);
    // A sync that wrote half its records and then "died": never committed nor aborted.
    const crashed = await createSyncSession(dir);
    const all = [...parts(next())];
    for (const part of all.slice(0, 3)) await crashed.write(part);
    writeFileSync(
      join(dir, LOCK_FILE),
      JSON.stringify({
        pid: deadPid(),
        hostname: hostname(),
        startedAt: 'then',
        token: 'x',
      }),
    );
    // Leftovers of a crash after the new generation was renamed but before state.json switched,
    // and of a state.json replacement that never got renamed.
    mkdirSync(join(dir, 'gen-zzzz'));
    writeFileSync(join(dir, 'gen-zzzz', 'topic-1.jsonl'), '{"id":"garbage"}\n');
    writeFileSync(tempPath(join(dir, 'state.json')), '{"half":');
    expect(await readSyncState(dir)).toEqual(before);

    await expectComparedWithBase(dir);
    const after = (await readSyncState(dir))!;
    expect(readdirSync(dir).sort()).toEqual([after.generation, 'state.json']);
    // The "dead" sync's files are still open in this process: closing them changes nothing on disk.
    await crashed.abort();
    expect(await readSyncState(dir)).toEqual(after);
    expect(readdirSync(dir).sort()).toEqual([after.generation, 'state.json']);
  });

  it('commit switches only when everything is written; committing twice or before the end is refused', async () => {
    const dir = freshDir();
    const session = await createSyncSession(dir);
    const all = [...parts(base())];
    for (const part of all.slice(0, -1)) await session.write(part);
    await expect(session.commit()).rejects.toThrow(/did not end yet/);
    await session.write(all.at(-1)!);
    expect(await readSyncState(dir)).toBeUndefined();
    const state = await session.commit();
    expect(await readSyncState(dir)).toEqual(state);
    await expect(session.commit()).rejects.toThrow(/already committed/);
    await session.abort(); // no effect after a commit
    expect(await readSyncState(dir)).toEqual(state);
  });

  it('a damaged state fails clearly', async () => {
    const dir = freshDir();
    await sync(dir, base());
    const state = (await readSyncState(dir))!;
    // A records file or overlay the state names is gone.
    for (const topic of [{ file: 'gone.jsonl' }, { overlay: 'gone.overlay.jsonl' }]) {
      const named = { ...state, topics: [{ ...state.topics[0]!, ...topic }] };
      writeFileSync(join(dir, 'state.json'), JSON.stringify(named));
      await expect(createSyncSession(dir)).rejects.toThrow(
        /names gen-[^ ]*gone\.(overlay\.)?jsonl, which is missing; the sync state is damaged\. Start over/,
      );
    }
    writeFileSync(join(dir, 'state.json'), JSON.stringify(state));
    rmSync(join(dir, state.generation), { recursive: true });
    await expect(createSyncSession(dir)).rejects.toThrow(/names gen-.*, which is missing/);
    writeFileSync(join(dir, 'state.json'), JSON.stringify({ ...state, version: 99 }));
    await expect(createSyncSession(dir)).rejects.toThrow(/state version 99/);
    // The failed opens released the lock.
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });
});

describe('locking', () => {
  it('a second sync on the same folder is refused while the first runs, naming the PID', async () => {
    const dir = freshDir();
    const first = await createSyncSession(dir);
    const second = createSyncSession(dir);
    await expect(second).rejects.toThrow(SyncLockedError);
    await expect(createSyncSession(dir)).rejects.toThrow(`held by this process (PID ${process.pid})`);
    for (const part of parts(one([rec(1)]))) await first.write(part);
    await first.commit();
    // Released: the next sync runs.
    const report = await sync(dir, one([rec(1)]));
    expect(report.changed).toBe(false);
  });

  it('a lock held by another live process is respected; one of a dead process is taken over', async () => {
    const dir = freshDir();
    mkdirSync(dir);
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
    try {
      writeFileSync(
        join(dir, LOCK_FILE),
        JSON.stringify({
          pid: child.pid,
          hostname: hostname(),
          startedAt: '2026-08-11T09:00:00.000Z',
          token: 't',
        }),
      );
      const error = await createSyncSession(dir).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SyncLockedError);
      expect((error as SyncLockedError).pid).toBe(child.pid);
      expect((error as Error).message).toContain(
        `held by process ${child.pid}, since 2026-08-11T09:00:00.000Z`,
      );
    } finally {
      child.kill();
    }
    const dead = deadPid();
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: dead, hostname: hostname(), startedAt: 'x' }));
    // The session names the process whose lock it took over.
    const session = await createSyncSession(dir);
    expect(session.staleHolder).toBe(dead);
    await session.abort();
    const report = await sync(dir, one([rec(1)]));
    expect(report.initial).toBe(true);
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    const next = await createSyncSession(dir);
    expect(next.staleHolder).toBeUndefined();
    await next.abort();
  });
});

describe('temporary files killed writers left in the state folder', () => {
  it("the next sync removes those a day old (state, probe, feed cache, reports), not a live writer's", async () => {
    const dir = freshDir();
    await sync(dir, one([rec(1)]));
    const reports = join(dir, 'reports');
    mkdirSync(reports, { recursive: true });
    const temp = (folder: string, target: string) => basename(tempPath(join(folder, target)));
    const dayAgo = (Date.now() - 25 * 60 * 60 * 1000) / 1000;
    const abandoned = ['probe.json', 'feed.json', 'odd\nname\u2028.json'].map((target) => temp(dir, target));
    const kept = [temp(dir, 'probe.json'), 'probe.json.4000000.mf3k2x.tmp'];
    for (const name of [...abandoned, ...kept]) writeFileSync(join(dir, name), '{"half":');
    // The feed cache's temporary folders: a killed sync's, a live one's.
    const folders = { abandoned: [temp(dir, 'feed')], kept: [temp(dir, 'feed')] };
    for (const name of [...folders.abandoned, ...folders.kept]) {
      mkdirSync(join(dir, name));
      writeFileSync(join(dir, name, 'topic-0.jsonl'), '{"id":');
    }
    const reportTemps = { abandoned: [temp(reports, 'x.json')], live: [temp(reports, 'y.json')] };
    for (const name of [...reportTemps.abandoned, ...reportTemps.live])
      writeFileSync(join(reports, name), '{"half":');
    for (const name of [...abandoned, kept[1]!, ...folders.abandoned])
      utimesSync(join(dir, name), dayAgo, dayAgo);
    for (const name of reportTemps.abandoned) utimesSync(join(reports, name), dayAgo, dayAgo);

    await sync(dir, one([rec(1), rec(2)]));
    const left = readdirSync(dir);
    for (const name of [...abandoned, ...folders.abandoned]) expect(left, name).not.toContain(name);
    for (const name of [...kept, ...folders.kept]) expect(left, name).toContain(name);
    for (const name of reportTemps.abandoned) expect(readdirSync(reports), name).not.toContain(name);
    for (const name of reportTemps.live) expect(readdirSync(reports), name).toContain(name);
  });
});

describe('comparison properties', () => {
  it('added, removed and changed ids are the set differences of the two snapshots', async () => {
    const recordSet = fc
      .dictionary(
        fc.integer({ min: 0, max: 40 }).map((n) => oid(n)),
        fc.record({ title: fc.constantFrom('a', 'b'), tags: fc.constantFrom([], ['x'], ['x', 'y']) }),
        { maxKeys: 25 },
      )
      .map((byId) =>
        Object.keys(byId)
          .sort()
          .map((id) => ({ id, name: 'r', version: '1', topicRevisionId: REVISION, values: byId[id]! })),
      );
    let run = 0;
    await fc.assert(
      fc.asyncProperty(recordSet, recordSet, async (before, after) => {
        const dir = join(root, `property-${++run}`);
        await sync(dir, one(before));
        const report = await sync(dir, one(after));
        const t = topicOf(report);
        const old = new Map(before.map((r) => [r.id, r]));
        const now = new Map(after.map((r) => [r.id, r]));
        const expectedAdded = after.filter((r) => !old.has(r.id)).map((r) => r.id);
        const expectedRemoved = before.filter((r) => !now.has(r.id)).map((r) => r.id);
        const expectedChanged = after
          .filter((r) => old.has(r.id) && JSON.stringify(old.get(r.id)!.values) !== JSON.stringify(r.values))
          .map((r) => r.id);
        expect(ids(t.added)).toEqual(expectedAdded);
        expect(ids(t.removed)).toEqual(expectedRemoved);
        expect(ids(t.changedRecords)).toEqual(expectedChanged);
        expect(t.counts.unchanged).toBe(after.length - expectedAdded.length - expectedChanged.length);
        expect(report.changed).toBe(
          expectedAdded.length + expectedRemoved.length + expectedChanged.length > 0,
        );
        expect((await storedRecords(dir)).map((r) => r.id)).toEqual(after.map((r) => r.id));
        rmSync(dir, { recursive: true, force: true });
      }),
      { numRuns: 60 },
    );
  });

  it('compares 100,000 records', { timeout: 300_000 }, async () => {
    const dir = freshDir();
    const N = 100_000;
    function* records(edit: boolean): Generator<ExportedRecord> {
      for (let n = 0; n < N; n++) {
        if (edit && n % 1000 === 7) continue; // removed
        yield rec(n, {
          priority: n % 2 ? 'h' : 'l',
          tags: ['a', String(n % 5)],
          risks: [{ severity: edit && n % 1000 === 3 ? 'changed' : 'high', note: `note ${n}` }],
        });
        if (edit && n % 1000 === 9) yield rec(n, {}, { id: `${oid(n)}x` }); // added, still in order
      }
    }
    const first = await sync(dir, one(records(false)), { detailLimit: 50 });
    expect(first.summary.records.added).toBe(N);
    expect(first.topics[0]!.added).toHaveLength(50);
    const second = await sync(dir, one(records(true)), { detailLimit: 50 });
    expect(second.summary.records).toEqual({
      before: N,
      after: N,
      added: 100,
      removed: 100,
      changed: 100,
      unchanged: N - 200,
    });
    expect(second.topics[0]!.changedRecords[0]!.fields.map((f) => f.field)).toEqual(['risks']);
    expect(second.truncated).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// Batches: `writeParts` (what `rxs sync` uses) against `write` part by part and a reference model.

/** Every file under `dir` (relative path -> content), to compare a state folder byte for byte. */
function tree(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (at: string, prefix: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path, `${prefix}${entry.name}/`);
      else files.set(`${prefix}${entry.name}`, readFileSync(path, 'latin1'));
    }
  };
  walk(dir, '');
  return files;
}

/** `parts(snapshot)` cut into batches of the given sizes (cycled), as the export procedure yields them. */
function batches(all: ExportPart[], sizes: number[]): ExportPart[][] {
  const result: ExportPart[][] = [];
  for (let at = 0, i = 0; at < all.length; i++) {
    const size = sizes.length > 0 ? sizes[i % sizes.length]! : all.length;
    result.push(all.slice(at, at + size));
    at += size;
  }
  return result;
}

/** One complete sync fed with `writeParts`, committed. */
async function syncInBatches(
  dir: string,
  snapshot: Snapshot,
  sizes: number[],
  options: SyncSessionOptions = {},
): Promise<ChangeReport> {
  const session = await createSyncSession(dir, options);
  for (const batch of batches([...parts(snapshot)], sizes)) await session.writeParts(batch);
  const report = session.report!;
  await session.commit();
  return report;
}

/** A record as sync stores it: after the JSON round trip. */
const asStored = (r: ExportedRecord): StoredRecord =>
  JSON.parse(
    JSON.stringify({ id: r.id, name: r.name, version: r.version, values: r.values }),
  ) as StoredRecord;

describe('batches: writeParts', () => {
  // Ids that take every path of reading ids from the stored lines: plain, escaped (quote,
  // backslash, control character, lone surrogate), non-ASCII, astral.
  const ID_POOL = [
    ...Array.from({ length: 30 }, (_, n) => oid(n)),
    'a"quote',
    'b\\backslash',
    'c\ncontrol',
    'd\ud800lone',
    'é-accent',
    'z𝄞-astral',
  ];
  const valuesArb = fc
    .record({
      title: fc.constantFrom('a', 'b', 'µ 121°C ± 2°C — ok', 'line\nbreak', 'sep\u2028'),
      priority: fc.constantFrom('h', 'l'),
      tags: fc.constantFrom([], ['x'], ['x', 'y']),
      risks: fc.constantFrom([], [{ severity: 'high', note: 'n' }], [{ note: 'n', severity: 'high' }]),
      extra: fc.option(fc.constantFrom(1, 2.5, true, null, { nested: ['é'] }), { nil: undefined }),
    })
    // The same values in another key order: stored text differs, the records do not.
    .chain((values) =>
      fc
        .boolean()
        .map((reversed) =>
          reversed
            ? Object.fromEntries(Object.entries(values).reverse())
            : (values as Record<string, unknown>),
        ),
    );
  const recordSet = fc
    .dictionary(fc.constantFrom(...ID_POOL), fc.tuple(fc.constantFrom('r', 'r2', 'ü'), valuesArb), {
      maxKeys: 20,
    })
    .map((byId) =>
      Object.keys(byId)
        .sort()
        .map((id): ExportedRecord => ({
          id,
          name: byId[id]![0],
          version: '1',
          topicRevisionId: REVISION,
          values: byId[id]![1],
        })),
    );
  const sizes = fc.array(fc.integer({ min: 1, max: 6 }), { maxLength: 4 });

  it('reports and stores exactly what part-by-part writes do, and what a reference comparison expects', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(recordSet, recordSet, sizes, sizes, async (before, after, sizesA, sizesB) => {
        run++;
        const single = join(root, `batch-single-${run}`);
        const batched = join(root, `batch-batched-${run}`);
        const now = () => new Date('2026-09-01T00:00:00.000Z');
        const first = { exportedAt: '2026-09-01T00:00:00.000Z', ...one(before) };
        const second = { exportedAt: '2026-09-02T00:00:00.000Z', ...one(after) };

        await sync(single, first, { now });
        await syncInBatches(batched, first, sizesA, { now });
        const expected = await sync(single, second, { now });
        const report = await syncInBatches(batched, second, sizesB, { now });

        // Same report, same stored records (generation names differ, the files do not).
        expect(report).toEqual(expected);
        const [a, b] = [tree(single), tree(batched)];
        const records = (files: Map<string, string>) =>
          [...files].filter(([name]) => name.endsWith('topic-1.jsonl')).map(([, text]) => text);
        expect(records(b)).toEqual(records(a));

        // Reference: set differences by id, and diffRecord of the stored forms for common ids.
        const old = new Map(before.map((r) => [r.id, asStored(r)]));
        const current = new Set(after.map((r) => r.id));
        const changes = after
          .filter((r) => old.has(r.id))
          .map((r) => diffRecord(old.get(r.id)!, asStored(r)))
          .filter((change) => change !== undefined);
        const t = topicOf(report);
        expect(ids(t.added)).toEqual(after.filter((r) => !old.has(r.id)).map((r) => r.id));
        expect(t.added.map((r) => r.name)).toEqual(after.filter((r) => !old.has(r.id)).map((r) => r.name));
        expect(ids(t.removed)).toEqual(before.filter((r) => !current.has(r.id)).map((r) => r.id));
        expect(t.removed.map((r) => r.name)).toEqual(
          before.filter((r) => !current.has(r.id)).map((r) => r.name),
        );
        expect(t.changedRecords).toEqual(changes);
        expect(t.counts.unchanged).toBe(after.length - t.counts.added - changes.length);
        expect((await storedRecords(batched)).map((r) => r.id)).toEqual(after.map((r) => r.id));

        rmSync(single, { recursive: true, force: true });
        rmSync(batched, { recursive: true, force: true });
      }),
      { numRuns: 80 },
    );
  });

  it('a renamed field: batches compare through the renamer like single parts', async () => {
    const dir = freshDir();
    const renamed = FIELDS.map((f) => (f.key === 'prio_k' ? { ...f, name: 'urgency' } : f));
    await syncInBatches(dir, one([rec(1, { priority: 'h' }), rec(2, { priority: 'l' })]), [2]);
    const report = await syncInBatches(
      dir,
      one([rec(1, { urgency: 'h' }), rec(2, { urgency: 'h' })], topic({ fields: renamed })),
      [3],
    );
    const t = topicOf(report);
    expect(t.counts.unchanged).toBe(1);
    expect(t.changedRecords.map((c) => [c.id, c.fields.map((f) => f.field)])).toEqual([
      [oid(2), ['urgency']],
    ]);
  });

  it('thousands of records in batches of a few hundred, against a previous snapshot larger than a read chunk', async () => {
    const dir = freshDir();
    const N = 5000;
    const big = (n: number, edit: boolean) =>
      rec(n, { note: `${'µ°—'.repeat(100)} ${n}`, priority: edit && n % 100 === 5 ? 'h' : 'l' });
    const records = (edit: boolean) =>
      Array.from({ length: N }, (_, n) => n)
        .filter((n) => !(edit && n % 500 === 7))
        .map((n) => big(n, edit));
    await syncInBatches(dir, one(records(false)), [250]);
    const report = await syncInBatches(dir, one(records(true)), [173, 311]);
    expect(report.summary.records).toEqual({
      before: N,
      after: N - 10,
      added: 0,
      removed: 10,
      changed: 50,
      unchanged: N - 60,
    });
    expect(ids(topicOf(report).removed)).toEqual(Array.from({ length: 10 }, (_, i) => oid(i * 500 + 7)));
  });
});

describe('batches: a failed run leaves the previous snapshot byte for byte, and no temporary files', () => {
  const base = () => one([rec(1), rec(2, { tags: ['a'] }), rec(3), rec(5)]);
  const next = () => one([rec(1), rec(2, { tags: ['b'] }), rec(4), rec(5)]);

  async function expectUntouched(dir: string, before: Map<string, string>) {
    expect(tree(dir)).toEqual(before);
    expect(readdirSync(dir).filter((name) => name.includes('tmp'))).toEqual([]);
    // And the next sync compares against it.
    const report = await syncInBatches(dir, next(), [2]);
    const t = topicOf(report);
    expect(ids(t.added)).toEqual([oid(4)]);
    expect(ids(t.removed)).toEqual([oid(3)]);
    expect(ids(t.changedRecords)).toEqual([oid(2)]);
  }

  it('a batch that breaks the order mid-way', async () => {
    const dir = freshDir();
    await syncInBatches(dir, base(), [3]);
    const before = tree(dir);
    const session = await createSyncSession(dir);
    const all = [...parts(one([rec(1), rec(3), rec(2)]))];
    await session.writeParts(all.slice(0, 3));
    await expect(session.writeParts(all.slice(3))).rejects.toThrow(SyncOrderError);
    await expect(session.commit()).rejects.toThrow(/aborted/);
    await expectUntouched(dir, before);
  });

  it('an export that fails between batches (then close, as the export run does)', async () => {
    const dir = freshDir();
    await syncInBatches(dir, base(), [3]);
    const before = tree(dir);
    const session = await createSyncSession(dir);
    const all = batches([...parts(next())], [3]);
    await session.writeParts(all[0]!);
    await session.writeParts(all[1]!);
    await session.close(); // the listing broke off here
    await expect(session.commit()).rejects.toThrow(/aborted/);
    await expectUntouched(dir, before);
  });

  it('a whole export whose output then fails (abort instead of commit)', async () => {
    const dir = freshDir();
    await syncInBatches(dir, base(), [3]);
    const before = tree(dir);
    const session = await createSyncSession(dir);
    for (const batch of batches([...parts(next())], [4])) await session.writeParts(batch);
    expect(session.report?.changed).toBe(true);
    await session.abort();
    await expectUntouched(dir, before);
  });

  it('a part after the end is refused without dropping the finished comparison', async () => {
    const dir = freshDir();
    await syncInBatches(dir, base(), [3]);
    const session = await createSyncSession(dir);
    for (const batch of batches([...parts(next())], [4])) await session.writeParts(batch);
    await expect(session.writeParts([{ kind: 'end', warnings: [] }])).rejects.toThrow(/after the sync ended/);
    await session.commit();
    expect((await storedRecords(dir)).map((r) => r.id)).toEqual([oid(1), oid(2), oid(4), oid(5)]);
  });
});
