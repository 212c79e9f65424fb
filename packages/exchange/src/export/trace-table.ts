import type { RelationType, TraceEdge, TraceRole } from '@rxs/contract';
import { IntColumn } from './int-column.js';
import type { ExportedTrace, LinkType, TraceEnd } from './model.js';
import type { RecordEnds } from './record-ends.js';

/**
 * An export's traces as they arrive, batch by batch, a row of numbers each: the ends as record
 * numbers (RecordEnds), the relation types as an index into the lists met, the batch and whether
 * it is suspect; only the trace's id stays a string. Each edge is dropped once its row is taken,
 * so memory holds about 60 bytes per edge listed, not the edge (several hundred).
 */
export class TraceTable {
  private readonly ids: string[] = [];
  private readonly sources = new IntColumn();
  private readonly targets = new IntColumn();
  private readonly batches = new IntColumn();
  /** Index of the relation types' list, times 2, plus 1 when suspect. */
  private readonly kinds = new IntColumn();
  private readonly relationLists: RelationType[][] = [];
  private readonly relationIndex = new Map<string, number>();
  /** Ends that are no exported record (another topic's record, a topic, ...), numbered -1, -2, ... */
  private readonly others: TraceEnd[] = [];

  constructor(private readonly ends: RecordEnds) {}

  /** The edges of batch number `batch` (the listing's order: batches in order, then edges). */
  add(edges: readonly TraceEdge[], batch: number): void {
    for (const edge of edges) {
      this.ids.push(edge._id);
      this.sources.push(this.endOf(edge.source, edge.source_node?.type ?? 'Record'));
      this.targets.push(this.endOf(edge.target, edge.target_node?.type ?? 'Record'));
      this.batches.push(batch);
      this.kinds.push(this.relationsOf(edge.relation_type) * 2 + (edge.outdated === true ? 1 : 0));
    }
  }

  /**
   * Each trace once, sorted by id, as the listing's order first meets it (a trace is listed with
   * both its ends, often in two batches), and the named link types the traces use, in the order
   * first met. `linkTypeOf` names the link between two topics, by number; `roleOf` the trace
   * model's role of a trace between records of two topics with these relation types.
   */
  traces(
    linkTypeOf: (source: number, target: number) => LinkType | undefined,
    roleOf?: (
      source: number,
      target: number,
      relationTypes: readonly RelationType[],
    ) => TraceRole | undefined,
  ): {
    traces: ExportedTrace[];
    linkTypes: LinkType[];
  } {
    const { ids, sources, targets, batches, kinds } = this;
    const named = new Map<number, LinkType | undefined>();
    // By pair of topics and list of relation types: a model has few roles, an export few pairs.
    const roles = new Map<string, TraceRole | undefined>();
    const roleAt = (row: number): TraceRole | undefined => {
      const s = sources.at(row);
      const t = targets.at(row);
      if (!roleOf || s < 0 || t < 0) return undefined;
      const [from, to, list] = [this.ends.topicOf(s), this.ends.topicOf(t), kinds.at(row) >> 1];
      const key = `${from}/${to}/${list}`;
      if (!roles.has(key)) roles.set(key, roleOf(from, to, this.relationLists[list]!));
      return roles.get(key);
    };
    const linkTypeAt = (row: number): LinkType | undefined => {
      const s = sources.at(row);
      const t = targets.at(row);
      if (s < 0 || t < 0) return undefined;
      const [from, to] = [this.ends.topicOf(s), this.ends.topicOf(t)];
      const pair = from * 0x100000 + to;
      if (!named.has(pair)) named.set(pair, linkTypeOf(from, to));
      return named.get(pair);
    };
    const met = (a: number, b: number) => batches.at(a) - batches.at(b) || a - b;
    const order = new Uint32Array(ids.length).map((_, row) => row);
    order.sort((a, b) => {
      const x = ids[a]!;
      const y = ids[b]!;
      return x < y ? -1 : x > y ? 1 : met(a, b);
    });
    const traces: ExportedTrace[] = [];
    const made = new Array<TraceEnd | undefined>(this.ends.ids.length);
    // Per link type's name, as a Map filled in the listing's order would hold it: the place of the
    // first trace met with it, the link type of the last.
    const used = new Map<string, { first: number; last: number; type: LinkType }>();
    for (let i = 0; i < order.length; i++) {
      const row = order[i]!;
      if (i > 0 && ids[order[i - 1]!] === ids[row]) continue;
      const linkType = linkTypeAt(row);
      if (linkType) {
        const seen = used.get(linkType.name);
        if (!seen) used.set(linkType.name, { first: row, last: row, type: linkType });
        else {
          if (met(row, seen.first) < 0) seen.first = row;
          if (met(row, seen.last) > 0) [seen.last, seen.type] = [row, linkType];
        }
      }
      const kind = kinds.at(row);
      const role = roleAt(row);
      traces.push({
        id: ids[row]!,
        source: this.end(sources.at(row), made),
        target: this.end(targets.at(row), made),
        relationTypes: this.relationLists[kind >> 1]!,
        ...(linkType && { linkType: linkType.name }),
        ...(role && { role: role.forward_name, roleId: role.id }),
        suspect: (kind & 1) === 1,
      });
    }
    const linkTypes = [...used.values()].sort((a, b) => met(a.first, b.first)).map((u) => u.type);
    return { traces, linkTypes };
  }

  private endOf(id: string, type: TraceEnd['type']): number {
    const record = type === 'Record' ? this.ends.numberOf(id) : undefined;
    if (record !== undefined) return record;
    this.others.push({ id, type });
    return -this.others.length;
  }

  /** A record's end is one object for all its traces (as a list of relation types is): read-only. */
  private end(n: number, made: (TraceEnd | undefined)[]): TraceEnd {
    if (n < 0) return this.others[-1 - n]!;
    return (made[n] ??= {
      id: this.ends.ids[n]!,
      type: 'Record',
      readableId: this.ends.readableIdOf(n),
    });
  }

  private relationsOf(types: readonly RelationType[]): number {
    const list = [...types];
    const key = list.join('\u0000');
    let index = this.relationIndex.get(key);
    if (index === undefined) {
      index = this.relationLists.push(list) - 1;
      this.relationIndex.set(key, index);
    }
    return index;
  }
}
