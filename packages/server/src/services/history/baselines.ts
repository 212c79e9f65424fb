import {
  roleAllows,
  type ApprovalMeaning,
  type Baseline,
  type BaselineCreate,
  type BaselineEvent,
  type BaselineEventAction,
  type BaselineRefusalCreate,
  type BaselineSignatureCreate,
  type BaselineSigner,
} from '@rxs/contract';
import type { Kysely, SelectQueryBuilder } from 'kysely';
import { AuditLog } from '../../auth/audit.js';
import { verifyPassword } from '../../auth/passwords.js';
import type { Principal } from '../../auth/principal.js';
import {
  conflict,
  forbidden,
  HttpError,
  notFound,
  unprocessable,
  validationItem,
} from '../../http/errors.js';
import { TooManyRequests } from '../../http/rate-limit.js';
import { changeActor, type ChangeActor } from '../../storage/change-actor.js';
import { isUniqueViolation } from '../../storage/constraints.js';
import type { Storage } from '../../storage/database.js';
import { newObjectId, nowIso } from '../../storage/ids.js';
import type { Database } from '../../storage/schema.js';
import { inTransaction } from '../../storage/transactions.js';
import { SignInThrottle } from '../../webapp/throttle.js';
import { parseAsOf } from './as-of.js';
import {
  allSigned,
  requiredSignersOf,
  toBaseline,
  toBaselineEvent,
  type BaselineEventRow,
  type BaselineRow,
} from './baseline-review.js';

/** What a signer decides on a proposed baseline. */
type Decision =
  { kind: 'sign'; meaning: ApprovalMeaning; reason: string | null } | { kind: 'refuse'; reason: string };

/** Times a decision is taken again when another one on the same baseline was taken at once. */
const DECISION_ATTEMPTS = 3;

/**
 * Baselines: a named, immutable moment over some KT revisions. Exporting a baseline is exporting
 * its revisions as of its moment (`as_of`), so it needs no copy of the data: history holds it.
 * A baseline may be proposed with required signers and is then released by their signatures
 * (baseline-review.ts states the rule); every step is an append-only row of `baseline_events`.
 */
export class BaselinesService {
  private readonly audit: AuditLog;
  /**
   * Wrong signing passwords, per user: an API key must not become a way to guess its user's
   * password, so after a few wrong ones each further try waits longer (as web sign-in does).
   */
  private readonly passwordThrottle = new SignInThrottle();

  constructor(private readonly storage: Storage) {
    this.audit = new AuditLog(storage);
  }

  private get db() {
    return this.storage.db;
  }

