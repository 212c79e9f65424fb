import type {
  ApprovalMeaning,
  Baseline,
  BaselineEvent,
  BaselineEventAction,
  BaselineSigner,
  ChangeChannel,
} from '@rxs/contract';
import type { Selectable } from 'kysely';
import { jsonValue } from '../../storage/json.js';
import type { BaselineEventTable, BaselineTable } from '../../storage/schema.js';

export type BaselineRow = Selectable<BaselineTable>;
export type BaselineEventRow = Selectable<BaselineEventTable>;

/**
 * The review rule, stated once: a baseline with required signers is `proposed` until each of them
 * has signed with the meaning asked of them, and is then `released` (a `released` step records the
 * moment); a single refusal ends it as `refused`. A baseline made without signers was released when
 * it was made. Released and refused are final: nothing is added to the baseline after either.
 */
export function requiredSignersOf(row: BaselineRow): BaselineSigner[] {
  return jsonValue<BaselineSigner[] | null>(row.required_signers) ?? [];
}

/** Whether, with these signatures in, every required signer has signed. */
export function allSigned(signers: BaselineSigner[], events: BaselineEventRow[]): boolean {
  const signed = new Set(events.filter((e) => e.action === 'signed').map((e) => e.actor_user_id));
  return signers.every((signer) => signed.has(signer.user_id));
}

/** The baseline as the API shows it: the row and what its steps (ordered by `n`) make of it. */
export function toBaseline(row: BaselineRow, events: BaselineEventRow[]): Baseline {
  const refused = events.find((e) => e.action === 'refused');
  const released = events.find((e) => e.action === 'released');
  const signers = requiredSignersOf(row);
  // A baseline of a copy made before its steps were recorded has none: it was released when made.
  const releasedAt = released?.at ?? (signers.length === 0 ? row.created_at : null);
  return {
    _id: row.id,
    name: row.name,
    description: row.description,
    at: row.at,
    knowledge_topic_revision_ids: jsonValue<string[]>(row.revision_ids),
    created_by: row.created_by,
    created_at: row.created_at,
    status: refused ? 'refused' : releasedAt ? 'released' : 'proposed',
    released_at: refused ? null : releasedAt,
    supersedes: row.supersedes,
    required_signers: signers,
    signatures: events
      .filter((e) => e.action === 'signed')
      .map((e) => ({
        user_id: e.actor_user_id,
        email: e.actor_email,
        meaning: e.meaning as ApprovalMeaning,
        reason: e.reason,
        signed_at: e.at,
      })),
    refusal: refused
      ? {
          user_id: refused.actor_user_id,
          email: refused.actor_email,
          reason: refused.reason ?? '',
          refused_at: refused.at,
        }
      : null,
  };
}

export function toBaselineEvent(row: BaselineEventRow): BaselineEvent {
  return {
    n: row.n,
    action: row.action as BaselineEventAction,
    at: row.at,
    user_id: row.actor_user_id,
    user_email: row.actor_email,
    key_id: row.actor_key_id,
    via: row.via as ChangeChannel,
    meaning: row.meaning as ApprovalMeaning | null,
    reason: row.reason,
  };
}
