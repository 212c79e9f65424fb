import type { DocumentContext } from '@rxs/exchange';
import { previousReleasedBaseline, type Baseline, type ServiceRecord } from '@rxs/contract';
import {
  cellText,
  defaultExportMapping,
  readableIdOf,
  type ExportMapping,
  type FieldMap,
} from '@rxs/exchange/export';
import type { Principal } from '../auth/principal.js';
import type { Services } from '../services/index.js';
import {
  baselineTopics,
  clippedChanges,
  DifferencePage,
  pairTopics,
  topicRecordDifferences,
  type PairedTopic,
  type SideTopic,
} from './baseline-compare.js';
import { semanticRecord, RevisionMaps } from './record-values.js';
import { unlessMissing } from './missing.js';

/** Baselines read per page while looking for the previous released one. */
const BASELINE_PAGE = 500;

/** What a document shows: a baseline, or the records of some topics as they are now (or were `asOf`). */
export type DocumentedState =
  { baseline: Baseline } | { revisionIds: readonly string[]; asOf: string | undefined };

async function allBaselines(services: Services, principal: Principal): Promise<Baseline[]> {
  const all: Baseline[] = [];
  let after: string | undefined;
  do {
    const page = await services.baselines.list(principal, { limit: BASELINE_PAGE, after });
    all.push(...page.items);
    after = page.next;
  } while (after !== undefined);
  return all;
}

/**
 * The topics a document of now (or of a moment) shows, at their revisions then (a re-approved
 * topic's newest, as the export follows it); a topic the user cannot read is the export's to report.
 */
async function currentTopics(
  services: Services,
  principal: Principal,
  revisionIds: readonly string[],
  asOf: string | undefined,
): Promise<SideTopic[]> {
  const topics = await Promise.all(
    revisionIds.map((id) => unlessMissing(services.techdoc.getRevision(principal, id, { asOf }))),
  );
  return topics.flatMap((revision) =>
    revision
      ? [
          {
            historyId: revision.knowledge_topic_history_id,
            revisionId: revision.latest_revision_id ?? revision._id,
            name: revision.knowledge_topic_name,
            asOf,
          },
        ]
      : [],
  );
}

// The model's change summary as a value (DocumentContext also takes a function making one).
type ChangeSummary = Exclude<NonNullable<DocumentContext['changes']>, (...args: never[]) => unknown>;
type RecordChange =
  Extract<ChangeSummary['changes'], Iterable<unknown>> extends Iterable<infer C> ? C : never;

/** How one side's records are named in a document: the export's readable ids, titles and labels. */
class RecordNaming {
  private readonly rules: ReturnType<ExportMapping['topic']>;

  constructor(
    private readonly map: FieldMap | undefined,
    topic: { historyId: string; name: string },
    mapping: ExportMapping,
  ) {
    const fields = map?.fields ?? [];
    try {
      this.rules = mapping.topic(topic, fields);
    } catch {
      // A mapping file written for the topic's form now may name fields an earlier form lacked.
      this.rules = defaultExportMapping.topic(topic, fields);
    }
  }

  name(record: ServiceRecord): { readableId: string; title: string } {
    const semantic = semanticRecord(record, this.map);
    const { presentation, rule } = this.rules;
    const titleField = presentation.titleField;
    return {
      readableId: readableIdOf(semantic, rule, presentation),
      title: cellText(titleField === undefined ? undefined : semantic.values[titleField]) || record.name,
    };
  }

  /** A field's label as the topic's form gives it, else its semantic name. */
  label(field: string): string {
    return this.map?.fields.find((f) => f.name === field)?.label ?? field;
  }
}

/**
 * The changes of one topic as a document lists them, from the web comparison of its two sides: a
 * removed record named as the first side named it, the others as the second names them; a changed
 * one with each changed value by its label (its name as "Name"), values cut as the comparison cuts them.
 */
async function* topicChanges(
  services: Services,
  principal: Principal,
  maps: RevisionMaps,
  topic: PairedTopic,
  mapping: ExportMapping,
): AsyncGenerator<RecordChange> {
  const namingOf = async (revisionId: string | undefined) => {
    const entry = await maps.get(revisionId);
    const ref = {
      historyId: entry?.revision.knowledge_topic_history_id ?? topic.historyId,
      name: entry?.revision.knowledge_topic_name ?? topic.name,
    };
    return new RecordNaming(entry?.map, ref, mapping);
  };
  const before = await namingOf(topic.from?.revisionId);
  const after = await namingOf(topic.to?.revisionId);
  const differences = topicRecordDifferences(services.records, principal, maps, topic.from, topic.to);
  for await (const found of differences) {
    if (found.kind === 'unchanged') continue;
    const naming = found.kind === 'removed' ? before : after;
    const named = { topic: topic.name, ...naming.name(found.record) };
    if (found.kind !== 'changed') {
      yield { kind: found.kind, ...named };
      continue;
    }
    const { name, fields } = clippedChanges(found.changes);
    yield {
      kind: 'changed',
      ...named,
      fields: [
        ...(name ? [{ label: 'Name', before: name.before, after: name.after }] : []),
        ...fields.map((field) => ({
          label: after.label(field.field),
          before: field.before ?? '',
          after: field.after ?? '',
        })),
      ],
    };
  }
}

/**
 * The change summary of a document: its state against the previous released baseline (the shared
 * rule `previousReleasedBaseline`), topic by topic, compared as the web comparison compares, one
 * record at a time. It lists what one comparison page holds (`DifferencePage`: at most
 * COMPARE_LIMIT changes and about COMPARE_BYTES of them) and counts the others in `omitted`, which
 * the renderers show before they list the changes. A document of now compares only the topics it
 * shows. Reads every record of both sides: the caller holds an export slot.
 */
export async function documentChanges(
  services: Services,
  principal: Principal,
  state: DocumentedState,
  mapping: ExportMapping = defaultExportMapping,
): Promise<ChangeSummary> {
  const documented = 'baseline' in state ? state.baseline : undefined;
  // A document of a past moment compares with the baseline released last before that moment.
  const moment = 'asOf' in state && state.asOf !== undefined ? state.asOf : undefined;
  const previous = previousReleasedBaseline(
    await allBaselines(services, principal),
    documented ?? (moment === undefined ? undefined : { _id: '', at: moment, status: '', supersedes: null }),
  );
  if (!previous) return { against: undefined, changes: [] };
  const sideOf = (asOf: string | undefined) => (topic: Omit<SideTopic, 'asOf'>) => ({ ...topic, asOf });
  const earlier = (await baselineTopics(services.techdoc, principal, previous)).map(sideOf(previous.at));
  let first: SideTopic[];
  let second: SideTopic[];
  if (documented) {
    first = earlier;
    second = (await baselineTopics(services.techdoc, principal, documented)).map(sideOf(documented.at));
  } else {
    second =
      'revisionIds' in state ? await currentTopics(services, principal, state.revisionIds, moment) : [];
    const shown = new Set(second.map((topic) => topic.historyId));
    first = earlier.filter((topic) => topic.historyId !== null && shown.has(topic.historyId));
  }
  const maps = new RevisionMaps(services.techdoc, principal);
  const page = new DifferencePage(0);
  const changes: RecordChange[] = [];
  let omitted = 0;
  for (const topic of pairTopics(first, second))
    for await (const change of topicChanges(services, principal, maps, topic, mapping)) {
      if (page.take(change)) changes.push(change);
      else omitted++;
    }
  return { against: previous.name, changes, omitted };
}
