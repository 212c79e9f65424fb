import type { FastifyRequest } from 'fastify';
import { isRole } from '@rxs/contract';
import type { Storage } from '../storage/database.js';
import { nowIso } from '../storage/ids.js';
import { unauthorized } from '../http/errors.js';
import { apiKeyId, apiKeyMatches, hashApiKey } from './api-keys.js';
import type { Principal } from './principal.js';

const HEADER = 'x-api-key';
const REGENERATE = 'Regenerate the key in Settings → API keys and send it in the X-API-Key header.';
// Compared against when no row exists, so an unknown id costs the same as a wrong secret.
const DECOY_HASH = hashApiKey('rxs_0000000000000000_decoy');
// last_used_at is refreshed at most this often per key, so reads do not turn into writes.
const LAST_USED_RESOLUTION_MS = 60_000;

/** Resolves the `X-API-Key` header to a principal, or throws the contract's 401 with a `detail`. */
export async function authenticateApiKey(storage: Storage, request: FastifyRequest): Promise<Principal> {
  const header = request.headers[HEADER];
  const key = Array.isArray(header) ? header[0] : header;
  if (!key) throw unauthorized(`The X-API-Key header is missing. ${REGENERATE}`);
  const id = apiKeyId(key.trim());
  const row = id
    ? await storage.db
        .selectFrom('api_keys')
        .innerJoin('users', 'users.id', 'api_keys.user_id')
        .select([
          'api_keys.id',
          'api_keys.hash',
          'api_keys.tenant_id',
          'api_keys.user_id',
          'api_keys.expires_at',
          'api_keys.revoked_at',
          'api_keys.last_used_at',
          'users.role',
          'users.deleted_at',
        ])
        .where('api_keys.id', '=', id)
        .executeTakeFirst()
    : undefined;
  const matches = apiKeyMatches(key.trim(), row?.hash ?? DECOY_HASH);
  if (!row || !matches) throw unauthorized(`The API key is invalid. ${REGENERATE}`);
  const now = nowIso();
  // A revoked key cannot be regenerated (Settings offers no button for it): a new key is the way.
  if (row.revoked_at)
    throw unauthorized(
      `The API key was revoked on ${row.revoked_at}; a revoked key cannot be used again or regenerated. Create a new key in Settings → API keys (or ask an admin of your tenant for one) and send it in the X-API-Key header.`,
    );
  if (row.expires_at && row.expires_at <= now)
    throw unauthorized(`The API key expired on ${row.expires_at}. ${REGENERATE}`);
  if (row.deleted_at || !isRole(row.role))
    throw unauthorized(
      "The API key's user no longer exists, and with it every key of the user. Ask an admin of your tenant for an account and a key of your own.",
    );

  if (!row.last_used_at || Date.parse(now) - Date.parse(row.last_used_at) > LAST_USED_RESOLUTION_MS) {
    await storage.db.updateTable('api_keys').set({ last_used_at: now }).where('id', '=', row.id).execute();
  }
  return { tenantId: row.tenant_id, userId: row.user_id, role: row.role, keyId: row.id };
}
