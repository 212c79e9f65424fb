import { basename } from 'node:path';
import type { Writable } from 'node:stream';
import type { Baseline } from '@rxs/contract';
import { BaselineNotFoundError, type RxsClient } from '@rxs/client';
import type { DocumentChangeSummary, DocumentFormat } from '@rxs/exchange';
import {
  createWriter,
  exportPartBatches,
  exportSourceOf,
  loadMappingFile,
  MappingFileError,
  type ExportFormat,
  type ExportPart,
  type ExportSource,
  type ExportWriter,
  type LinksBy,
  type RowObserver,
  type WriterOptions,
} from '@rxs/exchange/export';
import { clientFor } from './client.js';
import { createAtomicFile, type AtomicFile } from './atomic-file.js';
import type { Connection } from './connection.js';
import { standardOutputFailure, UserError } from './errors.js';
import type { Progress } from './progress.js';

/** The formats of `rxs export` that are documents for people (`DocumentWriter`), not data files. */
export const DOCUMENT_FORMATS: readonly DocumentFormat[] = ['docx', 'pdf'];

export const isDocumentFormat = (format: string): format is DocumentFormat =>
  (DOCUMENT_FORMATS as readonly string[]).includes(format);

export interface ExportRunOptions {
  revisionIds: string[];
  /** A document format always reads the traces and shows select values by their labels. */
  format: ExportFormat | DocumentFormat;
  /** A file path, or '-' for standard output, or undefined for no output (sync without --out). */
  out?: string;
  /** `out` is written under rxs sync's lock: temporary files of it that are there are a killed run's. */
  outLocked?: boolean;
  traces: boolean;
  labels: boolean;
  followLatest: boolean;
  timeoutMs?: number;
  retries?: number;
  traceConcurrency?: number;
  /** A mapping file (`--mapping`); else the connection profile's, else the defaults. */
  mapping?: string;
  /** Most columns of one topic (`--max-columns`); the sdk's default without. */
  maxColumns?: number;
  /** Export the state at this past moment (`--as-of`). */
  asOf?: string;
  /** Export a baseline: its moment, and its revisions unless `revisionIds` names some (`--baseline`). */
  baseline?: string;
  /** Wraps the source the export reads (rxs sync keeps its feed cache this way). */
  wrapSource?: (source: ExportSource) => ExportSource;
  /** Told each record's row as the writer writes it (rxs sync's row index; `WriterOptions.onRow`). */
  onRow?: RowObserver;
  /** Options of the needs format (`--needs-docname`). */
  needs?: WriterOptions['needs'];
  /** How links are named (`--links-by`; the procedure's default, `role`, without). */
  linksBy?: LinksBy;
  /**
   * A document's change summary (document-changes.ts), computed when the document is written to an
   * output; without it the document has no change summary section.
   */
  documentChanges?: (run: DocumentChangesRun) => Promise<DocumentChanges>;
}

/** A document's change summary while its export runs. */
export interface DocumentChanges {
  /** Takes the parts of the document's export; none when there is nothing to compare with. */
  later?: PartConsumer;
  /** The summary; once the document's export has ended. */
  summary(): Promise<DocumentChangeSummary>;
  dispose(): Promise<void>;
}

/** What a document's change summary is computed from. */
export interface DocumentChangesRun {
  connection: Connection;
  client: RxsClient;
  /** The document's baseline; none: a document of now, or of `asOf`. */
  baseline: Baseline | undefined;
  asOf: string | undefined;
  /** The document's export: the earlier one reads with its mapping, timeouts and limits. */
  options: ExportRunOptions;
  progress: Progress;
  /** Where the record names wait (the system's temporary folder when not given). */
  tempDir?: string;
}

export interface TopicSummary {
  revisionId: string;
  historyId: string;
  name: string;
  version: string;
  records: number;
}

