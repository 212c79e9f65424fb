import type { Kysely } from 'kysely';
import type { Storage } from '../storage/database.js';
import { newObjectId, nowIso } from '../storage/ids.js';
import type { Database } from '../storage/schema.js';

export const AUDIT_ACTIONS = [
  'sign-in',
  'sign-in-failed',
  'key-created',
  'key-regenerated',
  'key-revoked',
  'user-created',
  'user-deleted',
  'role-changed',
  'password-changed',
  /** A baseline signature or refusal the server turned down (wrong password, not a signer, ...). */
  'baseline-signature-refused',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Who acted and from where. */
export interface AuditActor {
  /** The acting user; null for the command line or a sign-in that matched no user. */
  userId: string | null;
  /** Readable: an e-mail, or what acted without a user. */
  label: string;
  /** The client's address; null where there is none (the command line). */
  address: string | null;
}

/** Changes made without a signed-in user: `rxs admin` on the database, the demo seed. */
export const LOCAL_ACTOR: AuditActor = { userId: null, label: 'rxs admin (local)', address: null };

export interface AuditEvent {
  id: string;
  at: string;
  action: AuditAction;
  actor_user_id: string | null;
  actor: string;
  client_address: string | null;
  target_type: 'user' | 'key' | null;
  target_id: string | null;
  target: string | null;
  detail: string | null;
}

export interface AuditEntry {
  action: AuditAction;
  target?: { type: 'user' | 'key'; id: string; label: string };
  detail?: string;
}

/** Newest events returned at most per page. */
export const MAX_AUDIT_PAGE = 500;

/**
 * The security audit log of a tenant: who signed in or failed to, and who changed keys, users and
 * roles, when and from where. Events are only ever inserted: nothing here (or anywhere) edits or
 * deletes them, and every read is scoped to one tenant.
 */
export class AuditLog {
  constructor(private readonly storage: Storage) {}

  async record(
    tenantId: string,
    actor: AuditActor,
    entry: AuditEntry,
    db: Kysely<Database> = this.storage.db,
  ): Promise<void> {
    await db
      .insertInto('audit_events')
      .values({
        id: newObjectId(),
        tenant_id: tenantId,
        at: nowIso(),
        action: entry.action,
        actor_user_id: actor.userId,
        actor: actor.label,
        client_address: actor.address,
        target_type: entry.target?.type ?? null,
        target_id: entry.target?.id ?? null,
        target: entry.target?.label ?? null,
        detail: entry.detail ?? null,
      })
      .execute();
  }

  /** Newest first; `before` is the id of the last event of the previous page. */
  async list(tenantId: string, options: { limit?: number; before?: string } = {}): Promise<AuditEvent[]> {
    const limit = Math.min(Math.max(options.limit ?? 100, 1), MAX_AUDIT_PAGE);
    let query = this.storage.db
      .selectFrom('audit_events')
      .select([
        'id',
        'at',
        'action',
        'actor_user_id',
        'actor',
        'client_address',
        'target_type',
        'target_id',
        'target',
        'detail',
      ])
      .where('tenant_id', '=', tenantId)
      .orderBy('at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit);
    if (options.before) {
      const before = await this.storage.db
        .selectFrom('audit_events')
        .select(['at', 'id'])
        .where('tenant_id', '=', tenantId)
        .where('id', '=', options.before)
        .executeTakeFirst();
      if (before) {
        query = query.where((eb) =>
          eb.or([eb('at', '<', before.at), eb.and([eb('at', '=', before.at), eb('id', '<', before.id)])]),
        );
      }
    }
    const rows = await query.execute();
    return rows.map((r) => ({
      ...r,
      action: r.action as AuditAction,
      target_type: r.target_type as AuditEvent['target_type'],
    }));
  }
}
