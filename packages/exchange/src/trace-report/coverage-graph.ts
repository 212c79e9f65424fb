import { IntColumn } from '../export/int-column.js';
import type { CoverageReport, CoverageRule, CoverageTopic, RuleCoverage } from './coverage-types.js';

/**
 * What a traceability report needs of an export, as numbers: each record a number with its
 * readable id and its topic, each trace between two records a row of three integers (the two
 * record numbers; the link type and whether it is suspect). About 60 bytes per record besides its
 * ids and 12 per trace; strings are made again only for what the report shows.
 *
 * A record belongs to one topic revision (the one it was last listed in); a revision listed again
 * starts afresh, as the export lists its records again.
 */
export class CoverageGraph {
  readonly topics: CoverageTopic[] = [];
  /** Per revision id, its slot: the records of its latest listing. */
  private readonly slotOfRevision = new Map<string, number>();
  /** Per slot, its record numbers in export order. */
  private readonly members: IntColumn[] = [];
  private readonly numbers = new Map<string, number>();
  private readonly readableIds: string[] = [];
  /** Per record number, its slot (-1: none, an end of a trace only) and its place in the slot. */
  private readonly slots = new IntColumn();
  private readonly places = new IntColumn();
  private readonly linkSources = new IntColumn();
  private readonly linkTargets = new IntColumn();
  /** Per link: the index of its link type's name plus 1 (0: none), times 2, plus 1 when suspect. */
  private readonly linkKinds = new IntColumn();
  private readonly linkTypeNames: string[] = [];

  addTopic(topic: CoverageTopic): void {
    this.topics.push(topic);
    this.slotOfRevision.set(topic.revisionId, this.members.push(new IntColumn()) - 1);
  }

  /** A record of a topic given before; one of another revision is not part of the report. */
  addRecord(revisionId: string, id: string, readableId: string): void {
    const slot = this.slotOfRevision.get(revisionId);
    if (slot === undefined) return;
    const record = this.numberOf(id);
    this.readableIds[record] = readableId;
    if (this.slots.at(record) === slot) return;
    const members = this.members[slot]!;
    this.slots.set(record, slot);
    this.places.set(record, members.length);
    members.push(record);
  }

  /** The topic a record was listed under, if any. */
  topicOf(id: string): CoverageTopic | undefined {
    const record = this.numbers.get(id);
    const slot = record === undefined ? -1 : this.slots.at(record);
    return slot < 0 ? undefined : this.topics[slot];
  }

  addLink(source: string, target: string, linkType: string | undefined, suspect: boolean): void {
    this.linkSources.push(this.numberOf(source));
    this.linkTargets.push(this.numberOf(target));
    let type = 0;
    if (linkType !== undefined) {
      type = this.linkTypeNames.indexOf(linkType) + 1;
      if (type === 0) type = this.linkTypeNames.push(linkType);
    }
    this.linkKinds.push(type * 2 + (suspect ? 1 : 0));
  }

  /** Each rule's coverage, orphans and counted links. */
  report(rules: readonly CoverageRule[]): CoverageReport {
    return { topics: [...this.topics], rules: rules.map((rule) => this.ruleCoverage(rule)) };
  }

  private numberOf(id: string): number {
    let record = this.numbers.get(id);
    if (record === undefined) {
      record = this.slots.length;
      this.numbers.set(id, record);
      this.slots.push(-1);
      this.places.push(-1);
    }
    return record;
  }

  private ruleCoverage(rule: CoverageRule): RuleCoverage {
    const source = this.side(rule.source.revisionId);
    const target = this.side(rule.target.revisionId);
    const sourceLinked = new Uint8Array(source.size);
    const targetLinked = new Uint8Array(target.size);
    // A counted pair as one number: place in the source topic, then in the target topic.
    const pairs: number[] = [];
    const suspectPairs: number[] = [];
    const named = rule.linkType === undefined ? -1 : this.linkTypeNames.indexOf(rule.linkType) + 1;
    const count = (s: number, t: number, suspect: boolean) => {
      const from = this.places.at(s);
      const to = this.places.at(t);
      sourceLinked[from] = 1;
      targetLinked[to] = 1;
      const pair = from * target.size + to;
      pairs.push(pair);
      if (suspect) suspectPairs.push(pair);
    };
    for (let i = 0; i < this.linkKinds.length; i++) {
      const s = this.linkSources.at(i);
      const t = this.linkTargets.at(i);
      const kind = this.linkKinds.at(i);
      const suspect = (kind & 1) === 1;
      if (named >= 0) {
        if (kind >> 1 === named && named > 0 && source.has(s) && target.has(t)) count(s, t, suspect);
      } else if (source.has(s) && target.has(t)) count(s, t, suspect);
      else if (source.has(t) && target.has(s)) count(t, s, suspect);
    }
    const uncovered = source.readableIds.filter((_, place) => sourceLinked[place] === 0);
    const orphans = target.readableIds.filter((_, place) => targetLinked[place] === 0);
    const total = source.size;
    const covered = total - uncovered.length;
    return {
      rule,
      total,
      covered,
      percent: total === 0 ? 100 : (covered / total) * 100,
      uncovered,
      orphans,
      links: readablePairs(pairs, source, target),
      suspect: readablePairs(suspectPairs, source, target),
    };
  }

  /** A rule's side: a topic's records as listed, and which record numbers are among them. */
  private side(revisionId: string): Side {
    const slot = this.slotOfRevision.get(revisionId);
    const members = slot === undefined ? undefined : this.members[slot]!;
    const readableIds: string[] = [];
    for (let place = 0; place < (members?.length ?? 0); place++)
      readableIds.push(this.readableIds[members!.at(place)]!);
    return {
      size: readableIds.length,
      readableIds,
      has: (record) => slot !== undefined && this.slots.at(record) === slot,
    };
  }
}

interface Side {
  size: number;
  /** By place in the topic. */
  readableIds: string[];
  has(record: number): boolean;
}

/**
 * Pairs (place in the source topic × target size + place in the target topic) once each, as
 * [source readable id, target readable id], sorted by those strings.
 */
function readablePairs(pairs: readonly number[], source: Side, target: Side): [string, string][] {
  const unique = Float64Array.from(pairs).sort();
  const [sourceRank, targetRank] = [ranks(source.readableIds), ranks(target.readableIds)];
  const kept: number[] = [];
  for (let i = 0; i < unique.length; i++) if (i === 0 || unique[i] !== unique[i - 1]) kept.push(unique[i]!);
  const from = (pair: number) => Math.floor(pair / target.size);
  const to = (pair: number) => pair % target.size;
  kept.sort((a, b) => sourceRank[from(a)]! - sourceRank[from(b)]! || targetRank[to(a)]! - targetRank[to(b)]!);
  return kept.map((pair) => [source.readableIds[from(pair)]!, target.readableIds[to(pair)]!]);
}

/** Each string's rank among them in string order, equal strings sharing one. */
function ranks(strings: readonly string[]): Int32Array {
  const order = Array.from(strings.keys()).sort((a, b) =>
    strings[a]! < strings[b]! ? -1 : strings[a]! > strings[b]! ? 1 : 0,
  );
  const rank = new Int32Array(strings.length);
  for (let i = 1; i < order.length; i++)
    rank[order[i]!] = rank[order[i - 1]!]! + (strings[order[i]!] === strings[order[i - 1]!] ? 0 : 1);
  return rank;
}
