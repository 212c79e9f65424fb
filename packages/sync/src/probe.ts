import { readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { RxsClient } from '@rxs/client';
import type { BatchRetrieveRequest } from '@rxs/contract';
import { writeFileAtomic } from '@rxs/exchange/export';
import type { SyncState } from './state.js';

/**
 * A cheap poll: before a sync exports anything, it asks the service, with the ETags it was given
 * when the snapshot was taken, whether any of the topics, their records listings or the tenant's
 * traces changed: one request per topic (its listing's tag covers the revision too, `with_revision`)
 * and one for the traces. When none did, the snapshot and output stand as they are and nothing is
 * downloaded. Kept in DIR/probe.json next to state.json:
 *
 * - The tags are taken before the export reads anything, so they are never newer than the snapshot
 *   (a change in between makes the next poll export once more, never miss it).
 * - The file is written only after the snapshot was committed, and names the snapshot's generation:
 *   a probe of another snapshot, of other export options (`fingerprint`), or an output file that was
 *   changed or removed since, means a full sync.
 * - A server that sends no ETag (the service the interface was published for) gives no probe: every
 *   sync is then a full one.
 */
export const PROBE_FILE = 'probe.json';
const PROBE_FORMAT = 'rxs-sync-probe';
/** 2: one tag per topic (listing and revision together); a probe of version 1 makes a full run. */
const PROBE_VERSION = 2;

export interface ProbeTags {
  /** Per topic, the tag of its listing with its revision (`with_revision`). */
  topics: { revisionId: string; records: string }[];
  /** The tenant's traces, when the export has them: the request asked and its tag. */
  traces: { request: BatchRetrieveRequest; tag: string } | null;
}

export interface SyncProbe {
  format: typeof PROBE_FORMAT;
  version: typeof PROBE_VERSION;
  /** What the caller's export options come to (format, topics, mapping, ...): another is a full sync. */
  fingerprint: string;
  /** The snapshot the tags belong to. */
  generation: string;
  /**
   * The output file as the sync left it, or null without one. `ino` and `ctimeMs` tell another file
   * put at its name (a link pointed elsewhere) or one edited and given its old time back.
   */
  output: { path: string; size: number; mtimeMs: number; ino: number; ctimeMs: number } | null;
  tags: ProbeTags;
}

/**
 * The current tags of these revisions (and of the tenant's traces), or undefined when the server
 * sends no ETags. Call it before the export starts.
 */
export async function takeProbeTags(
  client: RxsClient,
  revisionIds: readonly string[],
  withTraces: boolean,
): Promise<ProbeTags | undefined> {
  const topics: ProbeTags['topics'] = [];
  for (const revisionId of revisionIds) {
    // The topic first: a service without ETags says so there, before it is asked for a listing
    // (which it may not page, and would then start sending whole).
    const topic = await client.conditional.topic(revisionId);
    if (!topic.etag) return undefined;
    const records = await client.conditional.records(revisionId);
    if (!records.etag) return undefined;
    topics.push({ revisionId, records: records.etag });
  }
  let traces: ProbeTags['traces'] = null;
  if (withTraces) {
    // The tag covers every trace of the tenant, whatever the batch asks: an empty one will do.
    const request: BatchRetrieveRequest = { nodes: [] };
    const answer = await client.conditional.traces(request);
    if (!answer.etag) return undefined;
    traces = { request, tag: answer.etag };
  }
  return { topics, traces };
}

/** True when the service says nothing the tags cover changed (every request answered 304 or 412). */
export async function unchangedSince(client: RxsClient, tags: ProbeTags): Promise<boolean> {
  for (const { revisionId, records } of tags.topics)
    if (!(await client.conditional.records(revisionId, records)).unchanged) return false;
  if (tags.traces && !(await client.conditional.traces(tags.traces.request, tags.traces.tag)).unchanged)
    return false;
  return true;
}

/** The output file's size and time, to tell later whether someone changed or removed it. */
export async function outputFacts(path: string | undefined): Promise<SyncProbe['output']> {
  if (path === undefined) return null;
  const facts = await stat(path);
  // A device or named pipe gets the whole output at every run: nothing to compare, nothing to splice.
  if (!facts.isFile()) return null;
  return { path, size: facts.size, mtimeMs: facts.mtimeMs, ino: facts.ino, ctimeMs: facts.ctimeMs };
}

/**
 * The probe of DIR if it still describes the committed snapshot `state`, the same options and an
 * output nobody touched since; undefined otherwise (then the sync runs in full).
 */
export async function usableProbe(
  dir: string,
  state: SyncState | undefined,
  fingerprint: string,
  outputPath: string | undefined,
): Promise<SyncProbe | undefined> {
  if (!state) return undefined;
  let probe: SyncProbe;
  try {
    probe = JSON.parse(await readFile(join(dir, PROBE_FILE), 'utf8')) as SyncProbe;
  } catch {
    return undefined;
  }
  if (probe.format !== PROBE_FORMAT || probe.version !== PROBE_VERSION) return undefined;
  if (probe.fingerprint !== fingerprint || probe.generation !== state.generation) return undefined;
  if ((probe.output?.path ?? undefined) !== outputPath) return undefined;
  if (probe.output) {
    const now = await outputFacts(probe.output.path).catch(() => undefined);
    // A probe written without `ino` and `ctimeMs` never matches: one full sync writes them.
    const same = (['size', 'mtimeMs', 'ino', 'ctimeMs'] as const).every(
      (fact) => now?.[fact] === probe.output![fact],
    );
    if (!same) return undefined;
  }
  return probe;
}

/** Writes the probe of a snapshot just committed; without tags, removes any older one. */
export async function saveProbe(
  dir: string,
  probe: Omit<SyncProbe, 'format' | 'version' | 'tags'> & { tags: ProbeTags | undefined },
): Promise<void> {
  const path = join(dir, PROBE_FILE);
  if (!probe.tags) {
    await rm(path, { force: true });
    return;
  }
  const content: SyncProbe = { format: PROBE_FORMAT, version: PROBE_VERSION, ...probe, tags: probe.tags };
  await writeFileAtomic(path, `${JSON.stringify(content, null, 2)}\n`);
}
