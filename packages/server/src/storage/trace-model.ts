import type { Kysely, Transaction } from 'kysely';
import { actorColumns, type ChangeActor } from './change-actor.js';
import type { Database, TraceModelVersionTable, TraceRoleTable } from './schema.js';

/**
 * A tenant's trace model in storage (migrations/012_trace_model.ts): its roles in order, and its
 * versions. Every write of the roles goes through writeTraceModel, which appends the version in the
 * same transaction, so the history is never behind the roles.
 */

type Db = Kysely<Database> | Transaction<Database>;
/** A role as stored, without its tenant. */
export type StoredTraceRole = Omit<TraceRoleTable, 'tenant_id' | 'position'>;

/** The roles of a tenant's model, in the model's order. */
export async function readTraceRoles(db: Db, tenantId: string): Promise<StoredTraceRole[]> {
  return db
    .selectFrom('trace_roles')
    .select([
      'id',
      'forward_name',
      'backward_name',
      'from_topic_history_id',
      'to_topic_history_id',
      'trace_source',
      'relation_type',
    ])
    .where('tenant_id', '=', tenantId)
    .orderBy('position')
    .execute();
}

/** The newest version of a tenant's model (who made it, when), or undefined before the first. */
export async function newestTraceModelVersion(
  db: Db,
  tenantId: string,
): Promise<Pick<TraceModelVersionTable, 'version' | 'at' | 'actor_user_id'> | undefined> {
  return db
    .selectFrom('trace_model_versions')
    .select(['version', 'at', 'actor_user_id'])
    .where('tenant_id', '=', tenantId)
    .orderBy('version', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/**
 * Replaces a tenant's roles and appends the model's version `version` (the newest plus one), with
 * the roles as they now are and what changed. Two changes based on the same version both try to
 * append the same version: the versions' key lets one in, and the other fails with a unique
 * violation (the caller's 409), also where they run at the same time on PostgreSQL.
 */
export async function writeTraceModel(
  trx: Transaction<Database>,
  tenantId: string,
  version: number,
  roles: readonly StoredTraceRole[],
  changes: unknown,
  actor: ChangeActor,
): Promise<void> {
  await trx
    .insertInto('trace_model_versions')
    .values({
      tenant_id: tenantId,
      version,
      ...actorColumns(actor),
      reason: actor.reason,
      roles: JSON.stringify(roles),
      changes: JSON.stringify(changes),
    })
    .execute();
  await trx.deleteFrom('trace_roles').where('tenant_id', '=', tenantId).execute();
  if (roles.length > 0)
    await trx
      .insertInto('trace_roles')
      .values(roles.map((role, position) => ({ ...role, tenant_id: tenantId, position })))
      .execute();
}

/** A page of a tenant's model versions, newest first: at most `limit`, older than `before` if given. */
export async function traceModelVersions(db: Db, tenantId: string, limit: number, before?: number) {
  let query = db
    .selectFrom('trace_model_versions as v')
    .leftJoin('users as u', 'u.id', 'v.actor_user_id')
    .selectAll('v')
    .select('u.email as user_email')
    .where('v.tenant_id', '=', tenantId);
  if (before !== undefined) query = query.where('v.version', '<', before);
  return query.orderBy('v.version', 'desc').limit(limit).execute();
}
