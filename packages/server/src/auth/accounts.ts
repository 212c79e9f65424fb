import { randomUUID } from 'node:crypto';
import { isRole, ROLE_PERMISSIONS, ROLES, type Account, type Role } from '@rxs/contract';
import { MAX_KEY_LIFETIME_DAYS, maxKeyLifetimeDaysFromEnv } from '../config.js';
import type { Storage } from '../storage/database.js';
import { newObjectId, nowIso } from '../storage/ids.js';
import { inTransaction } from '../storage/transactions.js';
import { conflict, HttpError, notFound } from '../http/errors.js';
import { generateApiKey } from './api-keys.js';
import { hashPassword } from './passwords.js';
import { AuditLog, LOCAL_ACTOR, type AuditActor } from './audit.js';
import type { Principal } from './principal.js';

export interface Tenant {
  id: string;
  name: string;
  product_history_id: string;
  knowledge_unit_history_id: string;
  created_at: string;
}

export interface User {
  id: string;
  tenant_id: string;
  email: string;
  name: string;
  role: Role;
  created_at: string;
}

export interface ApiKeyInfo {
  id: string;
  name: string;
  user_id: string;
  user_email: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

export interface NewApiKey extends ApiKeyInfo {
  /** The key itself: shown once, never stored. */
  key: string;
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;
const DAY_MS = 86_400_000;
// An ISO 8601 date or date-time (with seconds, fractions and a zone optional).
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?$/;

export interface AccountPolicy {
  /** Longest key lifetime in days; keys without an expiry then get this one. Undefined: no limit
   * below MAX_KEY_LIFETIME_DAYS, and keys may be made without an expiry. */
  maxKeyLifetimeDays?: number;
}

/** A live user that may sign in, with its tenant's name (sign-in may have to choose a tenant). */
export interface SignInCandidate {
  id: string;
  tenant_id: string;
  tenant_name: string;
  email: string;
  password_hash: string | null;
}

/** Higher roles first: owner > admin > editor > viewer. */
export function roleRank(role: Role): number {
  return ROLES.length - ROLES.indexOf(role);
}

/**
 * Tenants, users and API keys: the operations behind `rxs admin` and the web app's Settings. Every
 * call is scoped to a tenant; ids of another tenant are "not found".
 */
export class Accounts {
  readonly audit: AuditLog;

  constructor(
    private readonly storage: Storage,
    readonly policy: AccountPolicy = { maxKeyLifetimeDays: maxKeyLifetimeDaysFromEnv() },
  ) {
    this.audit = new AuditLog(storage);
  }

  private get db() {
    return this.storage.db;
  }

  async createTenant(name: string): Promise<Tenant> {
    if (!name.trim())
      throw new HttpError(422, [{ loc: ['body', 'name'], msg: 'A tenant needs a name', type: 'missing' }]);
    const tenant: Tenant = {
      id: randomUUID(),
      name: name.trim(),
      product_history_id: newObjectId(),
      knowledge_unit_history_id: newObjectId(),
      created_at: nowIso(),
    };
    await this.db.insertInto('tenants').values(tenant).execute();
    return tenant;
  }

  async listTenants(): Promise<Tenant[]> {
    return this.db.selectFrom('tenants').selectAll().orderBy('created_at').execute();
  }

  async getTenant(tenantId: string): Promise<Tenant> {
    const tenant = await this.db
      .selectFrom('tenants')
      .selectAll()
      .where('id', '=', tenantId)
      .executeTakeFirst();
    if (!tenant) throw notFound(`Tenant ${tenantId} does not exist. List tenants with "rxs admin tenants".`);
    return tenant;
  }

