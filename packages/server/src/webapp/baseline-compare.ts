import type { Baseline, ServiceRecord } from '@rxs/contract';
import { clip } from '@rxs/contract/validation';
import type { Principal } from '../auth/principal.js';
import type { RecordsService } from '../services/records/service.js';
import type { TechdocService } from '../services/techdoc/service.js';
import type {
  BaselineTopic,
  FieldDifference,
  RecordChanges,
  RecordDifference,
  TopicComparison,
} from '@rxs/web-api';
import { unlessMissing } from './missing.js';
import { recordsInPages } from './record-pages.js';
import { recordChanges, type RevisionMaps, semanticRecord } from './record-values.js';

/** One side of a comparison: a topic's records under a revision, as of a moment (undefined: now). */
export interface ComparedSide {
  revisionId: string;
  asOf: string | undefined;
}

/** A baseline's topics as they were at its moment: names and versions then (a topic gone since: its id). */
export async function baselineTopics(
  techdoc: TechdocService,
  principal: Principal,
  baseline: Baseline,
): Promise<BaselineTopic[]> {
  return Promise.all(
    baseline.knowledge_topic_revision_ids.map(async (revisionId) => {
      const revision = await unlessMissing(techdoc.getRevision(principal, revisionId, { asOf: baseline.at }));
      return {
        revisionId,
        historyId: revision?.knowledge_topic_history_id ?? null,
        name: revision?.knowledge_topic_name ?? revisionId,
        version: revision?.version ?? null,
      };
    }),
  );
}

/** A topic on one side of a comparison: its revision as of the side's moment (undefined: now). */
export interface SideTopic {
  historyId: string | null;
  revisionId: string;
  name: string;
  asOf: string | undefined;
}

/** A topic compared: its sides; only a first one is a topic removed, only a second one added. */
export interface PairedTopic {
  historyId: string;
  name: string;
  status: TopicComparison['status'];
  from?: ComparedSide;
  to?: ComparedSide;
}

/**
 * The topics of two sides matched by history id, which survives re-approvals (the revision id for a
 * topic whose history is unknown); a matched topic is named as the second side names it.
 */
export function pairTopics(first: readonly SideTopic[], second: readonly SideTopic[]): PairedTopic[] {
  const sides = new Map<string, { name: string; from?: ComparedSide; to?: ComparedSide }>();
  for (const topic of first)
    sides.set(topic.historyId ?? topic.revisionId, {
      name: topic.name,
      from: { revisionId: topic.revisionId, asOf: topic.asOf },
    });
  for (const topic of second) {
    const key = topic.historyId ?? topic.revisionId;
    const entry = sides.get(key) ?? { name: topic.name };
    entry.name = topic.name;
    entry.to = { revisionId: topic.revisionId, asOf: topic.asOf };
    sides.set(key, entry);
  }
  return [...sides].map(([historyId, side]) => ({
    historyId,
    ...side,
    status: side.from && side.to ? 'present' : side.from ? 'removed' : 'added',
  }));
}

/** Record differences one answer lists at most, over all its topics; the rest are counted. */
export const COMPARE_LIMIT = 500;
/** Bytes of listed differences (as JSON) one answer holds at most: the rest come on the next page. */
export const COMPARE_BYTES = 1024 * 1024;
/** Characters of a value shown before and after; a longer one is cut and ends with "…". */
export const COMPARE_VALUE_CHARS = 1000;

/**
 * Which differences of a comparison one answer lists: differences are numbered in the order they
 * are found (topic by topic, records by id); the page lists those from `offset` on until it holds
 * `limit` of them or `maxBytes`, and counts the others. The first one of a page is always listed,
 * so each page moves on.
 */
export class DifferencePage {
  private seen = 0;
  private listed = 0;
  private bytes = 0;
  private full = false;

  constructor(
    readonly offset: number,
    readonly limit = COMPARE_LIMIT,
    readonly maxBytes = COMPARE_BYTES,
  ) {}

  /** Whether `difference` goes on this page (it counts as found either way); its size is its JSON's. */
  take(difference: object): boolean {
    if (this.seen++ < this.offset || this.full) return false;
    const size = JSON.stringify(difference).length;
    if (this.listed >= this.limit || (this.listed > 0 && this.bytes + size > this.maxBytes)) {
      this.full = true;
      return false;
    }
    this.listed++;
    this.bytes += size;
    return true;
  }

  /** The offset of the next page: null when this one listed the last difference. */
  get next(): number | null {
    return this.full ? this.offset + this.listed : null;
  }
}

