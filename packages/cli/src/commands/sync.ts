import { spawn } from 'node:child_process';
import { Command } from 'commander';
import {
  createSyncSession,
  outputFacts,
  readSyncState,
  renderReportText,
  reportJson,
  runWatchLoop,
  saveProbe,
  takeProbeTags,
  unchangedSince,
  usableProbe,
  writeReport,
  type ChangeReport,
  type SyncState,
  type FeedPlan,
  FeedCacheWriter,
  planFromFeed,
  takeFeedCursors,
  takeTraceCursor,
  type SpliceResult,
  removeAbandonedStateTemps,
} from '@rxs/sync';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createAtomicFile } from '../atomic-file.js';
import { startComparison } from '../compare-run.js';
import { clientFor } from '../client.js';
import { resolveConnection, type Connection } from '../connection.js';
import { UserError } from '../errors.js';
import { runExport, type ExportSummary } from '../export-run.js';
import { canSplice, indexFullRun, runSplice } from '../splice-run.js';
import { Progress } from '../progress.js';
import { addExportOptions, exportRunOptions, type ExportCommandOptions } from './export.js';

interface SyncOptions extends ExportCommandOptions {
  state?: string;
  since?: string;
  report?: string;
  exitCode?: boolean;
  watch?: boolean;
  interval: string;
  jitter: string;
  onChange?: string;
}

/** "10m", "30s", "1h", "1500ms" or plain milliseconds. */
export function parseInterval(value: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(value.trim());
  if (!match) throw new UserError(`--interval takes a duration like 30s, 10m or 1h, not "${value}".`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(match[2] ?? 'ms') as 'ms' | 's' | 'm' | 'h'];
  return Math.round(Number(match[1]) * unit);
}

type SyncOutcome =
  | {
      unchanged?: undefined;
      summary: ExportSummary;
      report: ChangeReport;
      reportPath: string;
      /** How the records were read: all of them, the feed's changes merged into the kept listing, or spliced. */
      poll: 'full' | 'feed' | 'spliced';
      /** A spliced poll: found the records by the previous poll's row index (the snapshot layered, or `compacted`: written whole again), or by walking the rows. */
      splicedFrom?: SpliceResult['found'];
    }
  /** The service said nothing changed since the snapshot: nothing was exported or written. */
  | { unchanged: true; since: SyncState };