export interface ExportSummary {
  output: string | null;
  format: ExportFormat | DocumentFormat;
  /** The moment the export shows: `rxs export --as-of` with it gives the same bytes later. */
  exportedAt: string;
  /** The moment exported, when it was a past one (--as-of, --baseline). */
  asOf?: string;
  /** The baseline exported (--baseline). */
  baseline?: string;
  topics: TopicSummary[];
  traces: number | null;
  warnings: string[];
  durationMs: number;
}

/** Something else that consumes the parts alongside the writer (the sync session). */
export interface PartConsumer {
  write(part: ExportPart): Promise<void>;
  /** Optional: several parts in order, with fewer awaits. */
  writeParts?(parts: readonly ExportPart[]): Promise<void>;
}

/** Hands a batch of parts to a writer or consumer, in one call when it takes batches. */
async function deliver(target: PartConsumer, parts: readonly ExportPart[]): Promise<void> {
  if (target.writeParts) await target.writeParts(parts);
  else for (const part of parts) await target.write(part);
}

/** Two consumers of the same parts as one: each is given every batch, in order, the first first. */
export function alongside(first: PartConsumer, second: PartConsumer): PartConsumer {
  const writeParts = async (parts: readonly ExportPart[]) => {
    await deliver(first, parts);
    await deliver(second, parts);
  };
  return { write: (part) => writeParts([part]), writeParts };
}

/**
 * Hands a batch to the writer and the other consumer side by side: each works while the other
 * waits for its file writes (or reads). Both settle before a failure is reported, so nothing is
 * still writing when the caller cleans up.
 */
async function deliverBoth(
  writer: ExportWriter,
  also: PartConsumer,
  parts: readonly ExportPart[],
): Promise<void> {
  const [written, consumed] = await Promise.allSettled([deliver(writer, parts), deliver(also, parts)]);
  if (written.status === 'rejected') throw written.reason;
  if (consumed.status === 'rejected') throw consumed.reason;
}

/**
 * Runs the export procedure into a format writer (and optionally another consumer), writing the
 * output atomically: on any failure the previous output stays as it was. Returns the summary and a
 * `commit` that makes the output visible; callers commit only when everything else succeeded.
 */
