import { previousReleasedBaseline } from '@rxs/contract/plain';
import type {
  DocumentChangeSummary,
  DocumentFieldChange,
  DocumentRecordChange,
  RecordName,
  RecordNames,
} from '@rxs/exchange';
import { cellText } from '@rxs/exchange/export';
import type { ChangeReport, RecordRef } from '@rxs/sync';
import { startComparison } from './compare-run.js';
import type { DocumentChanges, DocumentChangesRun, ExportRunOptions } from './export-run.js';

/**
 * The change summary of a document: its records compared with the previous released baseline's
 * (`previousReleasedBaseline`, the rule the server's documents follow too) by the comparison `rxs
 * sync --since` makes. The earlier baseline is exported first, its own topics as it fixed them; the
 * document's export is compared with it as it passes (`later`), and the summary is made once it
 * ended. The report names records by id: their readable ids and titles, as the document shows them
 * elsewhere, are kept on disk as both exports pass (`RecordNames`), and only the listed ones are
 * read back, so memory stays bounded by the report's detail limit.
 */
export async function documentChanges(run: DocumentChangesRun): Promise<DocumentChanges> {
  // A document of a past moment that is no baseline compares with the last release before it.
  const of = run.baseline ?? (run.asOf === undefined ? undefined : momentShape(run.asOf));
  const previous = previousReleasedBaseline(await run.client.techdoc.listBaselines(), of);
  if (!previous) {
    const none: DocumentChangeSummary = { against: undefined, changes: [] };
    return { summary: async () => none, dispose: async () => {} };
  }
  const { RecordNames } = await import('@rxs/exchange');
  const earlierNames = new RecordNames(run.tempDir);
  const laterNames = new RecordNames(run.tempDir);
  const dispose = async () => {
    await earlierNames.dispose();
    await laterNames.dispose();
  };
  try {
    const earlier: ExportRunOptions = {
      ...run.options,
      revisionIds: [],
      baseline: previous._id,
      asOf: undefined,
      format: 'jsonl',
      out: undefined,
      // Values must read as the document's do (select values by their labels); traces are not listed.
      labels: true,
      traces: false,
      followLatest: false,
      wrapSource: undefined,
      onRow: undefined,
    };
    const comparison = await startComparison(run.connection, earlier, run.progress, {
      earlier: earlierNames,
      later: laterNames,
    });
    return {
      later: comparison.later,
      // A document of some topics now compares those topics only: the earlier baseline's
      // others are not in it, and are no removals.
      summary: () =>
        changeSummary(comparison.report(), previous.name, earlierNames, laterNames, {
          topicsRemoved: run.baseline !== undefined,
        }),
      dispose: async () => {
        try {
          await comparison.dispose();
        } finally {
          await dispose();
        }
      },
    };
  } catch (error) {
    await dispose();
    throw error;
  }
}

/** A moment as the rule reads a baseline: a document of `--as-of` compares with the release before it. */
function momentShape(at: string) {
  return { _id: '', at, status: 'now', supersedes: null };
}

/**
 * The report as the document's change summary: per topic, records added, removed and changed (with
 * each changed field by its label, old and new value as text), in the report's order; changes the
 * report counted but did not list are `omitted`. Records of topics added since count as added;
 * of topics no longer there as removed, unless `topicsRemoved` is false (a document of some topics,
 * compared with a baseline of more).
 */
export async function changeSummary(
  fullReport: ChangeReport,
  against: string,
  earlier: RecordNames,
  later: RecordNames,
  options: { topicsRemoved: boolean } = { topicsRemoved: true },
): Promise<DocumentChangeSummary> {
  const report = {
    topics: fullReport.topics.filter((topic) => options.topicsRemoved || topic.status !== 'removed'),
  };
  const ids = (refs: (topic: ChangeReport['topics'][number]) => readonly { id: string }[]) =>
    new Set(report.topics.flatMap((topic) => refs(topic).map((ref) => ref.id)));
  const [before, after] = await Promise.all([
    earlier.find(ids((topic) => topic.removed)),
    later.find(ids((topic) => [...topic.added, ...topic.changedRecords])),
  ]);
  const named = (names: Map<string, RecordName>, ref: RecordRef): RecordName =>
    names.get(ref.id) ?? { readableId: ref.name, title: '' };
  const changes: DocumentRecordChange[] = [];
  let omitted = 0;
  for (const topic of report.topics) {
    const label = (field: string) =>
      later.label(topic.historyId, field) ?? earlier.label(topic.historyId, field) ?? field;
    for (const ref of topic.added) changes.push({ kind: 'added', topic: topic.name, ...named(after, ref) });
    for (const ref of topic.removed)
      changes.push({ kind: 'removed', topic: topic.name, ...named(before, ref) });
    for (const record of topic.changedRecords) {
      const fields: DocumentFieldChange[] = record.fields.map((field) => ({
        label: label(field.field),
        before: cellText(field.before),
        after: cellText(field.after),
      }));
      if (record.nameChange)
        fields.unshift({ label: 'Name', before: record.nameChange.before, after: record.nameChange.after });
      changes.push({ kind: 'changed', topic: topic.name, ...named(after, record), fields });
    }
    omitted += topic.omitted.added + topic.omitted.removed + topic.omitted.changed;
  }
  return { against, changes, ...(omitted > 0 && { omitted }) };
}
