import { NotFoundError, type RecordsClient } from '@rxs/client';
import type { ServiceRecord } from '@rxs/contract';
import { ClaimTable, HashedCounts } from '../export/id-table.js';
import { readableIdOf } from '../export/identity.js';
import { buildFieldMap } from '../mapping/field-map.js';
import { RecordMapper } from '../mapping/record.js';
import {
  readableFallback,
  sourceIdentity,
  sourceIdOfRecord,
  type ExistingRecords,
  type IdentifiedRow,
  type ImportTarget,
} from './row-plan.js';
import { MAX_NAMED, type ImportWording } from './wording.js';

/** The rows the file names by each kind of identity, so the topic is listed only for those it needs. */
export interface Referenced {
  ids: number;
  readableIds: number;
  sourceIds: number;
}

/** The topic's records with a source id no row of the file has: counted, the first named, their ids when they are to be deleted. */
export interface MissingRecords {
  count: number;
  named: string[];
  /** Every one of them, when they are to be deleted. */
  toRemove: { id: string; sourceId: string }[];
}

/** The calls finding the records a file names. */
export interface MatchingClient {
  records: Pick<RecordsClient, 'listRecords' | 'getRecord'>;
}

/** Lookups of `_id`s that are no record of the topic, to say whose they are. */
const MAX_LOOKUPS = 100;
/**
 * Record ids a request fetches (`id__in`): 25 characters each in its URL, which stays within the
 * request-line limits of common servers and proxies (8 KB).
 */
const FETCH_IDS = 200;
/**
 * The records one group of rows fetches, in characters of their values (`recordChars`): the
 * importer holds two groups' records (the one checked, the next one fetched), so a file naming
 * large records holds some tens of megabytes of them, however many a chunk of rows names.
 */
const GROUP_CHARS = 16 * 1024 * 1024;
/**
 * Records up to this size count as this size in a group (200 of them fit GROUP_CHARS); the size of
 * each larger one is kept from the listing.
 */
const SMALL_RECORD_CHARS = 64 * 1024;

/** Rows checked together, and the ids of the records they name (fetched for them). */
export interface RowGroup {
  rows: IdentifiedRow[];
  ids: string[];
}

/**
 * The topic's records that a file's rows name (by `_id`, source id or readable id), found by one
 * pass over the topic's listing, and those with a source id that no row has. Only their ids are kept
 * (by hash, as HashedCounts): a file updating a million records holds tens of megabytes, not the
 * records. The records a chunk of rows names are fetched for that chunk (`recordsFor`).
 */
export class TopicMatches {
  /** The ids of every record of the topic, when they were listed. */
  listedIds: HashedCounts | undefined;
  /** How many records of the topic the rows name. */
  matched = 0;
  readonly missing: MissingRecords = { count: 0, named: [], toRemove: [] };
  /** The record of each readable id a row names (of records with the same one: the last listed). */
  private readonly byReadableId = new IdIndex();
  /** The records of each source id a row names, in listing order (more than one: ambiguous). */
  private readonly bySourceId = new IdIndex();
  private readonly whyNotIds = new Map<string, string>();
  /** The size (`recordChars`) of each record a row names that is larger than SMALL_RECORD_CHARS. */
  private readonly largeRecords = new Map<string, number>();

  private constructor(
    private readonly client: MatchingClient,
    private readonly target: ImportTarget,
    private readonly words: ImportWording,
    private readonly newRecords: boolean,
  ) {}

  static async find(
    client: MatchingClient,
    target: ImportTarget,
    identities: HashedCounts,
    referenced: Referenced,
    words: ImportWording,
    options: {
      /** Keep the ids of the missing records, to delete them. */
      keepMissing: boolean;
      newRecords: boolean;
      onProgress: (rows: number) => void;
    },
  ): Promise<TopicMatches> {
    const matches = new TopicMatches(client, target, words, options.newRecords);
    if (referenced.ids > 0 || referenced.readableIds > 0 || referenced.sourceIds > 0)
      await matches.list(identities, referenced, options.keepMissing, options.onProgress);
    return matches;
  }

