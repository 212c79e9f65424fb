import { nowIso } from './ids.js';

/**
 * Who acts, as far as a history row records it. Storage names no caller's type: auth's Principal
 * (and anything else with these fields) is one.
 */
export interface Acting {
  userId: string;
  /** The API key used, when there was one. */
  keyId?: string;
  /** How the call came: absent means `api-key` when keyId is set, else `session`. */
  via?: ChangeActor['via'];
}

/** Who makes a change, how, when and why: what every history row records. */
export interface ChangeActor {
  userId: string;
  keyId: string | null;
  via: 'api-key' | 'session' | 'local';
  reason: string | null;
  /** The moment of the change; every row one change writes carries the same. */
  at: string;
}

export function changeActor(acting: Acting, reason?: string | null, at: string = nowIso()): ChangeActor {
  return {
    userId: acting.userId,
    keyId: acting.keyId ?? null,
    via: acting.via ?? (acting.keyId ? 'api-key' : 'session'),
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
