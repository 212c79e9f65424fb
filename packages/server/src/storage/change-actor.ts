import type { Principal } from '../auth/principal.js';
import { nowIso } from './ids.js';

/** Who makes a change, how, when and why: what every history row records. */
export interface ChangeActor {
  userId: string;
  keyId: string | null;
  via: 'api-key' | 'session' | 'local';
  reason: string | null;
  /** The moment of the change; every row one change writes carries the same. */
  at: string;
}

export function changeActor(
  principal: Principal,
  reason?: string | null,
  at: string = nowIso(),
): ChangeActor {
  return {
    userId: principal.userId,
    keyId: principal.keyId ?? null,
    via: principal.via ?? (principal.keyId ? 'api-key' : 'session'),
    reason: reason?.trim() ? reason.trim() : null,
    at,
  };
}

/** The actor columns of a history row. */
export function actorColumns(actor: ChangeActor) {
  return {
    at: actor.at,
    actor_user_id: actor.userId,
    actor_key_id: actor.keyId,
    via: actor.via,
  };
}
