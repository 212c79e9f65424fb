import { Command } from 'commander';
import { UserError } from '../errors.js';

export function migrateDataCommand(): Command {
  return new Command('migrate-data')
    .description(
      'Copy an installation to another database (e.g. embedded SQLite to PostgreSQL) and verify it',
    )
    .requiredOption('--from <url>', 'source database: sqlite:FILE, a file path, or postgres://...')
    .requiredOption('--to <url>', 'target database, empty: postgres://... (or a SQLite file)')
    .option('--json', 'print the verification report as JSON')
    .addHelpText(
      'after',
      `
Stop the servers that write to the source first. The target must be empty; its schema is created.
Every table is copied in one transaction, then row counts and SHA-256 checksums of both sides are
compared table by table; the command fails if any differ.

Example:
  rxs migrate-data --from sqlite:./rxs-data/rxs.db --to postgres://rxs@db.internal/rxs`,
    )
    .action(async (options: { from: string; to: string; json?: boolean }) => {
      const { copyDatabase, isPostgresUrl, openStorage } = await import('@rxs/server');
      if (!isPostgresUrl(options.to) && !options.to.startsWith('sqlite:') && !options.to.endsWith('.db')) {
        throw new UserError(
          `--to "${options.to}" is neither postgres://... nor a SQLite file (sqlite:PATH).`,
        );
      }
      const source = await openStorage({ url: options.from });
      try {
        const target = await openStorage({ url: options.to });
        try {
          const reports = await copyDatabase(source, target, (table, rows) => {
            if (!options.json && process.stderr.isTTY)
              process.stderr.write(`\rcopying ${table}: ${rows} rows`);
          });
          if (!options.json && process.stderr.isTTY) process.stderr.write('\n');
          const mismatched = reports.filter(
            (r) => r.sourceRows !== r.targetRows || r.sourceChecksum !== r.targetChecksum,
          );
          if (options.json) {
            process.stdout.write(
              `${JSON.stringify({ ok: mismatched.length === 0, tables: reports }, null, 2)}\n`,
            );
          } else {
            for (const r of reports) {
              const ok = r.sourceRows === r.targetRows && r.sourceChecksum === r.targetChecksum;
              process.stdout.write(
                `${ok ? 'ok  ' : 'DIFF'} ${r.table.padEnd(13)} ${r.sourceRows} -> ${r.targetRows} rows  sha256 ${r.targetChecksum.slice(0, 16)}\n`,
              );
            }
          }
          if (mismatched.length > 0) {
            throw new UserError(
              `The copy differs from the source in ${mismatched.map((r) => r.table).join(', ')}. Do not switch over; investigate and retry into an empty database.`,
            );
          }
          if (!options.json)
            process.stdout.write(`Copied and verified: ${source.location} -> ${target.location}\n`);
        } finally {
          await target.close();
        }
      } finally {
        await source.close();
      }
    });
}
