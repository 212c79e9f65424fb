import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

/** Errors that mean "the same transaction may succeed if run again". */
function isTransient(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  // PostgreSQL: serialization failure, deadlock. SQLite: the database was locked past busy_timeout.
  return code === '40001' || code === '40P01' || code === 'SQLITE_BUSY' || code === 'SQLITE_BUSY_SNAPSHOT';
}

/**
 * Runs `work` in a transaction, retrying it (from the start) on serialization failures and
 * deadlocks, with a short jittered backoff. Conflicts the application detects itself (409s) are not
 * retried: they are answers, not faults.
 */
export async function inTransaction<T>(
  db: Kysely<Database>,
  work: (trx: Transaction<Database>) => Promise<T>,
  attempts = 5,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(work);
    } catch (error) {
      if (attempt >= attempts || !isTransient(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * 2 ** attempt));
    }
  }
}
