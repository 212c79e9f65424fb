import { dirname } from 'node:path';
import {
  createClient,
  createWriter,
  exportParts,
  exportSourceOf,
  type ExportFormat,
  type ExportPart,
  type ExportWriter,
} from '@rxs/sdk';
import { createAtomicFile, type AtomicFile } from './atomic-file.js';
import type { Connection } from './connection.js';
import type { Progress } from './progress.js';

export interface ExportRunOptions {
  revisionIds: string[];
  format: ExportFormat;
  /** A file path, or '-' for standard output, or undefined for no output (sync without --out). */
  out?: string;
  traces: boolean;
  labels: boolean;
  followLatest: boolean;
  timeoutMs?: number;
  retries?: number;
  traceConcurrency?: number;
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
  format: ExportFormat;
  topics: TopicSummary[];
  traces: number | null;
  warnings: string[];
  durationMs: number;
}

/** Something else that consumes the parts alongside the writer (the sync session). */
export interface PartConsumer {
  write(part: ExportPart): Promise<void>;
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
  const client = createClient({
    techdocUrl: connection.techdocUrl,
    recordsUrl: connection.recordsUrl,
    tracerUrl: connection.tracerUrl,
    apiKey: connection.apiKey,
    timeoutMs: options.timeoutMs,
    retries: options.retries,
    traceConcurrency: options.traceConcurrency,
    onRetry: (event) => progress.note(`rxs: retrying ${describeRetry(event)}`),
  });
  let file: AtomicFile | undefined;
  let writer: ExportWriter | undefined;
  if (options.out === '-') {
    writer = createWriter(options.format, process.stdout, {});
  } else if (options.out) {
    file = createAtomicFile(options.out);
    writer = createWriter(options.format, file.stream, { tempDir: dirname(file.path) });
  }

  const summary: ExportSummary = {
    output: file?.path ?? (options.out === '-' ? '-' : null),
    format: options.format,
    topics: [],
    traces: null,
    warnings: [],
    durationMs: 0,
  };
  const parts = exportParts(exportSourceOf(client), {
    revisionIds: [...new Set(options.revisionIds)],
    traces: options.traces,
    labels: options.labels,
    followLatest: options.followLatest,
    onWarning: (message) => progress.note(`rxs: warning: ${message}`),
    onProgress: ({ topic, records }) => progress.records(topic, records),
  });
  try {
    for await (const part of parts) {
      if (part.kind === 'topic-end') {
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
      await writer?.write(part);
      await also?.write(part);
    }
    progress.update('writing the output...', true);
    await writer?.close();
  } catch (error) {
    await writer?.close().catch(() => undefined);
    await file?.abort();
    throw error;
  } finally {
    progress.done();
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

function describeRetry(event: {
  service?: string;
  url?: string;
  attempt?: number;
  delayMs?: number;
  reason?: string;
}): string {
  const parts = [event.service, event.url].filter(Boolean).join(' ');
  const wait = event.delayMs !== undefined ? ` in ${(event.delayMs / 1000).toFixed(1)} s` : '';
  return `${parts} (attempt ${event.attempt ?? '?'}${wait}): ${event.reason ?? 'transient failure'}`;
}

export function describeSummary(summary: ExportSummary): string {
  const records = summary.topics.reduce((n, t) => n + t.records, 0);
  const topics = summary.topics
    .map((t) => `  ${t.name} ${t.version} (revision ${t.revisionId}): ${t.records} records`)
    .join('\n');
  const traces = summary.traces === null ? '' : ` and ${summary.traces} traces`;
  const target = summary.output && summary.output !== '-' ? ` to ${summary.output}` : '';
  return `Exported ${records} records of ${summary.topics.length} topic${summary.topics.length === 1 ? '' : 's'}${traces}${target} (${summary.format}, ${(summary.durationMs / 1000).toFixed(1)} s)\n${topics}`;
}
