import { PassThrough, type Writable } from 'node:stream';
import { Command, Option } from 'commander';
import { NotFoundError } from '@rxs/client';
import { traceChainRevisions, type TraceModel } from '@rxs/contract';
import {
  CoverageCollector,
  coverageHtml,
  coverageMarkdown,
  writeCoverageXlsx,
  type CoverageReport,
} from '@rxs/exchange';
import { writeChunk } from '@rxs/exchange/export';
import { createAtomicFile } from '../atomic-file.js';
import { clientFor } from '../client.js';
import {
  addConnectionOptions,
  resolveConnection,
  type Connection,
  type ConnectionOptions,
} from '../connection.js';
import { UserError } from '../errors.js';
import { runExport } from '../export-run.js';
import { Progress } from '../progress.js';
import { collect, positiveInteger } from './export.js';

interface TraceReportOptions extends ConnectionOptions {
  kt?: string[];
  mapping?: string;
  format: 'json' | 'md' | 'html' | 'xlsx';
  out?: string;
  failUnder?: string;
  asOf?: string;
  baseline?: string;
  json?: boolean;
  quiet?: boolean;
  timeout: string;
  retries: string;
  traceConcurrency: string;
}

/** Exit code when a rule's coverage is under --fail-under: a pipeline gates a release on it. */
export const COVERAGE_GATE_EXIT = 3;

/** `rxs trace-report`: coverage per rule, uncovered records, orphans and links; a CI gate. */
export function traceReportCommand(): Command {
  const command = new Command('trace-report')
    .description(
      'Traceability: is every record of a topic linked to the next (verified), and what links to nothing',
    )
    .option(
      '--kt <revision-id>',
      "KT revision ids, in the order of the V (requirements first; repeat); default: the trace model's topics",
      collect,
    )
    .option(
      '--mapping <file>',
      "mapping file whose links name which traces count between which topics (default: the tenant's trace model)",
    )
    .addOption(
      new Option('--format <format>', 'report format').choices(['md', 'json', 'html', 'xlsx']).default('md'),
    )
    .option('--out <file>', 'write the report to this file, atomically (default or -: standard output)')
    .option(
      '--fail-under <percent>',
      `exit ${COVERAGE_GATE_EXIT} when a rule's coverage is under this percentage`,
    )
    .option('--as-of <time>', 'the traceability at this past moment (ISO 8601)')
    .option(
      '--baseline <name>',
      'the traceability of a baseline (its moment, and its topics unless --kt names some)',
    )
    .option('--json', 'print a summary as JSON on standard output (with --out)')
    .option('--quiet', 'no progress line')
    .option('--timeout <ms>', 'per-request timeout', '30000')
    .option('--retries <n>', 'retries of idempotent requests', '4')
    .option(
      '--trace-concurrency <n>',
      'trace batch requests in flight at once (fewer: less memory on a large graph, slower)',
      '4',
    )
    .addHelpText(
      'after',
      `
Rules: each link of the mapping file between two of the topics (from → to, only traces named so);
and consecutive topics (--kt order) without such a link: any trace between them, either way. For
each rule: coverage (records of the first topic linked to the second), the records not linked, and
the orphans (records of the second topic linked from none), and the suspect links (a record changed
since the link was made or reviewed: they still count; check and review them with rxs trace review).

Without a mapping file (--mapping, or the profile's), the tenant's trace model (rxs trace-model
show) names the links: each of its roles between two of the topics is a rule, from the topic its
backward name reads from ("System Requirements → Verification Tests (verified by)"), counting the
traces that role names. Without --kt and --baseline, the topics are the model's, in the order of
the V, at their current revisions, and its roles are the only rules.

Examples:
  rxs trace-report --profile prod --fail-under 100
  rxs trace-report --profile prod --kt REQS_REV --kt TESTS_REV --fail-under 100
  rxs trace-report --profile prod --kt USER_REV --kt SYS_REV --kt TESTS_REV --mapping rxs-mapping.json --format json --out trace.json`,
    );
  addConnectionOptions(command);
  return command.action(async (options: TraceReportOptions) => {
    const failUnder = percentOf(options.failUnder);
    // `--out -` is standard output, as for rxs export: never a file named "-".
    const out = options.out === '-' ? undefined : options.out;
    if (options.json && out === undefined)
      throw new UserError('--json prints a summary on standard output: write the report with --out FILE.');
    if (options.format === 'xlsx' && options.out === undefined)
      throw new UserError(
        'An XLSX report is a file: name it with --out FILE.xlsx (or --out - for standard output).',
      );
    const connection = resolveConnection(options);
    const timeoutMs = positiveInteger(options.timeout, '--timeout', 1);
    const retries = positiveInteger(options.retries, '--retries');
    const model =
      options.mapping === undefined && connection.mapping === undefined
        ? await tenantTraceModel(connection, timeoutMs, retries)
        : undefined;
    const topicsOfModel =
      model !== undefined && (options.kt ?? []).length === 0 && options.baseline === undefined;
    const collector = new CoverageCollector(model ? { model: model.roles, consecutive: !topicsOfModel } : {});
    const progress = new Progress({ quiet: options.quiet || out === undefined });
    const run = await runExport(
      connection,
      {
        revisionIds: topicsOfModel ? chainRevisionIds(model) : [...new Set(options.kt ?? [])],
        format: 'json',
        traces: true,
        labels: false,
        followLatest: false,
        timeoutMs,
        retries,
        traceConcurrency: positiveInteger(options.traceConcurrency, '--trace-concurrency', 1),
        ...(options.mapping !== undefined && { mapping: options.mapping }),
        ...(options.asOf !== undefined && { asOf: options.asOf }),
        ...(options.baseline !== undefined && { baseline: options.baseline }),
      },
      progress,
      collector,
    );
    const report = collector.report();
    if (options.format === 'xlsx') {
      if (out === undefined)
        await toStandardOutput((stream) => writeCoverageXlsx(report, stream, { failUnder }));
      else await writeAtomically(out, (stream) => writeCoverageXlsx(report, stream, { failUnder }));
    } else {
      const text = reportText(report, options.format, failUnder, run.summary.exportedAt);
      if (out === undefined) process.stdout.write(text);
      else await writeAtomically(out, async (stream) => void stream.end(text));
    }
    if (options.json)
      process.stdout.write(`${JSON.stringify(jsonReport(report, failUnder).summary, null, 2)}\n`);
    const failing = failUnder === undefined ? [] : report.rules.filter((r) => r.percent < failUnder);
    if (failing.length > 0)
      throw new UserError(
        `Coverage under ${failUnder}%: ${failing.map((r) => `${r.rule.source.name} → ${r.rule.target.name} ${r.percent.toFixed(1)}% (${r.uncovered.length} not linked)`).join('; ')}.`,
        COVERAGE_GATE_EXIT,
      );
  });
}

