import type { ExpressionBuilder, Kysely, Transaction } from 'kysely';
import { newObjectId } from './ids.js';
import { actorColumns, type ChangeActor } from './change-actor.js';
import type { Database, TraceTable } from './schema.js';

/**
 * The one write path of traces: creating, deleting, reviewing one or making it suspect appends its
 * event (`<trace id>-created`, `<trace id>-deleted`, `<trace id>-reviewed-<id>`, ...) in the same
 * transaction, so the traces of any past moment, and each trace's history, can be read back. Each
 * event also counts as a change of the tenant's traces (trigger of migrations/005 and 006): the
 * batch ETags move and the trace feed lists the trace again.
 */

type Trx = Transaction<Database>;

type TraceAction = 'created' | 'suspect' | 'reviewed' | 'deleted';

/**
 * Appends one event of a trace: the trace as it is after the event, who and why. A trace is created
 * and deleted once (`<id>-created`, `<id>-deleted`); it may be made suspect and reviewed many times.
 */
async function appendEvent(
  trx: Trx,
  row: TraceTable,
  action: TraceAction,
  reason: string | null,
  actor: ChangeActor,
): Promise<void> {
  const { id, ...columns } = row;
  const once = action === 'created' || action === 'deleted';
  await trx
    .insertInto('trace_events')
    .values({
      ...columns,
      id: once ? `${id}-${action}` : `${id}-${action}-${newObjectId()}`,
      trace_id: id,
      action,
      ...actorColumns(actor),
      reason,
    })
    .execute();
}

/** A trace's ends that are records of this service (other node kinds have no versions here). */
export function recordEndsOf(trace: {
  source_id: string;
  source_type: string;
  target_id: string;
  target_type: string;
}): string[] {
  return [
    ...(trace.source_type === 'Record' ? [trace.source_id] : []),
    ...(trace.target_type === 'Record' ? [trace.target_id] : []),
  ];
}

/** Traces from or to a node. */
const touchingNode = (node: string) => (eb: ExpressionBuilder<Database, 'traces'>) =>
  eb.or([eb('source_id', '=', node), eb('target_id', '=', node)]);

export async function insertTrace(trx: Trx, row: TraceTable, actor: ChangeActor): Promise<void> {
  await trx.insertInto('traces').values(row).execute();
  await appendEvent(trx, row, 'created', actor.reason, actor);
}

/** Deletes one trace with its event; false when there was none. */
export async function deleteTrace(
  trx: Trx,
  tenantId: string,
  id: string,
  actor: ChangeActor,
): Promise<boolean> {
  return (await deleteTraces(trx, tenantId, { id }, actor)) > 0;
}

/** Deletes the traces from or to a node (a record being deleted), each with its event. */
export async function deleteTracesTouching(
  trx: Trx,
  tenantId: string,
  nodeId: string,
  actor: ChangeActor,
): Promise<number> {
  return deleteTraces(trx, tenantId, { touching: nodeId }, actor);
}

async function deleteTraces(
  trx: Trx,
  tenantId: string,
  which: { id: string } | { touching: string },
  actor: ChangeActor,
): Promise<number> {
  let query = trx.deleteFrom('traces').where('tenant_id', '=', tenantId);
  if ('id' in which) query = query.where('id', '=', which.id);
  else query = query.where(touchingNode(which.touching));
  const rows = await query.returningAll().execute();
  for (const row of rows) await appendEvent(trx, row, 'deleted', actor.reason, actor);
  return rows.length;
}

/** SQL parameters per IN list, well under SQLite's and PostgreSQL's limits. */
export const IN_CHUNK = 500;

/** The current version of each record among `ids` (those that exist), in or out of a transaction. */
export async function recordVersions(
  db: Kysely<Database>,
  tenantId: string,
  ids: Iterable<string>,
): Promise<Map<string, string>> {
  const versions = new Map<string, string>();
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += IN_CHUNK) {
    const rows = await db
      .selectFrom('records')
      .select(['id', 'version'])
      .where('tenant_id', '=', tenantId)
      .where('id', 'in', unique.slice(i, i + IN_CHUNK))
      .execute();
    for (const row of rows) versions.set(row.id, row.version);
  }
  return versions;
}

/** The versions a trace stands for: its record ends as they are now (null for other node kinds). */

export async function endVersions(
  trx: Trx,
  tenantId: string,
  ends: { source_id: string; source_type: string; target_id: string; target_type: string },
): Promise<{ source_version: string | null; target_version: string | null }> {
  const versions = await recordVersions(trx, tenantId, recordEndsOf(ends));
  return {
    source_version: ends.source_type === 'Record' ? (versions.get(ends.source_id) ?? null) : null,
    target_version: ends.target_type === 'Record' ? (versions.get(ends.target_id) ?? null) : null,
  };
}

/** Whether a trace is suspect, given the current version of its record ends (undefined: gone). */
export function isSuspect(
  row: Pick<TraceTable, 'source_type' | 'source_version' | 'target_type' | 'target_version'> & {
    source_id: string;
    target_id: string;
  },
  currentVersion: (recordId: string) => string | null | undefined,
): boolean {
  const changed = (type: string, id: string, kept: string | null) => {
    if (type !== 'Record' || kept === null) return false;
    const now = currentVersion(id);
    return now !== undefined && now !== null && now !== kept;
  };
  return (
    changed(row.source_type, row.source_id, row.source_version) ||
    changed(row.target_type, row.target_id, row.target_version)
  );
}

/**
 * After record `recordId` changed from `previousVersion`: every trace touching it that was not
 * suspect before becomes suspect now, and says so in its history (a `suspect` event, with the
 * change's reason). Traces already suspect get nothing: they stay suspect until reviewed.
 */
export async function markTracesSuspect(
  trx: Trx,
  tenantId: string,
  recordId: string,
  previousVersion: string,
  actor: ChangeActor,
): Promise<number> {
  const touching = await trx
    .selectFrom('traces')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where(touchingNode(recordId))
    .orderBy('id')
    .execute();
  const ofRecord = touching.filter((t) => recordEndsOf(t).includes(recordId));
  if (ofRecord.length === 0) return 0;
  const others = ofRecord.flatMap(recordEndsOf).filter((id) => id !== recordId);
  const versions = await recordVersions(trx, tenantId, others);
  versions.set(recordId, previousVersion);
  let marked = 0;
  for (const trace of ofRecord) {
    if (isSuspect(trace, (id) => versions.get(id))) continue;
    await appendEvent(trx, trace, 'suspect', actor.reason, actor);
    marked++;
  }
  return marked;
}

/**
 * Reviews a trace: it now stands for its record ends as they are, and is no longer suspect. A
 * `reviewed` event keeps who, when and the comment. The trace as it is after, or undefined.
 */
export async function reviewTrace(
  trx: Trx,
  tenantId: string,
  id: string,
  comment: string | null,
  actor: ChangeActor,
): Promise<TraceTable | undefined> {
  const trace = await trx
    .selectFrom('traces')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!trace) return undefined;
  const versions = await endVersions(trx, tenantId, trace);
  const reviewed = await trx
    .updateTable('traces')
    .set(versions)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  if (!reviewed) return undefined;
  await appendEvent(trx, reviewed, 'reviewed', comment, actor);
  return reviewed;
}
