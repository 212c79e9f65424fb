import { Migrator, sql, type Migration } from 'kysely';
import * as initial from './migrations/001_initial.js';
import * as tenantUsersAndAudit from './migrations/002_tenant_users_and_audit.js';
import * as history from './migrations/003_history.js';
import * as listingTags from './migrations/004_listing_tags.js';
import * as traceTags from './migrations/005_trace_tags.js';
import * as changesFeeds from './migrations/006_changes_feeds.js';
import * as idempotencyKeys from './migrations/007_idempotency_keys.js';
import * as recordNumbers from './migrations/008_record_numbers.js';
import * as suspectTraces from './migrations/009_suspect_traces.js';
import * as jsonText from './migrations/010_json_text.js';
import * as sourceIdentity from './migrations/011_source_identity.js';
import * as traceModel from './migrations/012_trace_model.js';
import * as recordOutlines from './migrations/013_record_outlines.js';
import * as traceabilityViews from './migrations/014_traceability_views.js';
import * as baselineSignatures from './migrations/015_baseline_signatures.js';
import * as keptRecordVersions from './migrations/016_kept_record_versions.js';
import type { Storage } from './database.js';
import { DEFAULT_POSTGRES_OPTIONS, openPostgres } from './postgres/storage.js';
import { openSqlite } from './sqlite/storage.js';

export interface OpenStorageOptions {
  /** `postgres://...`, `sqlite:PATH`, a plain file path, or `:memory:`. */
  url: string;
  postgres?: { poolSize?: number; statementTimeoutMs?: number };
}

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//.test(url);
}

/** Opens SQLite or PostgreSQL by URL and migrates it (once, under a lock, however many replicas start). */
export async function openStorage(options: OpenStorageOptions): Promise<Storage> {
  const { url } = options;
  const storage = isPostgresUrl(url)
    ? openPostgres(url, {
        poolSize: options.postgres?.poolSize ?? DEFAULT_POSTGRES_OPTIONS.poolSize,
        statementTimeoutMs:
          options.postgres?.statementTimeoutMs ?? DEFAULT_POSTGRES_OPTIONS.statementTimeoutMs,
      })
    : openSqlite(url.replace(/^sqlite:/, ''));
  try {
    await migrate(storage);
  } catch (error) {
    await storage.close().catch(() => undefined);
    throw error;
  }
  return storage;
}
async function migrate(storage: Storage): Promise<void> {
  const migrations: Record<string, Migration> = {
    '001_initial': { up: (db) => initial.up(db, storage.dialect) },
    '002_tenant_users_and_audit': { up: (db) => tenantUsersAndAudit.up(db, storage.dialect) },
    '003_history': { up: (db) => history.up(db, storage.dialect) },
    '004_listing_tags': { up: (db) => listingTags.up(db, storage.dialect) },
    '005_trace_tags': { up: (db) => traceTags.up(db, storage.dialect) },
    '006_changes_feeds': { up: (db) => changesFeeds.up(db, storage.dialect) },
    '007_idempotency_keys': { up: (db) => idempotencyKeys.up(db) },
    '008_record_numbers': { up: (db) => recordNumbers.up(db) },
    '009_suspect_traces': { up: (db) => suspectTraces.up(db) },
    '010_json_text': { up: (db) => jsonText.up(db, storage.dialect) },
    '011_source_identity': { up: (db) => sourceIdentity.up(db, storage.dialect) },
    '012_trace_model': { up: (db) => traceModel.up(db, storage.dialect) },
    '013_record_outlines': { up: (db) => recordOutlines.up(db) },
    '014_traceability_views': { up: (db) => traceabilityViews.up(db) },
    '015_baseline_signatures': { up: (db) => baselineSignatures.up(db, storage.dialect) },
    '016_kept_record_versions': { up: (db) => keptRecordVersions.up(db) },
  };
  const migrator = new Migrator({
    db: storage.db,
    provider: { getMigrations: async () => migrations },
    // SQLite migrates inside the lock's own transaction; PostgreSQL in Kysely's, under an advisory lock.
    disableTransactions: storage.withMigrationLock !== undefined,
  });
  const run = () => migrator.migrateToLatest();
  const { error, results } = await (storage.withMigrationLock ? storage.withMigrationLock(run) : run());
  if (error) {
    const newer = await migrationsUnknownHere(storage, Object.keys(migrations));
    if (newer.length > 0)
      throw new Error(
        `The database at ${storage.location} was upgraded by a newer version of RXS (its migration ` +
          `${newer.join(', ')} is unknown to this one, whose last is ${Object.keys(migrations).at(-1)}). ` +
          `Run that version or a newer one; this version cannot use the database as it is now.`,
      );
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`Database migration ${failed} failed at ${storage.location}: ${String(error)}`);
  }
}

/** Migrations the database records as done that this version does not have (a newer one ran them). */
async function migrationsUnknownHere(storage: Storage, known: string[]): Promise<string[]> {
  try {
    const done = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(
      storage.db,
    );
    return done.rows.map((row) => row.name).filter((name) => !known.includes(name));
  } catch {
    return []; // no table: the first migration failed
  }
}
