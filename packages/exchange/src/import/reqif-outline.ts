import type { OutlineEntry } from '@rxs/contract';
import { keptOutline, MAX_OUTLINE_ENTRIES, MAX_OUTLINE_LEVEL } from '@rxs/contract/plain';
import type { RecordsClient, TechdocClient } from '@rxs/client';
import { keepsNoOutlines } from '../export/client-source.js';
import { readSpecHierarchies, type SpecHierarchy } from './reqif-hierarchy.js';
import type { RecordIdentities } from './reqif-records.js';
import type { ReqifReadOptions } from './reqif-events.js';

export interface OutlineImportClient {
  techdoc: Pick<TechdocClient, 'getTopic'>;
  records: Pick<RecordsClient, 'listRecords' | 'getOutline' | 'putOutline'>;
}

export interface OutlineImportOptions extends ReqifReadOptions {
  /** The KT revisions the file's spec objects were imported into: each topic gets its outline. */
  revisionIds: readonly string[];
  /** Say what the outlines would be; change none. */
  dryRun?: boolean;
}

export interface OutlineImportReport {
  /** SPEC-HIERARCHY entries placed in a topic's outline (in a dry run: that would be). */
  entries: number;
  /** Entries whose spec object is no record of the topics (a type not imported, a record not made, an object named twice). */
  skipped: number;
  notes: string[];
}

/** Entries a note names one by one. */
const MAX_NAMED = 5;

/** A hierarchy entry with the record it names, if any, and that record's topic (index in revisionIds). */
interface PlacedEntry extends OutlineEntry {
  object: string;
  topic: number | undefined;
}

/** An outline whose levels are within MAX_OUTLINE_LEVEL (an entry deeper is a sibling of the one before it). */
const clamped = (entries: readonly OutlineEntry[]): OutlineEntry[] =>
  entries.map(({ record_id, level }) => ({ record_id, level: Math.min(level, MAX_OUTLINE_LEVEL) }));

const sameOutline = (a: readonly OutlineEntry[], b: readonly OutlineEntry[]) =>
  a.length === b.length &&
  a.every((entry, i) => entry.record_id === b[i]!.record_id && entry.level === b[i]!.level);

/**
 * The SPECIFICATIONs' hierarchies of a file's import as the document outlines of its topics: each
 * topic's outline is the file's entries that name its records (all SPECIFICATIONs, in file order;
 * an entry that names no record of the topic is left out and its descendants move up a level each,
 * see keptOutline), then the entries of its outline before the import that the file does not name,
 * in their order. A topic whose records the file's hierarchies do not name keeps its outline, and an
 * outline that would not change is not written, so importing the file again changes nothing. A
 * service without outlines is noted, not an error: the records and traces are in the topics.
 */
export async function outlinesOfHierarchies(
  client: OutlineImportClient,
  specifications: AsyncIterable<SpecHierarchy> | Iterable<SpecHierarchy>,
  records: RecordIdentities,
  options: Pick<OutlineImportOptions, 'revisionIds' | 'dryRun'>,
): Promise<OutlineImportReport> {
  const report: OutlineImportReport = { entries: 0, skipped: 0, notes: [] };
  const placed: PlacedEntry[] = [];
  const named = new Set<string>();
  const skipped: string[] = [];
  for await (const specification of specifications)
    for (const { object, level } of specification.entries) {
      const record = records.get(object);
      // A record stands once in an outline: a second entry for it is left out as one for no record.
      const topic = record && !named.has(record.recordId) ? record.topic : undefined;
      if (topic === undefined) {
        report.skipped++;
        if (skipped.length < MAX_NAMED) skipped.push(object || '(none)');
      } else named.add(record!.recordId);
      placed.push({ object, level, record_id: record?.recordId ?? '', topic });
    }
  if (report.skipped > 0)
    report.notes.push(
      `${report.skipped} SPEC-HIERARCHY entr${report.skipped === 1 ? 'y' : 'ies'} left out of the outline (their children move up): the object is not an imported record (a spec object type not imported, an object the file lacks) or is named twice: ${skipped.join(', ')}${report.skipped > MAX_NAMED ? ` and ${report.skipped - MAX_NAMED} more` : ''}.`,
    );
  for (const [topic, revisionId] of options.revisionIds.entries()) {
    const fromFile = keptOutline(placed, (entry) => entry.topic === topic);
    if (fromFile.length === 0) continue;
    const { knowledge_topic_history_id: historyId, knowledge_topic_name: name } =
      await client.techdoc.getTopic(revisionId);
    let before: OutlineEntry[];
    try {
      before = (await client.records.getOutline(historyId)).entries;
    } catch (error) {
      if (!keepsNoOutlines(error)) throw error;
      report.notes.push(
        'The service keeps no document outlines: the order and levels of the SPECIFICATIONs were not imported.',
      );
      return report;
    }
    const outline = clamped([...fromFile, ...keptOutline(before, (entry) => !named.has(entry.record_id))]);
    if (outline.length > MAX_OUTLINE_ENTRIES) {
      report.notes.push(
        `The outline of "${name}" would hold ${outline.length.toLocaleString('en')} entries; the first ${MAX_OUTLINE_ENTRIES.toLocaleString('en')}, the most an outline holds, are kept.`,
      );
      outline.length = MAX_OUTLINE_ENTRIES;
    }
    report.entries += Math.min(fromFile.length, outline.length);
    if (!options.dryRun && !sameOutline(outline, before)) await client.records.putOutline(historyId, outline);
  }
  return report;
}