  async create(principal: Principal, input: BaselineCreate): Promise<Baseline> {
    const name = input.name.trim();
    if (!name) {
      throw unprocessable([
        validationItem(['body', 'name'], 'The baseline needs a name, e.g. v1.0.', 'string_too_short'),
      ]);
    }
    const createdAt = nowIso();
    const at =
      input.at === undefined
        ? createdAt
        : await parseAsOf(this.storage, principal.tenantId, input.at, ['body', 'at']);
    const revisionIds = [...new Set(input.knowledge_topic_revision_ids)];
    // Every revision must have existed at that moment, or the baseline would name nothing.
    const existing = await this.db
      .selectFrom('kt_revision_versions')
      .select('revision_id')
      .distinct()
      .where('tenant_id', '=', principal.tenantId)
      .where('revision_id', 'in', revisionIds)
      .where('at', '<=', at)
      .execute();
    const known = new Set(existing.map((row) => row.revision_id));
    const missing = revisionIds.filter((id) => !known.has(id));
    if (missing.length > 0) {
      throw unprocessable(
        missing.map((id) =>
          validationItem(
            ['body', 'knowledge_topic_revision_ids', input.knowledge_topic_revision_ids.indexOf(id)],
            `${id} is not a KT revision of your tenant that existed at ${at}. Use revision ids (not history ids) from GET /kt/.`,
            'unknown_revision',
          ),
        ),
      );
    }
    const signers = input.signers ? await this.resolveSigners(principal.tenantId, input.signers) : null;
    if (input.supersedes !== undefined) await this.assertKnownBaseline(principal.tenantId, input.supersedes);
    const row: BaselineRow = {
      id: newObjectId(),
      tenant_id: principal.tenantId,
      name,
      description: input.description?.trim() ?? '',
      at,
      revision_ids: JSON.stringify(revisionIds),
      created_by: principal.userId,
      created_at: createdAt,
      required_signers: signers ? JSON.stringify(signers) : null,
      supersedes: input.supersedes ?? null,
    };
    const actor = changeActor(principal, null, createdAt);
    const email = await this.emailOf(principal);
    try {
      await inTransaction(this.db, async (trx) => {
        await trx
          .insertInto('baselines')
          .values(row as never)
          .execute();
        await appendEvent(trx, row, 1, signers ? 'proposed' : 'released', actor, email);
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw this.nameTaken(name);
      throw error;
    }
    return this.get(principal, row.id);
  }

  private nameTaken(name: string) {
    return conflict(
      `A baseline named "${name}" already exists; baselines never change. Choose another name (e.g. "${name}-2").`,
    );
  }

  /** The proposal's signers as live users of the tenant, each once, each able to sign as asked. */
  private async resolveSigners(
    tenantId: string,
    requested: NonNullable<BaselineCreate['signers']>,
  ): Promise<BaselineSigner[]> {
    const problems = [];
    const signers: BaselineSigner[] = [];
    for (const [index, request] of requested.entries()) {
      const loc = ['body', 'signers', index, 'user'];
      const given = request.user.trim();
      const user = await this.db
        .selectFrom('users')
        .select(['id', 'email', 'role'])
        .where('tenant_id', '=', tenantId)
        .where('deleted_at', 'is', null)
        .where((eb) => eb.or([eb('id', '=', given), eb('email', '=', given.toLowerCase())]))
        .executeTakeFirst();
      const meaning = request.meaning ?? 'approved';
      if (!user) {
        problems.push(
          validationItem(
            loc,
            `${given} is not a user of your tenant (give an e-mail or a user id).`,
            'unknown_user',
          ),
        );
      } else if (signers.some((s) => s.user_id === user.id)) {
        problems.push(validationItem(loc, `${user.email} is asked to sign twice.`, 'duplicate_signer'));
      } else if (meaning === 'approved' && !roleAllows(user.role as Principal['role'], 'kt:approve')) {
        problems.push(
          validationItem(
            loc,
            `${user.email} is an ${user.role}: only owners and admins may sign as "approved". Ask them to sign as "reviewed", or give them another role.`,
            'signer_cannot_approve',
          ),
        );
      } else {
        signers.push({ user_id: user.id, email: user.email, meaning });
      }
    }
    if (problems.length > 0) throw unprocessable(problems);
    return signers;
  }

  /**
   * Any earlier baseline of the tenant may be superseded: a released one by the next release, a
   * refused one by the proposal that follows it, a proposal that cannot end (a signer has left) by
   * another. The earlier one stays as it is.
   */
  private async assertKnownBaseline(tenantId: string, id: string): Promise<void> {
    const earlier = await this.db
      .selectFrom('baselines')
      .select('id')
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!earlier) {
      throw unprocessable([
        validationItem(
          ['body', 'supersedes'],
          `${id} is not a baseline of your tenant. List your baselines with GET /baselines/.`,
          'unknown_baseline',
        ),
      ]);
    }
  }

  async list(
    principal: Principal,
    page: { limit: number; after?: string; name?: string },
  ): Promise<{ items: Baseline[]; next?: string }> {
    const rows = await this.load(principal.tenantId, (query) => {
      let paged = query.orderBy('id').limit(page.limit + 1);
      if (page.after) paged = paged.where('id', '>', page.after);
      if (page.name !== undefined) paged = paged.where('name', '=', page.name);
      return paged;
    });
    const items = rows.slice(0, page.limit);
    return { items, next: rows.length > page.limit ? items[items.length - 1]!._id : undefined };
  }

  async get(principal: Principal, id: string): Promise<Baseline> {
    const [baseline] = await this.load(principal.tenantId, (query) => query.where('id', '=', id));
    if (!baseline) throw notFound(`Baseline ${id} was not found. List your baselines with GET /baselines/.`);
    return baseline;
  }

  async findByName(principal: Principal, name: string): Promise<Baseline> {
    const [baseline] = await this.load(principal.tenantId, (query) => query.where('name', '=', name));
    if (!baseline)
      throw notFound(`No baseline is named "${name}". List your baselines with GET /baselines/.`);
    return baseline;
  }

  /** Every step of a baseline, oldest first. */
  async history(principal: Principal, id: string): Promise<BaselineEvent[]> {
    await this.get(principal, id);
    return (await eventsOf(this.db, [id])).map(toBaselineEvent);
  }

  /** The tenant's baselines a query selects, each with its review. */
  private async load(tenantId: string, select: (query: BaselineQuery) => BaselineQuery): Promise<Baseline[]> {
    const rows = await select(
      this.db.selectFrom('baselines').selectAll().where('tenant_id', '=', tenantId),
    ).execute();
    const events = await eventsOf(
      this.db,
      rows.map((row) => row.id),
    );
    return rows.map((row) =>
      toBaseline(
        row,
        events.filter((event) => event.baseline_id === row.id),
      ),
    );
  }

  /** `POST /baselines/{id}/signatures`: the caller signs with the meaning asked of them. */
  async sign(
    principal: Principal,
    id: string,
    body: BaselineSignatureCreate,
    clientAddress: string | null,
  ): Promise<Baseline> {
    const reason = body.reason?.trim() || null;
    return this.decide(
      principal,
      id,
      { kind: 'sign', meaning: body.meaning, reason },
      body.password,
      clientAddress,
    );
  }

  /** `POST /baselines/{id}/refusals`: the caller refuses, which ends the proposal. */
  async refuse(
    principal: Principal,
    id: string,
    body: BaselineRefusalCreate,
    clientAddress: string | null,
  ): Promise<Baseline> {
    const reason = body.reason.trim();
    if (!reason) {
      throw unprocessable([
        validationItem(['body', 'reason'], 'A refusal needs a reason.', 'string_too_short'),
      ]);
    }
    return this.decide(principal, id, { kind: 'refuse', reason }, body.password, clientAddress);
  }

  /**
   * A signer's decision, recorded only when every check passes; any answer turning it down is
   * written to the security log, and nothing else is written.
   */
  private async decide(
    principal: Principal,
    id: string,
    decision: Decision,
    password: string,
    clientAddress: string | null,
  ): Promise<Baseline> {
    const row = await this.db
      .selectFrom('baselines')
      .selectAll()
      .where('tenant_id', '=', principal.tenantId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw notFound(`Baseline ${id} was not found. List your baselines with GET /baselines/.`);
    const email = await this.emailOf(principal);
    try {
      assertMayDecide(principal, row, await eventsOf(this.db, [id]), decision);
      await this.confirmPassword(principal, password, decision);
      await this.record(principal, row, decision, email);
    } catch (error) {
      if (error instanceof HttpError && error.statusCode < 500) {
        const verb = decision.kind === 'sign' ? `sign (${decision.meaning})` : 'refuse';
        await this.audit.record(
          principal.tenantId,
          { userId: principal.userId, label: email, address: clientAddress },
          {
            action: 'baseline-signature-refused',
            detail: `${verb} baseline "${row.name}" (${row.id}): ${error.message}`,
          },
        );
      }
      throw error;
    }
    return this.get(principal, id);
  }

  /** The signer's own web password, with wrong ones slowed down per user. */
  private async confirmPassword(principal: Principal, password: string, decision: Decision): Promise<void> {
    const key = `baseline-signer:${principal.userId}`;
    const wait = this.passwordThrottle.waitFor([{ key }]);
    if (wait > 0) {
      const seconds = Math.ceil(wait / 1000);
      throw new TooManyRequests(`Too many wrong passwords. Try again in ${seconds} seconds.`, seconds);
    }
    const user = await this.db
      .selectFrom('users')
      .select('password_hash')
      .where('tenant_id', '=', principal.tenantId)
      .where('id', '=', principal.userId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (await verifyPassword(password, user?.password_hash ?? null)) {
      this.passwordThrottle.succeed(key);
      return;
    }
    this.passwordThrottle.fail([key]);
    const nothing = decision.kind === 'sign' ? 'nothing was signed' : 'nothing was refused';
    throw forbidden(
      `The password is wrong, so ${nothing}. Give the password you sign in to the web app with (a user without one sets it there first).`,
    );
  }

  /**
   * Appends the decision (and, when it completes the signatures, the release) after the steps
   * already there. Two decisions at once on one baseline collide on the step number; the later one
   * is checked again against the earlier and appended after it, or turned down.
   */
  private async record(
    principal: Principal,
    row: BaselineRow,
    decision: Decision,
    email: string,
  ): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await inTransaction(this.db, async (trx) => {
          const events = await eventsOf(trx, [row.id]);
          assertMayDecide(principal, row, events, decision);
          const actor = changeActor(principal, decision.reason);
          const n = events.length + 1;
          const step = await appendEvent(
            trx,
            row,
            n,
            decision.kind === 'sign' ? 'signed' : 'refused',
            actor,
            email,
            {
              meaning: decision.kind === 'sign' ? decision.meaning : null,
            },
          );
          if (decision.kind === 'sign' && allSigned(requiredSignersOf(row), [...events, step])) {
            await appendEvent(trx, row, n + 1, 'released', { ...actor, reason: null }, email);
          }
        });
        return;
      } catch (error) {
        if (attempt >= DECISION_ATTEMPTS || !isUniqueViolation(error)) throw error;
      }
    }
  }

