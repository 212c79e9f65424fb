import type { ServiceRecord } from '@rxs/sdk';
import type { Principal } from '../auth/principal.js';
import type { RecordsService } from '../services/records/service.js';
import type { RecordDifference, TopicComparison } from './api-types.js';
import { recordChanges, type RevisionMaps, semanticRecord } from './record-values.js';

/** One side of a comparison: a topic's records under a revision, as of a moment (undefined: now). */
export interface ComparedSide {
  revisionId: string;
  asOf: string | undefined;
}

/** The records of one side in id order, one at a time, with a look at the next. */
class RecordCursor {
  private readonly lines: AsyncGenerator<string> | undefined;
  private head: ServiceRecord | undefined;
  private loaded = false;

  constructor(records: RecordsService, principal: Principal, side: ComparedSide | undefined) {
    this.lines = side
      ? records.streamJsonLines(principal, { revisionIds: [side.revisionId], asOf: side.asOf })
      : undefined;
  }

  async peek(): Promise<ServiceRecord | undefined> {
    if (!this.loaded) {
      this.loaded = true;
      const next = await this.lines?.next();
      this.head = next && !next.done ? (JSON.parse(next.value) as ServiceRecord) : undefined;
    }
    return this.head;
  }

  take(): void {
    this.loaded = false;
  }

  async close(): Promise<void> {
    await this.lines?.return(undefined);
  }
}

/**
 * Compares a topic's records on two sides by a merge of both listings, which the records service
 * streams in id order: memory holds one record of each side and the differences listed (at most
 * `room`), never a topic. Records are compared by semantic name, as exports show them.
 */
export async function compareTopicRecords(
  records: RecordsService,
  principal: Principal,
  maps: RevisionMaps,
  topic: Pick<TopicComparison, 'historyId' | 'name' | 'status'>,
  from: ComparedSide | undefined,
  to: ComparedSide | undefined,
  room: number,
): Promise<TopicComparison> {
  const fromMap = (await maps.get(from?.revisionId))?.map;
  const toMap = (await maps.get(to?.revisionId))?.map;
  const counts = { added: 0, removed: 0, changed: 0, unchanged: 0 };
  const differences: RecordDifference[] = [];
  let omitted = 0;
  const list = (difference: RecordDifference) => {
    if (differences.length < room) differences.push(difference);
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
          list({ id: b._id, name: b.name, kind: 'changed', changes });
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
