import type { KnowledgeTopicRevision, ServiceRecord } from '@rxs/contract';
import { buildFieldMap, cellText, mapRecord, type FieldMap } from '@rxs/exchange/export';
import { diffRecord, type StoredRecord } from '@rxs/sync';
import type { Principal } from '../auth/principal.js';
import { unlessMissing } from './missing.js';
import type { TechdocService } from '../services/techdoc/service.js';
import type { FieldDifference, RecordChanges } from '@rxs/web-api';

/** A record's values by semantic name as exports show them (option values by their labels). */
export function semanticRecord(
  record: ServiceRecord,
  map: Pick<FieldMap, 'fields'> | undefined,
): StoredRecord {
  const values = map
    ? mapRecord(record, map, { labels: true }).record.values
    : // Without its topic's form the data keys are the best names there are.
      { ...(record.data as Record<string, unknown>) };
  return { id: record._id, name: record.name, version: record.version, values };
}

/** The values of a record as display text, in column order, with the form key of each name. */
export function displayValues(
  record: ServiceRecord,
  map: FieldMap,
): { name: string; key: string; text: string }[] {
  const mapped = mapRecord(record, map, { labels: true });
  const keys = new Map([...map.fields, ...mapped.newFields].map((f) => [f.name, f.key]));
  return Object.entries(mapped.record.values).map(([name, value]) => ({
    name,
    key: keys.get(name) ?? name,
    text: cellText(value),
  }));
}

/**
 * What changed between two states of a record, by semantic name (the sync report's comparison),
 * with values as display text. Without a state before, every value is added.
 */
export function recordChanges(before: StoredRecord | undefined, after: StoredRecord): RecordChanges {
  const change = diffRecord(before ?? { ...after, values: {} }, after);
  if (!change) return { name: null, fields: [] };
  const fields: FieldDifference[] = change.fields.map((field) => ({
    field: field.field,
    change: field.change,
    ...(field.change === 'added' ? {} : { before: cellText(field.before) }),
    ...(field.change === 'removed' ? {} : { after: cellText(field.after) }),
  }));
  return { name: before ? change.nameChange : null, fields };
}

/**
 * The field maps of revisions, each read once per request: a record's versions and a comparison's
 * records mostly share one or two revisions. A revision that is gone (or not the tenant's) has none.
 */
export class RevisionMaps {
  private readonly cache = new Map<
    string,
    Promise<{ revision: KnowledgeTopicRevision; map: FieldMap } | undefined>
  >();

  constructor(
    private readonly techdoc: TechdocService,
    private readonly principal: Principal,
  ) {}

  get(revisionId: string | null | undefined) {
    if (!revisionId) return Promise.resolve(undefined);
    let entry = this.cache.get(revisionId);
    if (!entry) {
      entry = unlessMissing(this.techdoc.getRevision(this.principal, revisionId)).then(
        (revision) => revision && { revision, map: buildFieldMap(revision.knowledge_topic_schema) },
      );
      this.cache.set(revisionId, entry);
    }
    return entry;
  }
}