  private async emailOf(principal: Principal): Promise<string> {
    const user = await this.db
      .selectFrom('users')
      .select('email')
      .where('tenant_id', '=', principal.tenantId)
      .where('id', '=', principal.userId)
      .executeTakeFirst();
    return user?.email ?? principal.userId;
  }
}

type BaselineQuery = SelectQueryBuilder<Database, 'baselines', BaselineRow>;

async function eventsOf(db: Kysely<Database>, baselineIds: string[]): Promise<BaselineEventRow[]> {
  if (baselineIds.length === 0) return [];
  return db
    .selectFrom('baseline_events')
    .selectAll()
    .where('baseline_id', 'in', baselineIds)
    .orderBy('baseline_id')
    .orderBy('n')
    .execute();
}

async function appendEvent(
  db: Kysely<Database>,
  row: BaselineRow,
  n: number,
  action: BaselineEventAction,
  actor: ChangeActor,
  email: string,
  extra: { meaning?: string | null } = {},
): Promise<BaselineEventRow> {
  const event: BaselineEventRow = {
    baseline_id: row.id,
    n,
    tenant_id: row.tenant_id,
    at: actor.at,
    action,
    actor_user_id: actor.userId,
    actor_email: email,
    actor_key_id: actor.keyId,
    via: actor.via,
    meaning: extra.meaning ?? null,
    reason: actor.reason,
  };
  await db.insertInto('baseline_events').values(event).execute();
  return event;
}