  async createUser(
    tenantId: string,
    input: { email: string; name?: string; role: string; password?: string },
    actor: AuditActor = LOCAL_ACTOR,
  ): Promise<User> {
    await this.getTenant(tenantId);
    const email = input.email.trim().toLowerCase();
    if (!EMAIL.test(email)) {
      throw new HttpError(422, [
        { loc: ['body', 'email'], msg: `"${input.email}" is not an e-mail address`, type: 'value_error' },
      ]);
    }
    if (!isRole(input.role)) {
      throw new HttpError(422, [
        {
          loc: ['body', 'role'],
          msg: `Role must be one of owner, admin, editor, viewer; got "${input.role}"`,
          type: 'enum',
        },
      ]);
    }
    // Users are per tenant: only a live user of this tenant holds the address.
    const existing = await this.db
      .selectFrom('users')
      .select('id')
      .where('tenant_id', '=', tenantId)
      .where('email', '=', email)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (existing) throw conflict(`This tenant already has a user with the e-mail ${email}.`);
    const user: User = {
      id: randomUUID(),
      tenant_id: tenantId,
      email,
      name: input.name?.trim() || email,
      role: input.role,
      created_at: nowIso(),
    };
    const password_hash = input.password ? await hashPassword(input.password) : null;
    await this.db
      .insertInto('users')
      .values({ ...user, password_hash, deleted_at: null })
      .execute();
    await this.audit.record(tenantId, actor, {
      action: 'user-created',
      target: { type: 'user', id: user.id, label: email },
      detail: `role ${user.role}`,
    });
    return user;
  }

  async listUsers(tenantId: string): Promise<User[]> {
    const rows = await this.db
      .selectFrom('users')
      .select(['id', 'tenant_id', 'email', 'name', 'role', 'created_at'])
      .where('tenant_id', '=', tenantId)
      .where('deleted_at', 'is', null)
      .orderBy('email')
      .execute();
    return rows.map((r) => ({ ...r, role: r.role as Role }));
  }