export function syncCommand(): Command {
  const command = new Command('sync')
    .description(
      'Export, compare with the previous snapshot, and report what changed (polling; the service pushes nothing)',
    )
    .option(
      '--state <dir>',
      'folder of the previous snapshot; created on the first run (required unless --since)',
    )
    .option(
      '--since <baseline-or-time>',
      "compare with a baseline (name or id) or a past moment (ISO 8601) instead of --state: the changes from then to --baseline/--as-of, or to now (without --kt: the baseline's topics in their current revisions); no state is read or written",
    )
    .option('--report <file>', 'with --since: also write the change report (JSON) to this file')
    .option('--exit-code', 'exit with 2 when something changed (0 when nothing did, 1 on failure)')
    .option('--watch', 'repeat on a schedule until stopped (SIGINT/SIGTERM)')
    .option('--interval <duration>', 'with --watch: pause between runs, e.g. 30s, 10m, 1h', '10m')
    .option('--jitter <ratio>', 'with --watch: vary the pause by up to this share either way', '0.1')
    .option(
      '--on-change <command>',
      'run this shell command when something changed: the report JSON on its standard input, its path in RXS_REPORT',
    )
    .addHelpText(
      'after',
      `
Each run exports the topics (see "rxs export --help"), compares the result with the snapshot in
--state record by record (added, removed, changed fields), trace by trace and schema by schema, writes
a report to <state>/reports/, then updates --out and the snapshot, both atomically and only after
everything succeeded. A failed run leaves the previous output and snapshot untouched.

A re-approved topic (its latest_revision_id is newer than --kt) stops the sync with a message,
unless --follow-latest switches to the new revision (the report says so).

With --as-of or --baseline a sync exports that past moment and compares it with the snapshot (a
later sync without them then reports what changed since). With --since it compares two moments
instead, e.g. two baselines, or a baseline and now, into the same change report, leaving every
snapshot alone.

Examples:
  rxs sync --profile prod --kt REV --state .rxs-sync --format csv --out reqs.csv --exit-code
  rxs sync --profile prod --since v1.0 --baseline v1.1 --report v1.0-to-v1.1.json
  rxs sync --profile prod --kt REV --since 2026-11-01T00:00:00Z
  rxs sync --profile prod --kt REV --state .rxs-sync --watch --interval 10m --on-change ./notify.sh`,
    );
  addExportOptions(
    command,
    'also write the export in --format to this file (atomically, after the comparison succeeded)',
  );
  return command.action(async (options: SyncOptions) => {
    const connection = resolveConnection(options);
    if (options.since !== undefined) {
      await compareMoments(connection, options);
      return;
    }
    const state = options.state;
    if (state === undefined)
      throw new UserError(
        'rxs sync needs --state DIR (where the previous snapshot lives), or --since to compare two moments.',
      );
    if (options.report !== undefined)
      throw new UserError(
        '--report goes with --since; a sync with --state writes its reports to <state>/reports/.',
      );
    if (options.out === '-')
      throw new UserError(
        'rxs sync writes --out atomically; standard output (-) is not possible. Name a file.',
      );
    const jitter = Number(options.jitter);
    if (!(jitter >= 0 && jitter <= 1))
      throw new UserError(`--jitter takes a ratio from 0 to 1, not "${options.jitter}".`);

    // A poll of a moment that does not move (--as-of, --baseline) is never cheap: it is exported.
    const probing = options.asOf === undefined && options.baseline === undefined;
    const output = options.out === undefined ? undefined : resolve(options.out);
    // The probe's requests keep the run's --timeout and --retries: a stalled service fails the poll
    // as it fails an export, instead of holding it.
    const runOptions = { ...exportRunOptions(options, options.out), outLocked: true };
    const client = clientFor(connection, { timeoutMs: runOptions.timeoutMs, retries: runOptions.retries });

    const once = async (): Promise<SyncOutcome> => {
      const revisionIds = [...new Set(options.kt ?? [])];
      // Per run: under --watch the mapping file may change between runs.
      const fingerprint = probing ? await exportFingerprint(options) : '';
      // The snapshot whose probe still holds: its kept listings may take the changes feed.
      let probedGeneration: string | undefined;
      if (probing) {
        const previous = await readSyncState(state);
        const probe = await usableProbe(state, previous, fingerprint, output);
        if (previous && probe && (await unchangedSince(client, probe.tags))) {
          // What a killed run left after its commit (a report, the feed cache) goes now, not once
          // something changes.
          await removeAbandonedStateTemps(state);
          return { unchanged: true, since: previous };
        }
        if (probe) probedGeneration = previous?.generation;
      }
      // The tags of now, before the export reads anything (see sync/src/probe.ts).
      const tags = probing ? await takeProbeTags(client, revisionIds, options.traces === true) : undefined;
      let session = await createSyncSession(state);
      const progress = new Progress({ quiet: options.quiet || options.json });
      let cache: FeedCacheWriter | undefined;
      try {
        // With the changes feed (sync/src/feed-cache.ts): what changed since the cached
        // listings, or, for a full run, the cursors of now, taken before anything is read.
        let plan: FeedPlan | undefined;
        let traceCursor: string | undefined;
        if (tags) {
          const withTraces = options.traces === true;
          // The trace cursor is taken before any record is read (sync/src/feed-traces.ts says
          // why); a plan that follows the traces brings its own.
          const traceCursorNow = withTraces ? await takeTraceCursor(client) : undefined;
          plan = probedGeneration
            ? await planFromFeed(client, state, probedGeneration, fingerprint, revisionIds, withTraces)
            : undefined;
          traceCursor = plan?.traces ? undefined : traceCursorNow;
          const cursors = plan ? undefined : await takeFeedCursors(client, revisionIds);
          if (plan) cache = await FeedCacheWriter.open(state, revisionIds, { plan, traceCursor });
          else if (cursors) cache = await FeedCacheWriter.open(state, revisionIds, { cursors, traceCursor });
        }
        // A feed poll updates the previous output and snapshot record by record where it can
        // (sync/src/splice.ts); else, or when that refuses, the export runs as in full.
        const splicing = plan && cache && canSplice(runOptions) ? { plan, cache } : undefined;
        const spliced = splicing
          ? await runSplice(connection, runOptions, progress, session, splicing.cache, splicing.plan)
          : undefined;
        const poll = spliced ? 'spliced' : plan ? 'feed' : 'full';
        let run: { summary: ExportSummary; commit: () => Promise<void> } | undefined = spliced;
        if (splicing && !run) {
          // Refused: what it wrote is dropped, and the export runs with a new session and cache.
          await splicing.cache.abort();
          await session.abort();
          cache = undefined;
          session = await createSyncSession(state);
          cache = await FeedCacheWriter.open(state, revisionIds, { plan: splicing.plan, traceCursor });
        }
        // A full run writes the row index the next poll finds its records in, where that poll can
        // read a changes feed (a cache is kept) and so be spliced.
        const fullOptions = !run && cache ? indexFullRun(runOptions, session) : runOptions;
        run ??= await runExport(
          connection,
          { ...fullOptions, wrapSource: cache && ((source) => cache!.wrap(source)) },
          progress,
          session,
        );
        const report = session.report!;
        // Output first, then the snapshot: a crash between them repeats the comparison next time
        // (reporting the same changes again) instead of skipping them.
        await run.commit();
        // What the output is now: the row index must end where it does, the probe remembers it.
        const written = await outputFacts(output);
        // None for a device or named pipe (nothing to splice): the index is then dropped.
        if (fullOptions.onRow) await session.finishRowIndex(written?.size ?? -1);
        const committed = await session.commit();
        // A topic followed to a new revision (--follow-latest) is not what the tags describe: the
        // next poll is a full one.
        const sameTopics =
          committed.topics.length === revisionIds.length &&
          committed.topics.every((topic, i) => topic.revisionId === revisionIds[i]);
        await saveProbe(state, {
          fingerprint,
          generation: committed.generation,
          output: written,
          tags: probing && sameTopics ? tags : undefined,
        });
        if (cache && sameTopics) await cache.commit(committed.generation, fingerprint);
        else await cache?.abort();
        cache = undefined;
        const reportPath = await writeReport(state, report);
        return { summary: run.summary, report, reportPath, poll, splicedFrom: spliced?.found };
      } catch (error) {
        await cache?.abort();
        await session.abort();
        throw error;
      }
    };

    const announce = async (outcome: SyncOutcome) => {
      if (outcome.unchanged) {
        const since = outcome.since.exportedAt;
        process.stdout.write(
          options.json
            ? `${JSON.stringify({ changed: false, report: null, unchanged: { since, checkedBy: 'etag' } }, null, 2)}\n`
            : `No changes since ${since}: the service said so to the snapshot's tags; nothing was downloaded or written.\n`,
        );
        return;
      }
      if (options.json) {
        process.stdout.write(
          `${JSON.stringify({ changed: outcome.report.changed, report: outcome.reportPath, poll: outcome.poll, splicedFrom: outcome.splicedFrom, summary: outcome.summary, changes: outcome.report.summary }, null, 2)}\n`,
        );
      } else {
        process.stdout.write(`${renderReportText(outcome.report)}\nReport: ${outcome.reportPath}\n`);
      }
      if (outcome.report.changed && options.onChange)
        await runOnChange(options.onChange, outcome.reportPath, JSON.stringify(outcome.report));
    };

    if (!options.watch) {
      const outcome = await once();
      await announce(outcome);
      if (options.exitCode && !outcome.unchanged && outcome.report.changed) process.exitCode = 2;
      return;
    }

    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    const result = await runWatchLoop({
      intervalMs: parseInterval(options.interval),
      jitterRatio: jitter,
      signal: stop.signal,
      runOnce: async () => announce(await once()),
      onError: (error) => {
        process.stderr.write(
          `rxs: sync run failed, will retry at the next interval: ${(error as Error).message}\n`,
        );
      },
    });
    process.stderr.write(`rxs: stopped after ${result.runs} runs (${result.failures} failed).\n`);
  });
}

