import type { Command } from 'commander';
import type { Services } from '@rxs/server';
import { configFromEnv, databaseUrlOf } from '@rxs/server/config';

export interface StorageOptions {
  dataDir: string;
  database?: string;
}

/** --data-dir and --database, defaulting to RXS_DATA_DIR / RXS_DATABASE_URL. */
export function addStorageOptions(command: Command): Command {
  const env = configFromEnv();
  return command
    .option(
      '--data-dir <dir>',
      'folder of the embedded database and demo.json (env RXS_DATA_DIR)',
      env.dataDir,
    )
    .option(
      '--database <url>',
      'database: postgres://..., a SQLite file path or sqlite:PATH (env RXS_DATABASE_URL)',
      env.databaseUrl,
    );
}

/** Opens the database for an admin command, runs it, and closes the database again. */
export async function withServices<T>(
  options: StorageOptions,
  work: (services: Services) => Promise<T>,
): Promise<T> {
  // Loaded here, not at start: commands that never touch the database stay light.
  const { createServices, openStorage } = await import('@rxs/server');
  const storage = await openStorage({
    url: databaseUrlOf({ dataDir: options.dataDir, databaseUrl: options.database }),
  });
  try {
    return await work(createServices(storage));
  } finally {
    await storage.close();
  }
}