/** The records of one side in id order, one at a time, with a look at the next. */
class RecordCursor {
  private readonly records: AsyncGenerator<ServiceRecord> | undefined;
  private head: ServiceRecord | undefined;
  private loaded = false;

  constructor(records: RecordsService, principal: Principal, side: ComparedSide | undefined) {
    this.records = side
      ? recordsInPages(records, principal, { revisionIds: [side.revisionId], asOf: side.asOf })
      : undefined;
  }

  async peek(): Promise<ServiceRecord | undefined> {
    if (!this.loaded) {
      this.loaded = true;
      const next = await this.records?.next();
      this.head = next && !next.done ? next.value : undefined;
    }
    return this.head;
  }

  take(): void {
    this.loaded = false;
    this.head = undefined;
  }

  async close(): Promise<void> {
    await this.records?.return(undefined);
  }
}

function clipped(field: FieldDifference): FieldDifference {
  return {
    ...field,
    ...(field.before === undefined ? {} : { before: clip(field.before, COMPARE_VALUE_CHARS + 1) }),
    ...(field.after === undefined ? {} : { after: clip(field.after, COMPARE_VALUE_CHARS + 1) }),
  };
}

/** What the merge of two sides finds for one record id, with the records as read. */
export type FoundRecord =
  | { kind: 'added'; record: ServiceRecord }
  | { kind: 'removed'; record: ServiceRecord }
  | { kind: 'changed'; before: ServiceRecord; record: ServiceRecord; changes: RecordChanges }
  | { kind: 'unchanged'; record: ServiceRecord };

/**
 * A topic's records on two sides, merged from both listings, each read in id order a few MB at a
 * time: memory holds a page of each side, never a topic. Records are compared by semantic name, as
 * exports show them (`maps`: the field maps of the sides' revisions); values are whole.
 */
export async function* topicRecordDifferences(
  records: RecordsService,
  principal: Principal,
  maps: RevisionMaps,
  from: ComparedSide | undefined,
  to: ComparedSide | undefined,
): AsyncGenerator<FoundRecord> {
  const fromMap = (await maps.get(from?.revisionId))?.map;
  const toMap = (await maps.get(to?.revisionId))?.map;
  const before = new RecordCursor(records, principal, from);
  const after = new RecordCursor(records, principal, to);
  try {
    for (;;) {
      const a = await before.peek();
      const b = await after.peek();
      if (!a && !b) break;
      if (a && (!b || a._id < b._id)) {
        before.take();
        yield { kind: 'removed', record: a };
      } else if (b && (!a || b._id < a._id)) {
        after.take();
        yield { kind: 'added', record: b };
      } else if (a && b) {
        before.take();
        after.take();
        const changes = recordChanges(semanticRecord(a, fromMap), semanticRecord(b, toMap));
        yield changes.name || changes.fields.length > 0
          ? { kind: 'changed', before: a, record: b, changes }
          : { kind: 'unchanged', record: b };
      }
    }
  } finally {
    await before.close();
    await after.close();
  }
}

/** What changed, with each value cut to COMPARE_VALUE_CHARS (a cut one ends with "…"). */
export function clippedChanges(changes: RecordChanges): RecordChanges {
  return { name: changes.name, fields: changes.fields.map(clipped) };
}

/**
 * Compares a topic's records on two sides (`topicRecordDifferences`): memory holds the differences
 * `page` lists, never a topic. Listed values are cut to COMPARE_VALUE_CHARS.
 */
export async function compareTopicRecords(
  records: RecordsService,
  principal: Principal,
  maps: RevisionMaps,
  topic: Pick<TopicComparison, 'historyId' | 'name' | 'status'>,
  from: ComparedSide | undefined,
  to: ComparedSide | undefined,
  page: DifferencePage,
): Promise<TopicComparison> {
  const counts = { added: 0, removed: 0, changed: 0, unchanged: 0 };
  const differences: RecordDifference[] = [];
  let omitted = 0;
  for await (const found of topicRecordDifferences(records, principal, maps, from, to)) {
    counts[found.kind]++;
    if (found.kind === 'unchanged') continue;
    const { record } = found;
    const difference: RecordDifference = {
      id: record._id,
      name: record.name,
      kind: found.kind,
      changes: found.kind === 'changed' ? clippedChanges(found.changes) : null,
    };
    if (page.take(difference)) differences.push(difference);
    else omitted++;
  }
  return {
    ...topic,
    fromRevisionId: from?.revisionId ?? null,
    toRevisionId: to?.revisionId ?? null,
    counts,
    differences,
    omitted,
  };
}
