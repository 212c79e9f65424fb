import { sql } from 'kysely';
import type { Storage } from '../storage/database.js';
import type { RecordHit } from '@rxs/web-api';

/** SQL parameters per IN list, well under SQLite's and PostgreSQL's limits. */
const IN_CHUNK = 500;

/**
 * The few read-only lookups the web app needs that the services do not offer (counts for the
 * topic list, record search for linking, names for ids). Every query is scoped to the tenant.
 */
export class WebQueries {
  constructor(private readonly storage: Storage) {}

  private get db() {
    return this.storage.db;
  }

  /** Number of records per revision id. */
  async recordCounts(tenantId: string, revisionIds: string[]): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    const unique = [...new Set(revisionIds)];
    for (let i = 0; i < unique.length; i += IN_CHUNK) {
      const rows = await this.db
        .selectFrom('records')
        .select(['kt_revision_id', (eb) => eb.fn.countAll<number | string>().as('count')])
        .where('tenant_id', '=', tenantId)
        .where('kt_revision_id', 'in', unique.slice(i, i + IN_CHUNK))
        .groupBy('kt_revision_id')
        .execute();
      for (const row of rows) if (row.kt_revision_id) counts.set(row.kt_revision_id, Number(row.count));
    }
    return counts;
  }

  /** Records whose name contains `text` (case-insensitive) or whose id is `text`, with their topic. */
  async searchRecords(
    tenantId: string,
    text: string,
    limit: number,
    topicHistoryId?: string,
  ): Promise<RecordHit[]> {
    const needle = text.trim().toLowerCase();
    if (!needle) return [];
    const pattern = `%${needle.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const rows = await this.hits(tenantId)
      .$if(topicHistoryId !== undefined, (query) =>
        query.where('kt_revisions.history_id', '=', topicHistoryId!),
      )
      .where((eb) =>
        eb.or([
          eb('records.id', '=', needle),
          eb(sql<string>`lower(${sql.ref('records.name')})`, 'like', sql<string>`${pattern} escape '\\'`),
        ]),
      )
      .orderBy('records.name')
      .orderBy('records.id')
      .limit(limit)
      .execute();
    return rows.map(toHit);
  }

  /** Name and topic of each record id found (missing ids are absent from the map). */
  async recordHits(tenantId: string, ids: string[]): Promise<Map<string, RecordHit>> {
    const found = new Map<string, RecordHit>();
    const unique = [...new Set(ids)];
    for (let i = 0; i < unique.length; i += IN_CHUNK) {
      const rows = await this.hits(tenantId)
        .where('records.id', 'in', unique.slice(i, i + IN_CHUNK))
        .execute();
      for (const row of rows) found.set(row.id, toHit(row));
    }
    return found;
  }

  private hits(tenantId: string) {
    return this.db
      .selectFrom('records')
      .leftJoin('kt_revisions', 'kt_revisions.id', 'records.kt_revision_id')
      .select([
        'records.id',
        'records.name',
        'records.kt_revision_id',
        'kt_revisions.history_id',
        'kt_revisions.name as topic_name',
      ])
      .where('records.tenant_id', '=', tenantId);
  }
}

function toHit(row: {
  id: string;
  name: string;
  kt_revision_id: string | null;
  history_id: string | null;
  topic_name: string | null;
}): RecordHit {
  return {
    id: row.id,
    name: row.name,
    revisionId: row.kt_revision_id,
    historyId: row.history_id,
    topicName: row.topic_name,
  };
}