/**
 * What the export of these options comes to, for the probe (sync/src/probe.ts): another
 * format, topic list, mapping file content or rxs version means a full sync.
 */
async function exportFingerprint(options: SyncOptions): Promise<string> {
  const mapping =
    options.mapping === undefined ? null : await readFile(options.mapping, 'utf8').catch(() => null);
  const version = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')).version;
  return createHash('sha256')
    .update(
      JSON.stringify([
        version,
        options.kt ?? [],
        options.format,
        options.out === undefined ? null : resolve(options.out),
        options.traces === true,
        options.labels === true,
        options.followLatest === true,
        options.maxColumns ?? null,
        mapping,
      ]),
    )
    .digest('hex');
}

/** A value of --since: an ISO 8601 moment, else a baseline's name or id. */
function sinceMoment(value: string): Pick<ExportCommandOptions, 'asOf' | 'baseline'> {
  return /^\d{4}-\d{2}-\d{2}([T ]|$)/.test(value) ? { asOf: value } : { baseline: value };
}

/**
 * `rxs sync --since A [--baseline B | --as-of T]`: exports both moments into a throwaway snapshot
 * folder and reports the changes from the first to the second, in the report sync always writes.
 * No --state is touched; --out, if given, gets the second export.
 */
async function compareMoments(connection: Connection, options: SyncOptions): Promise<void> {
  if (options.state !== undefined)
    throw new UserError('--since compares two moments and leaves every snapshot alone: leave out --state.');
  if (options.watch)
    throw new UserError('--since compares two fixed moments once: it cannot go with --watch.');
  if (options.out === '-')
    throw new UserError(
      'rxs sync writes --out atomically; standard output (-) is not possible. Name a file.',
    );
  const progress = new Progress({ quiet: options.quiet || options.json });
  const fromOptions = { ...options, asOf: undefined, baseline: undefined, ...sinceMoment(options.since!) };
  // A baseline on the "from" side names its own topics, unless --kt names them for both sides.
  const comparison = await startComparison(connection, exportRunOptions(fromOptions, undefined), progress);
  try {
    // "Since baseline A" to now, with no topics named: A's topics, in their current revisions.
    let to: ExportCommandOptions = options;
    const since = sinceMoment(options.since!);
    if (!options.kt?.length && options.baseline === undefined && since.baseline !== undefined) {
      const baseline = await clientFor(connection).techdoc.findBaseline(since.baseline);
      to = { ...options, kt: baseline.knowledge_topic_revision_ids, followLatest: true };
    }
    const run = await runExport(connection, exportRunOptions(to, options.out), progress, comparison.later);
    await run.commit();
    const outcome = { report: comparison.report(), summary: run.summary };
    if (options.report !== undefined) {
      const file = await createAtomicFile(options.report);
      file.stream.end(reportJson(outcome.report));
      await file.commit();
    }
    if (options.json) {
      process.stdout.write(
        `${JSON.stringify({ changed: outcome.report.changed, report: options.report ?? null, summary: outcome.summary, changes: outcome.report.summary }, null, 2)}\n`,
      );
    } else {
      process.stdout.write(
        `${renderReportText(outcome.report)}\n${options.report ? `Report: ${options.report}\n` : ''}`,
      );
    }
    if (options.exitCode && outcome.report.changed) process.exitCode = 2;
  } finally {
    await comparison.dispose();
  }
}

/** Runs the --on-change command with the report on stdin; its failure is reported, not fatal to the sync. */
function runOnChange(command: string, reportPath: string, reportJson: string): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn(command, {
      shell: true,
      stdio: ['pipe', 'inherit', 'inherit'],
      env: { ...process.env, RXS_REPORT: reportPath },
    });
    child.on('error', (error) => {
      process.stderr.write(`rxs: --on-change command could not start: ${error.message}\n`);
      resolve();
    });
    child.on('exit', (code) => {
      if (code !== 0) process.stderr.write(`rxs: --on-change command exited with ${code}\n`);
      resolve();
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(reportJson);
  });
}