export async function runExport(
  connection: Connection,
  options: ExportRunOptions,
  progress: Progress,
  also?: PartConsumer,
): Promise<{ summary: ExportSummary; commit: () => Promise<void>; abort: () => Promise<void> }> {
  const started = Date.now();
  // Read and checked before anything is fetched or written: a bad file changes nothing.
  const mappingPath = options.mapping ?? connection.mapping;
  const mapping = mappingPath === undefined ? undefined : await loadMapping(mappingPath);
  const client = exportClient(connection, options, progress);
  if (options.asOf !== undefined && options.baseline !== undefined)
    throw new UserError('--as-of and --baseline both name a moment: give one of them.');
  // A baseline names the moment and, unless --kt names others, the revisions.
  const baseline = options.baseline === undefined ? undefined : await findBaseline(client, options.baseline);
  const revisionIds =
    options.revisionIds.length > 0 ? options.revisionIds : (baseline?.knowledge_topic_revision_ids ?? []);
  if (revisionIds.length === 0)
    throw new UserError(
      'Name the topics to export with --kt REVISION_ID (or a --baseline, which names them).',
    );
  const asOf = baseline?.at ?? options.asOf;
  const source = exportSourceOf(client);
  const { format } = options;
  const isDocument = isDocumentFormat(format);
  // A document's change summary: the previous released baseline is exported and compared now,
  // before the output file is begun; this export is compared with it as it passes.
  const changes =
    isDocument && options.out !== undefined && options.documentChanges
      ? await options.documentChanges({ connection, client, baseline, asOf, options, progress })
      : undefined;
  const consumer = changes?.later ? (also ? alongside(also, changes.later) : changes.later) : also;
  let file: AtomicFile | undefined;
  let writer: ExportWriter | undefined;
  try {
    if (isDocument) {
      // What the document needs from the services is read before the output file is begun.
      const documentWriterOn = await documentWriterFor(format, {
        connection,
        client,
        source,
        baseline,
        asOf,
        hasMapping: mapping !== undefined,
        changes: changes && (() => changes.summary()),
      });
      if (options.out === '-') writer = documentWriterOn(process.stdout);
      else if (options.out) {
        file = await createAtomicFile(options.out, options.outLocked);
        writer = documentWriterOn(file.stream, file.scratchDir);
      }
    } else if (options.out === '-') {
      writer = createWriter(format, process.stdout, { needs: options.needs });
    } else if (options.out) {
      file = await createAtomicFile(options.out, options.outLocked);
      writer = createWriter(format, file.stream, {
        tempDir: file.scratchDir,
        onRow: options.onRow,
        fileName: basename(options.out),
        needs: options.needs,
      });
    }
  } catch (error) {
    await changes?.dispose();
    throw error;
  }

  const summary: ExportSummary = {
    output: file?.path ?? (options.out === '-' ? '-' : null),
    format: options.format,
    exportedAt: asOf ?? '',
    ...(asOf !== undefined && { asOf }),
    ...(baseline && { baseline: baseline.name }),
    topics: [],
    traces: null,
    warnings: [],
    durationMs: 0,
  };
  const batches = exportPartBatches(options.wrapSource ? options.wrapSource(source) : source, {
    revisionIds: [...new Set(revisionIds)],
    asOf,
    mapping,
    traces: options.traces || isDocument,
    ...(options.linksBy !== undefined && { linksBy: options.linksBy }),
    labels: options.labels || isDocument,
    followLatest: options.followLatest,
    maxColumns: options.maxColumns,
    onWarning: (message) => progress.note(`rxs: warning: ${message}`),
    onProgress: ({ topic, records }) => progress.records(topic, records),
  });
  try {
    const work = async () => {
      for await (const parts of batches) {
        for (const part of parts) summarize(summary, part);
        if (writer && consumer) await deliverBoth(writer, consumer, parts);
        else if (writer) await deliver(writer, parts);
        else if (consumer) await deliver(consumer, parts);
      }
      progress.update('writing the output...', true);
      await writer?.close();
    };
    // An output that fails (its reader quit, the disk is full) ends the export, also where a
    // writer would wait for it forever (the XLSX writer waits for a finish that never comes).
    const output = file?.stream ?? (options.out === '-' ? process.stdout : undefined);
    await (output ? Promise.race([work(), failureOf(output)]) : work());
    // What the format had to change (an XLSX cell cut, ...), named by record and field.
    for (const message of writer?.warnings ?? []) {
      progress.note(`rxs: warning: ${message}`);
      summary.warnings = [...summary.warnings, message];
    }
  } catch (error) {
    await writer?.close().catch(() => undefined);
    await file?.abort();
    if (file) throw file.failure(error);
    // `--out -` to a full disk (`> /dev/full`) fails in the write itself, before any error event.
    const code = (error as NodeJS.ErrnoException).code;
    if (options.out === '-' && (code === 'ENOSPC' || code === 'EPIPE'))
      throw new UserError(standardOutputFailure(error as NodeJS.ErrnoException));
    throw error;
  } finally {
    progress.done();
    await changes?.dispose();
  }
  summary.durationMs = Date.now() - started;
  return {
    summary,
    commit: async () => {
      await file?.commit();
    },
    abort: async () => {
      await file?.abort();
    },
  };
}

/** The client an export reads with: the run's timeout and retries, retries noted as progress. */
export function exportClient(
  connection: Connection,
  options: ExportRunOptions,
  progress: Progress,
): RxsClient {
  return clientFor(connection, {
    timeoutMs: options.timeoutMs,
    retries: options.retries,
    traceConcurrency: options.traceConcurrency,
    onRetry: (message) => progress.note(message),
  });
}

