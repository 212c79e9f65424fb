import { Command, CommanderError } from 'commander';
import { standardOutputFailure, UserError } from './errors.js';

/**
 * Each command, loaded when it runs: `rxs sync` loads neither the server, nor the importer, nor
 * the trace report. An unchanged poll is mostly start-up, so this is most of its time.
 */
const COMMANDS: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./commands/serve.js')).serveCommand(),
  export: async () => (await import('./commands/export.js')).exportCommand(),
  sync: async () => (await import('./commands/sync.js')).syncCommand(),
  kt: async () => (await import('./commands/kt.js')).ktCommand(),
  record: async () => (await import('./commands/record.js')).recordCommand(),
  import: async () => (await import('./commands/import.js')).importCommand(),
  trace: async () => (await import('./commands/trace.js')).traceCommand(),
  'trace-report': async () => (await import('./commands/trace-report.js')).traceReportCommand(),
  'trace-model': async () => (await import('./commands/trace-model.js')).traceModelCommand(),
  history: async () => (await import('./commands/history.js')).historyCommand(),
  baseline: async () => (await import('./commands/baseline.js')).baselineCommand(),
  admin: async () => (await import('./commands/admin.js')).adminCommand(),
  'migrate-data': async () => (await import('./commands/migrate-data.js')).migrateDataCommand(),
};

/** The program with the command `argv` names, or with every command (help, --version, a mistake). */
export async function buildProgram(argv: readonly string[] = []): Promise<Command> {
  const program = new Command('rxs')
    .description(
      'RXS, the Records Export Service: serve techdoc, records and tracer; export and sync records.',
    )
    .version('0.1.0')
    .showHelpAfterError('(add --help for usage)')
    .configureOutput({ outputError: (text, write) => write(text) });
  const named = argv[2];
  const names = named !== undefined && Object.hasOwn(COMMANDS, named) ? [named] : Object.keys(COMMANDS);
  for (const name of names) program.addCommand(await COMMANDS[name]!());
  return program;
}

/** Runs the CLI; every failure ends with a one-paragraph message and a non-zero exit code. */
export async function run(argv: string[]): Promise<void> {
  // Standard output that fails (its reader stopped: `rxs ... | head`; a full disk): kept, and said
  // in one line with exit 1 once the command ends (its own cleanup done), not an uncaught error
  // event with a stack trace.
  let stdoutFailure: NodeJS.ErrnoException | undefined;
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    stdoutFailure ??= error;
  });
  const stdoutFailed = () => {
    process.exitCode = 1;
    process.stderr.write(`rxs: ${standardOutputFailure(stdoutFailure!)}\n`);
  };
  let ended = false;
  // A command that ends with nothing left to run but never finished (an output that stopped
  // taking bytes leaves its writer waiting): exit 1, not 0 with half an output.
  process.once('beforeExit', () => {
    if (ended) return;
    if (stdoutFailure) return stdoutFailed();
    process.stderr.write('rxs: the command stopped before it finished (an output stopped taking data).\n');
    process.exitCode = 1;
  });
  try {
    const program = (await buildProgram(argv)).exitOverride();
    await program.parseAsync(argv);
    ended = true;
    if (stdoutFailure) stdoutFailed();
  } catch (error) {
    ended = true;
    if (error instanceof CommanderError) {
      process.exitCode = error.exitCode;
      return;
    }
    const code = (error as NodeJS.ErrnoException).code;
    // Also a write's own EPIPE, before standard output's error event came.
    if (code === 'EPIPE' && process.stdout.destroyed) stdoutFailure ??= error as NodeJS.ErrnoException;
    if (stdoutFailure && (error === stdoutFailure || code === stdoutFailure.code)) return stdoutFailed();
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
