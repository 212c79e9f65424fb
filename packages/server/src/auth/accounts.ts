import { randomUUID } from 'node:crypto';
import { isRole, type Role } from '@rxs/sdk';
import type { Storage } from '../storage/database.js';
import { newObjectId, nowIso } from '../storage/ids.js';
import { inTransaction } from '../storage/transactions.js';
import { conflict, HttpError, notFound } from '../http/errors.js';
import { generateApiKey } from './api-keys.js';
import { hashPassword } from './passwords.js';

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

/**
 * Tenants, users and API keys: the operations behind `rxs admin` and the web app's Settings. Every
 * call is scoped to a tenant; ids of another tenant are "not found".
 */
export class Accounts {
  constructor(private readonly storage: Storage) {}

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
    const existing = await this.db
      .selectFrom('users')
      .select('id')
      .where('email', '=', email)
      .executeTakeFirst();
    if (existing) throw conflict(`A user with the e-mail ${email} already exists.`);
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

  async findUserByEmail(email: string) {
    return this.db
      .selectFrom('users')
      .selectAll()
      .where('email', '=', email.trim().toLowerCase())
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
  }

  async setRole(tenantId: string, userId: string, role: string): Promise<User> {
    const user = await this.getUser(tenantId, userId);
    if (!isRole(role)) {
      throw new HttpError(422, [
        { loc: ['body', 'role'], msg: `Role must be one of owner, admin, editor, viewer`, type: 'enum' },
      ]);
    }
    if (user.role === 'owner' && role !== 'owner') await this.assertAnotherOwner(tenantId, userId);
    await this.db.updateTable('users').set({ role }).where('id', '=', userId).execute();
    return { ...user, role };
  }

  async setPassword(tenantId: string, userId: string, password: string): Promise<void> {
    await this.getUser(tenantId, userId);
    await this.db
      .updateTable('users')
      .set({ password_hash: await hashPassword(password) })
      .where('id', '=', userId)
      .execute();
  }

  /** Deletes a user; their keys stop working at once (the key check joins the live user). */
  async deleteUser(tenantId: string, userId: string): Promise<void> {
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
  ): Promise<NewApiKey> {
    const user = await this.getUser(tenantId, input.userId);
    const expires_at = input.expiresAt ? new Date(input.expiresAt).toISOString() : null;
    if (input.expiresAt && Number.isNaN(Date.parse(input.expiresAt))) {
      throw new HttpError(422, [
        { loc: ['body', 'expires_at'], msg: 'Not a date-time', type: 'datetime_parsing' },
      ]);
    }
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

  async revokeApiKey(tenantId: string, keyId: string): Promise<ApiKeyInfo> {
    const key = await this.getApiKey(tenantId, keyId);
    if (key.revoked_at) return key;
    const revoked_at = nowIso();
    await this.db
      .updateTable('api_keys')
      .set({ revoked_at })
      .where('id', '=', keyId)
      .where('tenant_id', '=', tenantId)
      .execute();
    return { ...key, revoked_at };
  }

  /** Revokes a key and issues a new one for the same user, name and remaining lifetime policy. */
  async regenerateApiKey(tenantId: string, keyId: string): Promise<NewApiKey> {
    const old = await this.getApiKey(tenantId, keyId);
    let expiresAt: string | null = null;
    if (old.expires_at) {
      const lifetime = Date.parse(old.expires_at) - Date.parse(old.created_at);
      expiresAt = new Date(Date.now() + Math.max(lifetime, 0)).toISOString();
    }
    const fresh = await this.createApiKey(tenantId, { userId: old.user_id, name: old.name, expiresAt });
    await this.revokeApiKey(tenantId, keyId);
    return fresh;
  }
}
