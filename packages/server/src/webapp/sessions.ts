import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { isRole, type Role } from '@rxs/contract';
import type { Storage } from '../storage/database.js';

/** A signed-in browser: who, in which tenant, and the CSRF token bound to the session. */
export interface Session {
  id: string;
  userId: string;
  tenantId: string;
  role: Role;
  email: string;
  name: string;
  csrfToken: string;
  createdAt: string;
  expiresAt: string;
}

export interface SessionLifetime {
  /** A session unused this long ends. */
  idleMs: number;
  /** No session lives longer than this, however active. */
  absoluteMs: number;
}

export const DEFAULT_SESSION_LIFETIME: SessionLifetime = {
  idleMs: 12 * 3_600_000,
  absoluteMs: 7 * 86_400_000,
};

/** Only the SHA-256 of a session token is stored: a copy of the database signs nobody in. */
export function sessionId(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** Sessions of the web app, in the `sessions` table (so every replica sees them). */
export class Sessions {
  constructor(
    private readonly storage: Storage,
    private readonly lifetime: SessionLifetime = DEFAULT_SESSION_LIFETIME,
  ) {}

  private get db() {
    return this.storage.db;
  }

  /** Starts a session; the token goes into the cookie and is never stored. */
  async create(user: { id: string; tenant_id: string }): Promise<{ token: string; session: Session }> {
    const token = randomBytes(32).toString('base64url');
    const now = new Date();
    const row = {
      id: sessionId(token),
      user_id: user.id,
      tenant_id: user.tenant_id,
      csrf_token: randomBytes(32).toString('base64url'),
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + this.lifetime.idleMs).toISOString(),
    };
    // Expired rows are swept here, so the table stays as small as the number of live sessions.
    await this.db.deleteFrom('sessions').where('expires_at', '<=', row.created_at).execute();
    await this.db.insertInto('sessions').values(row).execute();
    const session = await this.resolve(token);
    if (!session) throw new Error('A session that was just created could not be read back.');
    return { token, session };
  }

  /** The live session of a token, extending its idle expiry; undefined when unknown or over. */
  async resolve(token: string | undefined): Promise<Session | undefined> {
    if (!token || !TOKEN.test(token)) return undefined;
    const id = sessionId(token);
    const row = await this.db
      .selectFrom('sessions')
      .innerJoin('users', 'users.id', 'sessions.user_id')
      .select([
        'sessions.id',
        'sessions.user_id',
        'sessions.tenant_id',
        'sessions.csrf_token',
        'sessions.created_at',
        'sessions.expires_at',
        'users.role',
        'users.email',
        'users.name',
        'users.deleted_at',
      ])
      .where('sessions.id', '=', id)
      .executeTakeFirst();
    const now = Date.now();
    if (!row || row.deleted_at || !isRole(row.role) || Date.parse(row.expires_at) <= now) return undefined;
    let expiresAt = row.expires_at;
    // Slide the idle expiry at most once a minute per session, so reads do not all become writes.
    const slid = Math.min(now + this.lifetime.idleMs, Date.parse(row.created_at) + this.lifetime.absoluteMs);
    if (slid - Date.parse(row.expires_at) > 60_000) {
      expiresAt = new Date(slid).toISOString();
      await this.db.updateTable('sessions').set({ expires_at: expiresAt }).where('id', '=', id).execute();
    }
    return {
      id: row.id,
      userId: row.user_id,
      tenantId: row.tenant_id,
      role: row.role,
      email: row.email,
      name: row.name,
      csrfToken: row.csrf_token,
      createdAt: row.created_at,
      expiresAt,
    };
  }

  async destroy(id: string): Promise<void> {
    await this.db.deleteFrom('sessions').where('id', '=', id).execute();
  }

  /** Ends a user's other sessions (after a password change), keeping the one given. */
  async destroyOthers(userId: string, keepId?: string): Promise<void> {
    let query = this.db.deleteFrom('sessions').where('user_id', '=', userId);
    if (keepId) query = query.where('id', '!=', keepId);
    await query.execute();
  }
}

/** Constant-time comparison of a presented CSRF token with the session's. */
export function csrfTokenMatches(presented: string | undefined, expected: string): boolean {
  if (!presented) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