  private async list(
    identities: HashedCounts,
    referenced: Referenced,
    keepMissing: boolean,
    onProgress: (rows: number) => void,
  ): Promise<void> {
    const { target, missing } = this;
    const mapper = new RecordMapper(buildFieldMap(target.schema));
    const listedIds = (this.listedIds = new HashedCounts());
    let seen = 0;
    for await (const record of this.client.records.listRecords({
      context__knowledge_unit_topic_id: target.revisionId,
    })) {
      listedIds.add(record._id);
      const matchedBefore = this.matched;
      const namedById = referenced.ids > 0 && identities.count(`_id ${record._id}`) > 0;
      if (namedById) this.matched++;
      if (referenced.readableIds > 0 || referenced.sourceIds > 0) {
        const readable = readableIdOf(mapper.map(record).record, target.rule, target.presentation);
        if (
          identities.count(`readable id ${readable}`) > 0 ||
          identities.count(readableFallback(readable)) > 0
        ) {
          this.byReadableId.add(readable, record._id);
          this.matched++;
        }
      }
      const sourceId = referenced.sourceIds > 0 ? sourceIdOfRecord(record) : undefined;
      const namedBySource = sourceId !== undefined && identities.count(sourceIdentity(sourceId)) > 0;
      if (namedBySource) {
        this.bySourceId.add(sourceId, record._id);
        this.matched++;
      } else if (sourceId !== undefined && !namedById) {
        // A record a row names by its `_id` is in the file, whatever source id the row gives.
        if (++missing.count <= MAX_NAMED) missing.named.push(`"${record.name}" (${sourceId})`);
        if (keepMissing) missing.toRemove.push({ id: record._id, sourceId });
      }
      if (this.matched > matchedBefore) {
        const chars = recordChars(record);
        if (chars > SMALL_RECORD_CHARS) this.largeRecords.set(record._id, chars);
      }
      if (++seen % 1000 === 0) onProgress(seen);
    }
  }

  /**
   * Consecutive rows in groups whose records are fetched together: at most FETCH_IDS records
   * and GROUP_CHARS of them a group (a row naming more, or one larger record, is a group alone).
   */
  groups(rows: readonly IdentifiedRow[]): RowGroup[] {
    const groups: RowGroup[] = [];
    let group: RowGroup = { rows: [], ids: [] };
    let named = new Set<string>();
    let chars = 0;
    for (const row of rows) {
      const ids = new Set(this.namedBy(row));
      let added = [...ids].filter((id) => !named.has(id));
      const full = group.ids.length + added.length > FETCH_IDS || chars + this.charsOf(added) > GROUP_CHARS;
      if (added.length > 0 && group.rows.length > 0 && full) {
        groups.push(group);
        group = { rows: [], ids: [] };
        named = new Set();
        chars = 0;
        added = [...ids];
      }
      group.rows.push(row);
      group.ids.push(...added);
      for (const id of added) named.add(id);
      chars += this.charsOf(added);
    }
    if (group.rows.length > 0) groups.push(group);
    return groups;
  }

  /**
   * The records a group's rows name, fetched (a request per FETCH_IDS of them), as the rows' plans
   * look them up. A record deleted since the topic was listed is none.
   */
  async recordsFor(group: RowGroup): Promise<ExistingRecords> {
    const fetched = new Map<string, ServiceRecord>();
    const { ids } = group;
    const wanted = new Set(ids);
    for (let start = 0; start < ids.length; start += FETCH_IDS)
      for await (const record of this.client.records.listRecords({
        id__in: ids.slice(start, start + FETCH_IDS).join(','),
      }))
        if (wanted.has(record._id)) fetched.set(record._id, record);
    const recordOf = (id: string | undefined) => (id === undefined ? undefined : fetched.get(id));
    return {
      byId: (id) => recordOf(id),
      byReadableId: (readableId) => recordOf(this.byReadableId.last(readableId)),
      bySourceId: (sourceId) =>
        this.bySourceId.all(sourceId).flatMap((id) => {
          const record = fetched.get(id);
          return record ? [record] : [];
        }),
      whyNot: (id) => this.whyNot(id),
    };
  }

