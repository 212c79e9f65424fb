import type { ValidationErrorItem } from './errors.js';

/**
 * The rules of a topic's document outline (`/records/outline/{knowledge_topic_history_id}`), without
 * a schema library, so the exporter loads them without TypeBox (see plain.ts). An outline is the
 * topic's records in document order, each at a level of the document's hierarchy: level 1 is the
 * top, the first entry is at level 1, and each entry is at most one level below the one before it
 * (its parent is the nearest entry before it one level up). The records a topic has that its
 * outline does not name come after the outline's entries, in the usual order (`_id`).
 */

/** Most entries one outline holds: its largest `PUT` body, sent as compact JSON, is about 5.2 MB (within the default 5 MiB request limit). */
export const MAX_OUTLINE_ENTRIES = 100_000;
/** The deepest level of an outline (ReqIF tools nest far less; a bound keeps every reader's stack small). */
export const MAX_OUTLINE_LEVEL = 32;

/** One entry of an outline: a record, and its level in the document (1 = top). */
export interface OutlineEntryShape {
  record_id: string;
  level: number;
}

/**
 * What is wrong with the order of an outline's entries, as 422 items under `at`, one per entry: the
 * first entry not at level 1, an entry more than one level below the one before it, a record named
 * twice. Whether the records exist takes the tenant; the service checks that.
 */
export function outlineProblems(
  entries: readonly OutlineEntryShape[],
  at: (string | number)[] = ['body', 'entries'],
): ValidationErrorItem[] {
  const problems: ValidationErrorItem[] = [];
  const first = new Map<string, number>();
  entries.forEach((entry, index) => {
    const previous = index === 0 ? 0 : entries[index - 1]!.level;
    if (entry.level > previous + 1)
      problems.push({
        loc: [...at, index, 'level'],
        msg:
          index === 0
            ? `The first entry is at level ${entry.level}; an outline starts at level 1.`
            : `Level ${entry.level} follows level ${previous}: an entry is at most one level below the entry before it (here ${previous + 1}).`,
        type: 'value_error',
      });
    const seen = first.get(entry.record_id);
    if (seen === undefined) first.set(entry.record_id, index);
    else
      problems.push({
        loc: [...at, index, 'record_id'],
        msg: `Record ${entry.record_id} is already entries[${seen}]; an outline names each record once.`,
        type: 'value_error',
      });
  });
  return problems;
}

/**
 * The outline with the entries `keep` refuses left out (a deleted record, a record not exported):
 * an entry left out takes nobody with it, its descendants move one level up each, so that what
 * remains is an outline again (first entry at level 1, no level skipped) and keeps every other
 * entry's ancestors among those kept.
 */
export function keptOutline<Entry extends OutlineEntryShape>(
  entries: readonly Entry[],
  keep: (entry: Entry) => boolean,
): Entry[] {
  const kept: Entry[] = [];
  // The open ancestors of the entry at hand: their levels as given, and whether each was kept.
  const ancestors: { level: number; kept: boolean }[] = [];
  let keptAncestors = 0;
  for (const entry of entries) {
    while (ancestors.length > 0 && ancestors.at(-1)!.level >= entry.level)
      if (ancestors.pop()!.kept) keptAncestors--;
    const keepIt = keep(entry);
    if (keepIt) {
      const level = keptAncestors + 1;
      kept.push(level === entry.level ? entry : { ...entry, level });
      keptAncestors++;
    }
    ancestors.push({ level: entry.level, kept: keepIt });
  }
  return kept;
}