/**
 * Whether the caller may take this decision now: the baseline is still proposed, the caller is one
 * of its required signers, has not decided yet, and signs with the meaning asked of them (an
 * `approved` signature also needs a role that may approve).
 */
function assertMayDecide(
  principal: Principal,
  row: BaselineRow,
  events: BaselineEventRow[],
  decision: Decision,
): void {
  const baseline = toBaseline(row, events);
  const label = `baseline "${row.name}"`;
  const subject = `Baseline "${row.name}"`;
  if (baseline.status === 'released') {
    throw conflict(
      baseline.required_signers.length === 0
        ? `${subject} was released when it was made, without signers; it never changes. Propose a new baseline with signers (and "supersedes": "${row.id}") to have it signed.`
        : `${subject} was released at ${baseline.released_at}; it never changes. Propose a new baseline with "supersedes": "${row.id}" to change what was released.`,
    );
  }
  if (baseline.status === 'refused') {
    throw conflict(
      `${subject} was refused by ${baseline.refusal!.email} at ${baseline.refusal!.refused_at}; a refused proposal is over. Propose a new baseline with "supersedes": "${row.id}".`,
    );
  }
  const signer = baseline.required_signers.find((s) => s.user_id === principal.userId);
  if (!signer) {
    throw forbidden(
      `You were not asked to sign ${label}; its signers are ${baseline.required_signers.map((s) => s.email).join(', ')}.`,
    );
  }
  const earlier = events.find(
    (e) => (e.action === 'signed' || e.action === 'refused') && e.actor_user_id === principal.userId,
  );
  if (earlier) {
    throw conflict(`You already ${earlier.action} ${label} at ${earlier.at}; each signer decides once.`);
  }
  if (decision.kind === 'sign' && decision.meaning !== signer.meaning) {
    throw unprocessable([
      validationItem(
        ['body', 'meaning'],
        `You were asked to sign ${label} as "${signer.meaning}", not "${decision.meaning}".`,
        'wrong_meaning',
      ),
    ]);
  }
  if (
    decision.kind === 'sign' &&
    decision.meaning === 'approved' &&
    !roleAllows(principal.role, 'kt:approve')
  ) {
    throw forbidden(
      `Your role "${principal.role}" may not sign as "approved" (it lacks kt:approve). Ask an owner or admin of your tenant to change your role.`,
    );
  }
}
