import type { Transaction } from 'kysely';
import { actorColumns, type ChangeActor } from './change-actor.js';
import type { Database, TraceTable } from './schema.js';

/**
 * The one write path of traces: creating or deleting one appends its event (`<trace id>-created`,
 * `<trace id>-deleted`) in the same transaction, so the traces of any past moment can be read back.
 */

type Trx = Transaction<Database>;

export async function insertTrace(trx: Trx, row: TraceTable, actor: ChangeActor): Promise<void> {
  await trx.insertInto('traces').values(row).execute();
  const { id, ...columns } = row;
  await trx
    .insertInto('trace_events')
    .values({
      ...columns,
      id: `${id}-created`,
      trace_id: id,
      action: 'created',
      reason: actor.reason,
      ...actorColumns(actor),
    })
    .execute();
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
  else {
    const node = which.touching;
    query = query.where((eb) => eb.or([eb('source_id', '=', node), eb('target_id', '=', node)]));
  }
  const rows = await query.returningAll().execute();
  for (const { id, ...columns } of rows) {
    await trx
      .insertInto('trace_events')
      .values({
        ...columns,
        id: `${id}-deleted`,
        trace_id: id,
        action: 'deleted',
        reason: actor.reason,
        ...actorColumns(actor),
      })
      .execute();
  }
  return rows.length;
}
