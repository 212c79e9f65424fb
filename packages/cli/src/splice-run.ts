import { exportSourceOf } from '@rxs/exchange/export';
import {
  renderingOf,
  spliceable,
  spliceExport,
  SpliceRefusedError,
  type FeedCacheWriter,
  type FeedPlan,
  type SpliceFormat,
  type SpliceResult,
  type SyncSession,
} from '@rxs/sync';
import { createAtomicFile } from './atomic-file.js';
import type { Connection } from './connection.js';
import {
  exportClient,
  isDocumentFormat,
  loadMapping,
  summarize,
  type ExportRunOptions,
  type ExportSummary,
} from './export-run.js';
import type { Progress } from './progress.js';

/** Whether a feed poll of these options may be spliced (splice.ts checks the rest as it goes). */
export function canSplice(options: ExportRunOptions): boolean {
  const revisionIds = [...new Set(options.revisionIds)];
  if (options.out === undefined || options.out === '-' || options.baseline !== undefined) return false;
  if (isDocumentFormat(options.format)) return false;
  return spliceable(options.format, { ...options, revisionIds });
}

/**
 * A run that downloads everything, where the next poll could be spliced, writes the row index
 * that poll finds its records in (sync/src/row-indexing.ts): the options for `runExport` with
 * the writer telling the session each row; unchanged when the next poll could not be spliced.
 * Once the output is written, `SyncSession.finishRowIndex` keeps or drops the index.
 */
export function indexFullRun(options: ExportRunOptions, session: SyncSession): ExportRunOptions {
  if (!canSplice(options)) return options;
  return { ...options, onRow: session.indexRows(renderingOf(options.format as SpliceFormat)) };
}

/**
 * A sync poll spliced from the previous output and snapshot (sync/src/splice.ts): only the
 * records the feed plan names are mapped and written anew, the rest is copied. Gives what
 * `runExport` gives: the summary, and an output written atomically that `commit` makes visible.
 * Undefined when the poll cannot be spliced: the output is dropped, and the caller aborts the
 * session and the cache and runs the export instead.
 */
export async function runSplice(
  connection: Connection,
  options: ExportRunOptions,
  progress: Progress,
  session: SyncSession,
  cache: FeedCacheWriter,
  plan: FeedPlan,
): Promise<
  { summary: ExportSummary; found: SpliceResult['found']; commit: () => Promise<void> } | undefined
> {
  const { out } = options;
  const revisionIds = [...new Set(options.revisionIds)];
  if (out === undefined || !canSplice(options)) return undefined;
  const format = options.format as SpliceFormat; // canSplice checked it
  const started = Date.now();
  const mappingPath = options.mapping ?? connection.mapping;
  const mapping = mappingPath === undefined ? undefined : await loadMapping(mappingPath);
  const client = exportClient(connection, options, progress);
  const file = await createAtomicFile(out, options.outLocked);
  const summary: ExportSummary = {
    output: file.path,
    format,
    exportedAt: '',
    topics: [],
    traces: null,
    warnings: [],
    durationMs: 0,
  };
  try {
    const { parts, found } = await spliceExport({
      source: exportSourceOf(client),
      plan,
      cache,
      session,
      format,
      previousOutput: file.path,
      out: file.stream,
      options: {
        revisionIds,
        mapping,
        labels: options.labels,
        maxColumns: options.maxColumns,
        onWarning: (message) => progress.note(`rxs: warning: ${message}`),
        onProgress: ({ topic, records }) => progress.records(topic, records),
      },
    });
    for (const part of parts) summarize(summary, part);
    summary.durationMs = Date.now() - started;
    return { summary, found, commit: () => file.commit() };
  } catch (error) {
    await file.abort();
    if (error instanceof SpliceRefusedError) return undefined;
    throw file.failure(error);
  } finally {
    progress.done();
  }
}
