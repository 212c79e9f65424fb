import { sql, type Transaction } from 'kysely';
import type { ChangeActor } from './change-actor.js';
import type { Database } from './schema.js';

type Trx = Transaction<Database>;
export type RevisionAction = 'created' | 'updated' | 'approved';

/**
 * Appends a KT revision's next version: the revision as it is now in this transaction. Called by
 * every write of `kt_revisions` (techdoc service, demo seed) right after it, so `GET /kt/{id}?as_of=`
 * can answer the revision as it was at any moment.
 */
export async function appendRevisionVersion(
  trx: Trx,
  tenantId: string,
  revisionId: string,
  action: RevisionAction,
  actor: ChangeActor,
): Promise<void> {
  const copied = [
    'tenant_id',
    'history_id',
    'name',
    'type',
    'version',
    'status',
    'schema',
    'data',
    'product_history_id',
    'product_version',
    'knowledge_unit_history_id',
    'knowledge_unit_version',
    'source_schema_id',
    'created_by',
    'created_at',
    'updated_by',
    'updated_at',
    'last_action',
    'approved_by',
    'approved_at',
    'approval_meaning',
    'approval_reason',
    'approval_signature',
  ] as const;
  await trx
    .insertInto('kt_revision_versions')
    .columns(['revision_id', 'n', 'at', 'action', 'actor_user_id', 'actor_key_id', 'via', ...copied])
    .expression((eb) =>
      eb
        .selectFrom('kt_revisions as k')
        .select([
          'k.id as revision_id',
          sql<number>`coalesce((SELECT max(v.n) FROM kt_revision_versions v WHERE v.revision_id = k.id), 0) + 1`.as(
            'n',
          ),
          sql<string>`${actor.at}`.as('at'),
          sql<string>`${action}`.as('action'),
          sql<string>`${actor.userId}`.as('actor_user_id'),
          sql<string | null>`${actor.keyId}`.as('actor_key_id'),
          sql<string>`${actor.via}`.as('via'),
          ...copied.map((column) => `k.${column}` as const),
        ])
        .where('k.tenant_id', '=', tenantId)
        .where('k.id', '=', revisionId),
    )
    .execute();
}