  async getUser(tenantId: string, userId: string): Promise<User> {
    const row = await this.db
      .selectFrom('users')
      .select(['id', 'tenant_id', 'email', 'name', 'role', 'created_at'])
      .where('tenant_id', '=', tenantId)
      .where('id', '=', userId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (!row) throw notFound(`User ${userId} was not found in this tenant.`);
    return { ...row, role: row.role as Role };
  }

  /** A live user with this address: in the tenant given, else the first found (tools and tests). */
  async findUserByEmail(email: string, tenantId?: string) {
    let query = this.db
      .selectFrom('users')
      .selectAll()
      .where('email', '=', email.trim().toLowerCase())
      .where('deleted_at', 'is', null)
      .orderBy('created_at');
    if (tenantId) query = query.where('tenant_id', '=', tenantId);
    return query.executeTakeFirst();
  }

  /** Every live user with this address, in any tenant: sign-in then finds whose password it is. */
  async signInCandidates(email: string, tenantId?: string): Promise<SignInCandidate[]> {
    let query = this.db
      .selectFrom('users')
      .innerJoin('tenants', 'tenants.id', 'users.tenant_id')
      .select([
        'users.id',
        'users.tenant_id',
        'tenants.name as tenant_name',
        'users.email',
        'users.password_hash',
      ])
      .where('users.email', '=', email.trim().toLowerCase())
      .where('users.deleted_at', 'is', null)
      .orderBy('tenants.name');
    if (tenantId) query = query.where('users.tenant_id', '=', tenantId);
    return query.execute();
  }

  /** The stored password hash of a live user of the tenant (null: no password set). */
  async passwordHashOf(tenantId: string, userId: string): Promise<string | null> {
    const row = await this.db
      .selectFrom('users')
      .select('password_hash')
      .where('tenant_id', '=', tenantId)
      .where('id', '=', userId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return row?.password_hash ?? null;
  }

  async setRole(
    tenantId: string,
    userId: string,
    role: string,
    actor: AuditActor = LOCAL_ACTOR,
  ): Promise<User> {
    const user = await this.getUser(tenantId, userId);
    if (!isRole(role)) {
      throw new HttpError(422, [
        { loc: ['body', 'role'], msg: `Role must be one of owner, admin, editor, viewer`, type: 'enum' },
      ]);
    }
    if (user.role === 'owner' && role !== 'owner') await this.assertAnotherOwner(tenantId, userId);
    await this.db.updateTable('users').set({ role }).where('id', '=', userId).execute();
    await this.audit.record(tenantId, actor, {
      action: 'role-changed',
      target: { type: 'user', id: user.id, label: user.email },
      detail: `${user.role} → ${role}`,
    });
    return { ...user, role };
  }

  async setPassword(
    tenantId: string,
    userId: string,
    password: string,
    actor: AuditActor = LOCAL_ACTOR,
  ): Promise<void> {
    const user = await this.getUser(tenantId, userId);
    await this.db
      .updateTable('users')
      .set({ password_hash: await hashPassword(password) })
      .where('id', '=', userId)
      .execute();
    await this.audit.record(tenantId, actor, {
      action: 'password-changed',
      target: { type: 'user', id: user.id, label: user.email },
    });
  }

  /** Deletes a user; their keys stop working at once (the key check joins the live user). */
  async deleteUser(tenantId: string, userId: string, actor: AuditActor = LOCAL_ACTOR): Promise<void> {
    const user = await this.getUser(tenantId, userId);
    if (user.role === 'owner') await this.assertAnotherOwner(tenantId, userId);
    const now = nowIso();
    await inTransaction(this.db, async (trx) => {
      await trx.updateTable('users').set({ deleted_at: now }).where('id', '=', userId).execute();
      await trx
        .updateTable('api_keys')
        .set({ revoked_at: now })
        .where('user_id', '=', userId)
        .where('revoked_at', 'is', null)
        .execute();
      await trx.deleteFrom('sessions').where('user_id', '=', userId).execute();
      await this.audit.record(
        tenantId,
        actor,
        { action: 'user-deleted', target: { type: 'user', id: user.id, label: user.email } },
        trx,
      );
    });
  }

  private async assertAnotherOwner(tenantId: string, userId: string): Promise<void> {
    const owners = await this.db
      .selectFrom('users')
      .select('id')
      .where('tenant_id', '=', tenantId)
      .where('role', '=', 'owner')
      .where('deleted_at', 'is', null)
      .where('id', '!=', userId)
      .execute();
    if (owners.length === 0)
      throw conflict('A tenant must keep at least one owner. Make another user owner first.');
  }

  async createApiKey(
    tenantId: string,
    input: { userId: string; name: string; expiresAt?: string | null },
    actor: AuditActor = LOCAL_ACTOR,
    audit: { action: 'key-created' | 'key-regenerated'; detail?: string } = { action: 'key-created' },
  ): Promise<NewApiKey> {
    const user = await this.getUser(tenantId, input.userId);
    const expires_at = this.keyExpiry(input.expiresAt ?? null);
    const generated = generateApiKey();
    const row = {
      id: generated.id,
      tenant_id: tenantId,
      user_id: user.id,
      name: input.name.trim() || 'API key',
      hash: generated.hash,
      created_at: nowIso(),
      expires_at,
      revoked_at: null,
      last_used_at: null,
    };
    await this.db.insertInto('api_keys').values(row).execute();
    await this.audit.record(tenantId, actor, {
      action: audit.action,
      target: { type: 'key', id: row.id, label: `${row.name} (${user.email})` },
      detail: audit.detail ?? (expires_at ? `expires ${expires_at}` : 'never expires'),
    });
    const { hash: _hash, tenant_id: _tenant, ...info } = row;
    return { ...info, user_email: user.email, key: generated.key };
  }

  async listApiKeys(
    tenantId: string,
    filter: { userId?: string; includeRevoked?: boolean } = {},
  ): Promise<ApiKeyInfo[]> {
    let query = this.db
      .selectFrom('api_keys')
      .innerJoin('users', 'users.id', 'api_keys.user_id')
      .select([
        'api_keys.id',
        'api_keys.name',
        'api_keys.user_id',
        'users.email as user_email',
        'api_keys.created_at',
        'api_keys.expires_at',
        'api_keys.revoked_at',
        'api_keys.last_used_at',
      ])
      .where('api_keys.tenant_id', '=', tenantId)
      .orderBy('api_keys.created_at');
    if (filter.userId) query = query.where('api_keys.user_id', '=', filter.userId);
    if (!filter.includeRevoked) query = query.where('api_keys.revoked_at', 'is', null);
    return query.execute();
  }

  async getApiKey(tenantId: string, keyId: string): Promise<ApiKeyInfo> {
    const key = (await this.listApiKeys(tenantId, { includeRevoked: true })).find((k) => k.id === keyId);
    if (!key) throw notFound(`API key ${keyId} was not found in this tenant.`);
    return key;
  }

  /** `GET /account`: the calling key's user, role and tenant (the principal was resolved from it). */
  async accountOf(principal: Principal): Promise<Account> {
    const [tenant, user] = await Promise.all([
      this.getTenant(principal.tenantId),
      this.getUser(principal.tenantId, principal.userId),
    ]);
    const key =
      principal.keyId === undefined
        ? undefined
        : await this.db
            .selectFrom('api_keys')
            .select(['id', 'name', 'expires_at'])
            .where('id', '=', principal.keyId)
            .where('user_id', '=', principal.userId)
            .executeTakeFirst();
    if (!key) throw notFound('The account is answered for API keys only: call it with X-API-Key.');
    return {
      tenant: { id: tenant.id, name: tenant.name },
      user: { id: user.id, email: user.email, name: user.name },
      role: principal.role,
      permissions: [...ROLE_PERMISSIONS[principal.role]],
      key: { id: key.id, name: key.name, expires_at: key.expires_at },
    };
  }

  /**
   * The stored expiry of a new key: an ISO 8601 date or date-time no further ahead than the
   * installation's maximum lifetime (MAX_KEY_LIFETIME_DAYS at most); without one, that maximum when
   * the installation sets one, else never.
   */
  private keyExpiry(expiresAt: string | null): string | null {
    const maxDays = this.policy.maxKeyLifetimeDays ?? MAX_KEY_LIFETIME_DAYS;
    const latest = Date.now() + maxDays * DAY_MS;
    if (!expiresAt) {
      return this.policy.maxKeyLifetimeDays === undefined ? null : new Date(latest).toISOString();
    }
    const when = ISO_DATE_TIME.test(expiresAt) ? Date.parse(expiresAt) : NaN;
    if (Number.isNaN(when)) {
      throw new HttpError(422, [
        {
          loc: ['body', 'expires_at'],
          msg: `"${expiresAt}" is not an ISO 8601 date or date-time, such as 2030-01-31 or 2030-01-31T12:00:00Z.`,
          type: 'datetime_parsing',
        },
      ]);
    }
    if (when > latest) {
      throw new HttpError(422, [
        {
          loc: ['body', 'expires_at'],
          msg: `Keys may live at most ${maxDays} days here (until ${new Date(latest).toISOString()}). Choose an earlier expiry.`,
          type: 'value_error',
        },
      ]);
    }
    return new Date(when).toISOString();
  }

  /** The role of a user of the tenant, deleted ones included (their keys can still be listed). */
  async roleOf(tenantId: string, userId: string): Promise<Role | undefined> {
    const row = await this.db
      .selectFrom('users')
      .select('role')
      .where('tenant_id', '=', tenantId)
      .where('id', '=', userId)
      .executeTakeFirst();
    return row && isRole(row.role) ? row.role : undefined;
  }

  async revokeApiKey(tenantId: string, keyId: string, actor: AuditActor = LOCAL_ACTOR): Promise<ApiKeyInfo> {
    const key = await this.getApiKey(tenantId, keyId);
    if (key.revoked_at) return key;
    const revoked_at = nowIso();
    await this.db
      .updateTable('api_keys')
      .set({ revoked_at })
      .where('id', '=', keyId)
      .where('tenant_id', '=', tenantId)
      .execute();
    await this.audit.record(tenantId, actor, {
      action: 'key-revoked',
      target: { type: 'key', id: key.id, label: `${key.name} (${key.user_email})` },
    });
    return { ...key, revoked_at };
  }

  /** Revokes a key and issues a new one for the same user, name and remaining lifetime policy. */
  async regenerateApiKey(
    tenantId: string,
    keyId: string,
    actor: AuditActor = LOCAL_ACTOR,
  ): Promise<NewApiKey> {
    const old = await this.getApiKey(tenantId, keyId);
    let expiresAt: string | null = null;
    if (old.expires_at) {
      // The same lifetime again, shortened to what the installation allows now.
      const maxMs = (this.policy.maxKeyLifetimeDays ?? MAX_KEY_LIFETIME_DAYS) * DAY_MS;
      const lifetime = Math.min(Date.parse(old.expires_at) - Date.parse(old.created_at), maxMs);
      expiresAt = new Date(Date.now() + Math.max(lifetime, 0)).toISOString();
    }
    const fresh = await this.createApiKey(
      tenantId,
      { userId: old.user_id, name: old.name, expiresAt },
      actor,
      { action: 'key-regenerated', detail: `replaces key ${old.id}` },
    );
    await this.revokeApiKey(tenantId, keyId, actor);
    return fresh;
  }
}
