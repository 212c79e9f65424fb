import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * API keys look like `rxs_<id>_<secret>`: the id (public, 16 hex) finds the row, the secret (32
 * random bytes) proves possession. Only the SHA-256 of the whole key is stored; a high-entropy
 * secret needs no slow hash, and the comparison is constant-time.
 */
const KEY_PATTERN = /^rxs_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

export interface GeneratedKey {
  id: string;
  /** The full key: shown once, never stored. */
  key: string;
  hash: string;
}

export function generateApiKey(): GeneratedKey {
  const id = randomBytes(8).toString('hex');
  const key = `rxs_${id}_${randomBytes(32).toString('base64url')}`;
  return { id, key, hash: hashApiKey(key) };
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** The key's public id, or undefined when the text cannot be one of our keys. */
export function apiKeyId(key: string): string | undefined {
  return KEY_PATTERN.exec(key)?.[1];
}

/** Constant-time check of a presented key against a stored hash. */
export function apiKeyMatches(key: string, storedHash: string): boolean {
  const presented = Buffer.from(hashApiKey(key), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}
