import { Command, CommanderError } from 'commander';
import { adminCommand } from './commands/admin.js';
import { baselineCommand } from './commands/baseline.js';
import { exportCommand } from './commands/export.js';
import { ktCommand } from './commands/kt.js';
import { recordCommand } from './commands/record.js';
import { traceReportCommand } from './commands/trace-report.js';
import { traceCommand } from './commands/trace.js';
import { historyCommand } from './commands/history.js';
import { importCommand } from './commands/import.js';
import { migrateDataCommand } from './commands/migrate-data.js';
import { serveCommand } from './commands/serve.js';
import { syncCommand } from './commands/sync.js';
import { UserError } from './errors.js';

export function buildProgram(): Command {
  const program = new Command('rxs')
    .description(
      'RXS, the Records Export Service: serve techdoc, records and tracer; export and sync records.',
    )
    .version('0.1.0')
    .showHelpAfterError('(add --help for usage)')
    .configureOutput({ outputError: (text, write) => write(text) });
  program.addCommand(serveCommand());
  program.addCommand(exportCommand());
  program.addCommand(syncCommand());
  program.addCommand(ktCommand());
  program.addCommand(recordCommand());
  program.addCommand(importCommand());
  program.addCommand(traceCommand());
  program.addCommand(traceReportCommand());
  program.addCommand(historyCommand());
  program.addCommand(baselineCommand());
  program.addCommand(adminCommand());
  program.addCommand(migrateDataCommand());
  return program;
}

/** Runs the CLI; every failure ends with a one-paragraph message and a non-zero exit code. */
export async function run(argv: string[]): Promise<void> {
  const program = buildProgram().exitOverride();
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      process.exitCode = error.exitCode;
      return;
    }
    process.exitCode = error instanceof UserError ? error.exitCode : 1;
    process.stderr.write(`rxs: ${messageOf(error)}\n`);
  }
}

/** The server's own errors (admin commands: `statusCode` and `detail`) say it in `detail`; others in their message. */
function messageOf(error: unknown): string {
  const detail =
    error && typeof error === 'object' && 'statusCode' in error
      ? (error as { detail?: unknown }).detail
      : undefined;
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) {
    return detail
      .map((d: { loc?: unknown[]; msg?: string }) => `${(d.loc ?? []).join('.')}: ${d.msg ?? ''}`)
      .join('\n');
  }
  return error instanceof Error ? error.message : String(error);
}
