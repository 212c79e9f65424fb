import type { ServiceRecord } from '@rxs/contract';
import { clip } from '@rxs/contract/validation';
import type { Principal } from '../auth/principal.js';
import type { RecordsService } from '../services/records/service.js';
import type { FieldDifference, RecordDifference, TopicComparison } from '@rxs/web-api';
import { recordsInPages } from './record-pages.js';
import { recordChanges, type RevisionMaps, semanticRecord } from './record-values.js';

/** One side of a comparison: a topic's records under a revision, as of a moment (undefined: now). */
export interface ComparedSide {
  revisionId: string;
  asOf: string | undefined;
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

  /** Whether `difference` goes on this page (it counts as found either way). */
  take(difference: RecordDifference): boolean {
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

/**
 * Compares a topic's records on two sides by a merge of both listings, each read in id order a few
 * MB at a time: memory holds a page of each side and the differences `page` lists, never a topic.
 * Records are compared by semantic name, as exports show them; listed values are cut to
 * COMPARE_VALUE_CHARS.
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
  const fromMap = (await maps.get(from?.revisionId))?.map;
  const toMap = (await maps.get(to?.revisionId))?.map;
  const counts = { added: 0, removed: 0, changed: 0, unchanged: 0 };
  const differences: RecordDifference[] = [];
  let omitted = 0;
  const list = (difference: RecordDifference) => {
    if (page.take(difference)) differences.push(difference);
    else omitted++;
  };
  const before = new RecordCursor(records, principal, from);
  const after = new RecordCursor(records, principal, to);
  try {
    for (;;) {
      const a = await before.peek();
      const b = await after.peek();
      if (!a && !b) break;
      if (a && (!b || a._id < b._id)) {
        before.take();
        counts.removed++;
        list({ id: a._id, name: a.name, kind: 'removed', changes: null });
      } else if (b && (!a || b._id < a._id)) {
        after.take();
        counts.added++;
        list({ id: b._id, name: b.name, kind: 'added', changes: null });
      } else if (a && b) {
        before.take();
        after.take();
        const changes = recordChanges(semanticRecord(a, fromMap), semanticRecord(b, toMap));
        if (changes.name || changes.fields.length > 0) {
          counts.changed++;
          list({
            id: b._id,
            name: b.name,
            kind: 'changed',
            changes: { name: changes.name, fields: changes.fields.map(clipped) },
          });
        } else {
          counts.unchanged++;
        }
      }
    }
  } finally {
    await before.close();
    await after.close();
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