/** The tenant's trace model when it has roles; none from a tracer that keeps no trace model (404). */
async function tenantTraceModel(
  connection: Connection,
  timeoutMs: number | undefined,
  retries: number | undefined,
): Promise<TraceModel | undefined> {
  try {
    const model = await clientFor(connection, { timeoutMs, retries }).tracer.getTraceModel();
    return model.roles.length > 0 ? model : undefined;
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
}

/** The current revisions of the model's topics, in the order of the V. */
function chainRevisionIds(model: TraceModel): string[] {
  const chain = traceChainRevisions(model.roles);
  if ('revisionIds' in chain) return chain.revisionIds;
  throw new UserError(
    `The trace model's topic ${chain.unapproved.name ?? chain.unapproved.historyId} has no approved revision yet: name the topics to report on with --kt.`,
  );
}

/** The report in a text format. */
function reportText(
  report: CoverageReport,
  format: 'json' | 'md' | 'html',
  failUnder: number | undefined,
  exportedAt: string,
): string {
  if (format === 'html') return coverageHtml(report, { failUnder, generatedAt: exportedAt });
  if (format === 'json') return `${JSON.stringify(jsonReport(report, failUnder), null, 2)}\n`;
  return coverageMarkdown(report, failUnder);
}

/** A file that appears whole or not at all (atomic-file.ts). */
/**
 * A writer that ends its stream, copied on to standard output: a pipe never ends standard output,
 * so a writer piping into it directly would wait for its end forever.
 */
async function toStandardOutput(write: (stream: Writable) => Promise<void>): Promise<void> {
  const through = new PassThrough();
  const copied = (async () => {
    for await (const chunk of through) await writeChunk(process.stdout, chunk as Buffer);
  })();
  try {
    await write(through);
  } catch (error) {
    copied.catch(() => {});
    through.destroy(error as Error);
    throw error;
  }
  await copied;
}

async function writeAtomically(path: string, write: (stream: Writable) => Promise<void>): Promise<void> {
  const file = await createAtomicFile(path);
  try {
    await write(file.stream);
    await file.commit();
  } catch (error) {
    await file.abort();
    throw file.failure(error);
  }
}

function percentOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const percent = Number(value.replace(/%$/, ''));
  if (value.trim() === '' || !Number.isFinite(percent) || percent < 0 || percent > 100)
    throw new UserError(`--fail-under takes a percentage from 0 to 100, not "${value}".`);
  return percent;
}

function jsonReport(report: CoverageReport, failUnder: number | undefined) {
  const summary = report.rules.map((r) => ({
    source: r.rule.source.name,
    target: r.rule.target.name,
    linkType: r.rule.linkType ?? null,
    covered: r.covered,
    total: r.total,
    percent: Math.round(r.percent * 10) / 10,
    uncovered: r.uncovered.length,
    orphans: r.orphans.length,
    suspect: r.suspect.length,
    passed: failUnder === undefined ? null : r.percent >= failUnder,
  }));
  return {
    summary: {
      failUnder: failUnder ?? null,
      passed: summary.every((s) => s.passed !== false),
      rules: summary,
    },
    topics: report.topics,
    rules: report.rules,
  };
}
