import type { RecordsClient } from '@rxs/client';

/** Records by the identities a file names them by, with their topic (its index in the revisions). */
export type RecordIdentities = ReadonlyMap<string, { recordId: string; topic: number }>;

/**
 * The records of the topics by the identities a file names them by: their source id
 * (`context.global_element_id`, the spec object's IDENTIFIER) and an rxs export's `R-<_id>`.
 */
export async function recordsByIdentity(
  client: { records: Pick<RecordsClient, 'listRecords'> },
  revisionIds: readonly string[],
): Promise<RecordIdentities> {
  const records = new Map<string, { recordId: string; topic: number }>();
  for (const [topic, revisionId] of revisionIds.entries())
    for await (const record of client.records.listRecords({ context__knowledge_unit_topic_id: revisionId })) {
      records.set(`R-${record._id}`, { recordId: record._id, topic });
      const sourceId = record.context?.global_element_id;
      if (sourceId) records.set(sourceId, { recordId: record._id, topic });
    }
  return records;
}