/** Notes in the summary what a part says about the export (records are counted by topic-end). */
export function summarize(summary: ExportSummary, part: ExportPart): void {
  if (part.kind === 'header') {
    summary.exportedAt = part.header.exportedAt;
  } else if (part.kind === 'topic-end') {
    const { topic } = part;
    summary.topics.push({
      revisionId: topic.revisionId,
      historyId: topic.historyId,
      name: topic.name,
      version: topic.version,
      records: part.recordCount,
    });
  } else if (part.kind === 'traces') {
    summary.traces = part.traces.length;
  } else if (part.kind === 'end') {
    summary.warnings = part.warnings;
  }
}

/**
 * The writer of a DOCX or PDF document, loaded only for one (it brings the fonts and renderers),
 * for an output given later: the tenant's name, the baseline's status and signatures as `GET /baselines/{id}` has
 * them now, and coverage by the tenant's trace model as it was at the export's moment, unless a
 * mapping file names the links.
 */
async function documentWriterFor(
  format: DocumentFormat,
  run: {
    connection: Connection;
    client: RxsClient;
    source: ExportSource;
    baseline: Baseline | undefined;
    asOf: string | undefined;
    hasMapping: boolean;
    /** The change summary, once the export has ended (`DocumentContext.changes`). */
    changes: (() => Promise<DocumentChangeSummary>) | undefined;
  },
): Promise<(out: Writable, tempDir?: string) => ExportWriter> {
  const { DocumentWriter } = await import('@rxs/exchange');
  const baseline = run.baseline && (await run.client.techdoc.getBaseline(run.baseline._id));
  // The cover names the tenant; a service without `GET /account` is named by its host.
  const account = await run.client.techdoc.account();
  const model = run.hasMapping
    ? undefined
    : await run.source.getTraceRoles?.(run.asOf === undefined ? {} : { asOf: run.asOf });
  return (out, tempDir) =>
    new DocumentWriter(format, out, {
      tenant: account?.tenant.name ?? new URL(run.connection.techdocUrl).host,
      ...(baseline && { baseline }),
      ...(model && model.length > 0 && { coverage: { model } }),
      ...(tempDir !== undefined && { tempDir }),
      ...(run.changes && { changes: run.changes }),
    });
}

/** A baseline by name or id; not finding it is the user's to correct. */
async function findBaseline(client: RxsClient, nameOrId: string): Promise<Baseline> {
  try {
    return await client.techdoc.findBaseline(nameOrId);
  } catch (error) {
    if (error instanceof BaselineNotFoundError) throw new UserError(error.message);
    throw error;
  }
}

/** A mapping file's mistakes (also a missing file) are the user's to correct: no stack, exit 1. */
export async function loadMapping(path: string) {
  try {
    return await loadMappingFile(path);
  } catch (error) {
    if (error instanceof MappingFileError) throw new UserError(error.message);
    throw error;
  }
}

export function describeSummary(summary: ExportSummary): string {
  const records = summary.topics.reduce((n, t) => n + t.records, 0);
  const topics = summary.topics
    .map((t) => `  ${t.name} ${t.version} (revision ${t.revisionId}): ${t.records} records`)
    .join('\n');
  const traces = summary.traces === null ? '' : ` and ${summary.traces} traces`;
  const target = summary.output && summary.output !== '-' ? ` to ${summary.output}` : '';
  const moment = summary.baseline
    ? ` as of baseline ${summary.baseline} (${summary.asOf})`
    : summary.asOf
      ? ` as of ${summary.asOf}`
      : '';
  // A present export says its moment, so that it can be taken again, unchanged, at any later time.
  const again = summary.asOf
    ? ''
    : `\n  as of ${summary.exportedAt} (--as-of ${summary.exportedAt} exports it again)`;
  return `Exported${moment} ${records} records of ${summary.topics.length} topic${summary.topics.length === 1 ? '' : 's'}${traces}${target} (${summary.format}, ${(summary.durationMs / 1000).toFixed(1)} s)\n${topics}${again}`;
}

/** Rejects with `stream`'s error once it fails; never resolves. */
function failureOf(stream: Writable): Promise<never> {
  return new Promise((_, reject) => {
    if (stream.errored) reject(stream.errored);
    else stream.once('error', reject);
  });
}
