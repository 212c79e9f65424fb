import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { NodeType, RelationType } from '@rxs/contract';
import type { ExportedField, ExportServers } from '@rxs/exchange/export';
import { SyncError } from './errors.js';

/**
 * The previous snapshot, as sync keeps it in its folder DIR:
 *
 *   DIR/state.json               what is current: format, the export's facts, per topic its
 *                                metadata and the file of its records, the traces file; names the
 *                                generation folder holding those files
 *   DIR/gen-<id>/topic-<n>.jsonl a topic's records sorted by id, one StoredRecord a line
 *   DIR/gen-<id>/topic-<n>.overlay.jsonl  after a spliced poll: the lines changed since that
 *                                file was written (layered-cursor.ts); the file itself is then
 *                                a hard link to an earlier generation's
 *   DIR/gen-<id>/topic-<n>.rows  where each record's line and output row sit (row-index.ts)
 *   DIR/gen-<id>/traces.jsonl    the traces sorted by id, one StoredTrace a line
 *   DIR/sync.lock                held while a sync runs (see lock.ts)
 *   DIR/reports/<time>.json      change reports (see report-file.ts)
 *
 * A new state is written into `DIR/.tmp-gen-<id>` and switched to by two renames (folder, then
 * state.json); see generation.ts. Topics are keyed by their history id, which survives a
 * re-approval (the revision id does not).
 */

export const SYNC_STATE_FORMAT = 'rxs-sync-state';
/** Written when a topic has an overlay (which an rxs reading version 1 would not see). */
export const SYNC_STATE_VERSION = 2;
/** Written when no topic has one, so that an rxs that reads only version 1 still reads the state. */
export const SYNC_STATE_VERSION_WITHOUT_OVERLAYS = 1;
export const STATE_FILE = 'state.json';
export const GENERATION_PREFIX = 'gen-';
export const TEMP_GENERATION_PREFIX = '.tmp-gen-';

/** One line of a topic's records file. */
export interface StoredRecord {
  id: string;
  name: string;
  version: string;
  /** Values by semantic name, as exported. */
  values: Record<string, unknown>;
}

/**
 * One line of the traces file: id, source, target, relation types, and `true` last when the trace is
 * suspect (absent otherwise: a line without it means not suspect, whichever rxs wrote it).
 */
export type StoredTrace = [
  id: string,
  source: { id: string; type: NodeType },
  target: { id: string; type: NodeType },
  relationTypes: RelationType[],
  suspect?: true,
];

export interface StoredTopic {
  historyId: string;
  revisionId: string;
  name: string;
  version: string;
  status: string;
  /** The topic's fields as of its `topic-end` part (including keys met only in record data). */
  fields: ExportedField[];
  /** sha256 of the canonical JSON of the form schema. */
  schemaHash: string;
  recordCount: number;
  /**
   * The records file, relative to the generation folder. With `overlay`, the base the overlay
   * applies to: the file of an earlier poll, linked into this generation, never rewritten.
   */
  file: string;
  /**
   * Lines sorted by id that change the base (a spliced poll's, state version 2): a record's line
   * replaces the base's of its id or adds the record; `{"id":…,"gone":true}` removes it.
   */
  overlay?: string;
  /**
   * Where each record's line and output row sit (row-index.ts), written by a spliced poll for the
   * next one; relative to the generation folder.
   */
  rows?: string;
}

export interface SyncState {
  format: typeof SYNC_STATE_FORMAT;
  version: typeof SYNC_STATE_VERSION | typeof SYNC_STATE_VERSION_WITHOUT_OVERLAYS;
  /** Folder (in DIR) holding this state's files. */
  generation: string;
  exportedAt: string;
  committedAt: string;
  servers: ExportServers;
  revisionIds: string[];
  topics: StoredTopic[];
  /** The traces file (relative to the generation folder), or null when the export had no traces. */
  traces: { file: string; count: number } | null;
}

export class SyncStateError extends SyncError {
  override name = 'SyncStateError';
  readonly code = 'RXS_ERR_SYNC_STATE';
}

/** The current state of DIR, or undefined when none was committed yet (the first sync). */
export async function readSyncState(dir: string): Promise<SyncState | undefined> {
  const path = join(dir, STATE_FILE);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  let state: Partial<SyncState>;
  try {
    state = JSON.parse(text) as Partial<SyncState>;
  } catch {
    throw new SyncStateError(`${path} is not valid JSON; the sync state is damaged.`);
  }
  if (state?.format !== SYNC_STATE_FORMAT)
    throw new SyncStateError(`${path} is not an rxs sync state (format "${String(state?.format)}").`);
  if (state.version !== SYNC_STATE_VERSION && state.version !== SYNC_STATE_VERSION_WITHOUT_OVERLAYS)
    throw new SyncStateError(
      `${path} has state version ${String(state.version)}; this rxs reads versions ${SYNC_STATE_VERSION_WITHOUT_OVERLAYS} and ${SYNC_STATE_VERSION}. ` +
        `Use a matching rxs, or start over with an empty folder.`,
    );
  if (typeof state.generation !== 'string' || !state.generation.startsWith(GENERATION_PREFIX))
    throw new SyncStateError(`${path} names no generation folder; the sync state is damaged.`);
  if (!Array.isArray(state.topics))
    throw new SyncStateError(`${path} lists no topics; the sync state is damaged.`);
  return state as SyncState;
}

/** Absolute path of a file of a state's generation. */
export function stateFilePath(dir: string, state: Pick<SyncState, 'generation'>, file: string): string {
  return join(dir, state.generation, file);
}

export function toStoredTrace(trace: {
  id: string;
  source: { id: string; type: NodeType };
  target: { id: string; type: NodeType };
  relationTypes: RelationType[];
  suspect?: boolean;
}): StoredTrace {
  const stored: StoredTrace = [
    trace.id,
    { id: trace.source.id, type: trace.source.type },
    { id: trace.target.id, type: trace.target.type },
    [...trace.relationTypes],
  ];
  if (trace.suspect) stored.push(true);
  return stored;
}