  /** The ids of the topic's records a row names (by `_id`, source id, readable id). */
  private namedBy({ row, readableId, sourceId }: IdentifiedRow): string[] {
    const ids: string[] = [];
    const id = row.facts.id;
    if (id !== undefined && !this.newRecords && this.listedIds && this.listedIds.count(id) > 0) ids.push(id);
    if (sourceId !== undefined) ids.push(...this.bySourceId.all(sourceId));
    const byReadable = readableId === undefined ? undefined : this.byReadableId.last(readableId);
    if (byReadable !== undefined) ids.push(byReadable);
    return ids;
  }

  /** The size of these records, as a group counts it. */
  private charsOf(ids: readonly string[]): number {
    let chars = 0;
    for (const id of ids) chars += this.largeRecords.get(id) ?? SMALL_RECORD_CHARS;
    return chars;
  }

  /** Looks up why an `_id` is no record of the topic, as rows name them (a few; then a general word). */
  async explain(id: string): Promise<void> {
    if (this.listedIds?.count(id) || this.whyNotIds.has(id) || this.whyNotIds.size >= MAX_LOOKUPS) return;
    this.whyNotIds.set(id, await whyNotInTopic(this.client, this.target, id, this.words));
  }

  private whyNot(id: string): string {
    return (
      this.whyNotIds.get(id) ??
      `no record of "${this.target.name}" has _id ${id}: clear its _id to create it anew, or copy every row in ${this.words.newRecords}.`
    );
  }
}

/**
 * Record ids by a key, by hash (ClaimTable): the first id of each key in flat arrays, the others of
 * a key named by more than one record (rare: ambiguous ids) in a map.
 */
class IdIndex {
  private readonly first = new ClaimTable();
  private readonly more = new Map<string, string[]>();

  add(key: string, id: string): void {
    const before = this.first.claim(key, id);
    if (before === undefined) return;
    const ids = this.more.get(key) ?? [before];
    ids.push(id);
    this.more.set(key, ids);
  }

  /** Every id of `key`, in the order added. */
  all(key: string): string[] {
    const many = this.more.get(key);
    if (many) return many;
    const one = this.first.find(key);
    return one === undefined ? [] : [one];
  }

  /** The id of `key` added last. */
  last(key: string): string | undefined {
    const many = this.more.get(key);
    return many ? many[many.length - 1] : this.first.find(key);
  }
}

async function whyNotInTopic(
  client: MatchingClient,
  target: ImportTarget,
  id: string,
  words: ImportWording,
): Promise<string> {
  if (!/^[0-9a-f]{24}$/.test(id))
    return `"${id}" is no record id (24 hexadecimal characters): clear the _id cell to create the record.`;
  try {
    const record = await client.records.getRecord(id);
    const revision = record.context?.knowledge_unit_topic_id;
    return `record ${id} belongs to another topic (revision ${revision}), not "${target.name}": import it into its own topic, or copy the rows in as new records ${words.newRecords}.`;
  } catch (error) {
    if (error instanceof NotFoundError)
      return `no record has _id ${id} in your tenant (deleted, or exported from another service): clear its _id to create it anew, or copy the rows in ${words.newRecords}.`;
    throw error;
  }
}

/**
 * About the characters of a record's JSON (its name and values: strings by their length, anything
 * else a few): what holding it costs, without serializing it.
 */
function recordChars(record: ServiceRecord): number {
  let chars = record.name.length;
  const pending: unknown[] = [record.data, record.form, record.context];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === 'string') chars += value.length + 2;
    else if (Array.isArray(value)) {
      chars += 2 + value.length;
      for (const item of value) pending.push(item);
    } else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        chars += key.length + 4;
        pending.push(item);
      }
    } else chars += 8;
  }
  return chars;
}
