import { RELATION_TYPES, type RelationType } from '@rxs/contract';
import type { RecordsClient, TracerClient } from '@rxs/client';
import {
  Declarations,
  readReqif,
  type ReqifHandlers,
  type ReqifReader,
  type ReqifReadOptions,
} from './reqif-events.js';
import type { RecordIdentities } from './reqif-records.js';
import { roleRelationTypeOf } from '../reqif/relation-types.js';

/** A SPEC-RELATION of a ReqIF file: its ends by spec object IDENTIFIER, its type by LONG-NAME. */
export interface SpecRelation {
  identifier: string;
  source: string;
  target: string;
  /** The SPEC-RELATION-TYPE's LONG-NAME, else its IDENTIFIER; '' when the relation names none. */
  type: string;
  /** The relation type an rxs export's role type names by its IDENTIFIER (reqif/relation-types.ts). */
  relationType?: string;
}

/** Which file of an archive to read, and under which limits. */
export type SpecRelationReadOptions = ReqifReadOptions;

/** How a SPEC-RELATION-TYPE becomes a trace's relation type when no mapping names it. */
export const DEFAULT_RELATION_TYPE: RelationType = 'is_related';

/** Relations a note names one by one. */
const MAX_NAMED = 5;

/** What reads a file's SPEC-RELATIONs, for `readReqif` (alone, or beside other readers: reqif-links.ts). */
export function specRelationHandlers(file: string): (reader: ReqifReader) => ReqifHandlers<SpecRelation> {
  return ({ limits }) => {
    const typeNames = new Map<string, string>();
    let relation: (Partial<SpecRelation> & { identifier: string }) | undefined;
    /** The end (SOURCE or TARGET) of the relation being read. */
    let end: 'source' | 'target' | undefined;
    const declarations = new Declarations(limits, file, 'SPEC-RELATION-TYPEs', 'the relations');
    return {
      open: (name, tag, parent) => {
        const attribute = (key: string) => tag.attributes[key] as string | undefined;
        if (name === 'SPEC-RELATION-TYPE' && parent === 'SPEC-TYPES') {
          const identifier = attribute('IDENTIFIER') ?? '';
          const longName = attribute('LONG-NAME') || identifier;
          declarations.add(identifier, longName);
          typeNames.set(identifier, longName);
        } else if (name === 'SPEC-RELATION' && parent === 'SPEC-RELATIONS')
          relation = { identifier: attribute('IDENTIFIER') ?? '' };
        else if (relation && (name === 'SOURCE' || name === 'TARGET') && parent === 'SPEC-RELATION')
          end = name === 'SOURCE' ? 'source' : 'target';
      },
      close: (name, text) => {
        if (!relation) return undefined;
        if (name === 'SPEC-RELATION-TYPE-REF') relation.type = text.trim();
        else if (name === 'SPEC-OBJECT-REF' && end) relation[end] = text.trim();
        else if (name === 'SOURCE' || name === 'TARGET') end = undefined;
        else if (name === 'SPEC-RELATION') {
          const type = relation.type ?? '';
          // A role's relation runs from its `from` record: its trace may run the other way.
          const role = roleRelationTypeOf(type);
          const [source, target] = [relation.source ?? '', relation.target ?? ''];
          const found = {
            identifier: relation.identifier,
            ...(role?.reversed ? { source: target, target: source } : { source, target }),
            type: typeNames.get(type) ?? type,
            ...(role && { relationType: role.relationType }),
          };
          relation = undefined;
          return found;
        }
        return undefined;
      },
    };
  };
}

/**
 * The SPEC-RELATIONs of a ReqIF 1.2 file, streamed in file order, under the limits the spec
 * object reader keeps (ReqifReader): the relation types a file declares count against
 * maxDefinitions and maxDefinitionBytes.
 */
export function readSpecRelations(
  file: string,
  options: SpecRelationReadOptions = {},
): AsyncGenerator<SpecRelation> {
  return readReqif(file, options, specRelationHandlers(file));
}

export interface RelationImportClient {
  records: Pick<RecordsClient, 'listRecords'>;
  tracer: Pick<TracerClient, 'createTrace' | 'listTracesFor'>;
}

export interface RelationImportOptions extends SpecRelationReadOptions {
  /** The KT revisions the file's spec objects were imported into: their records are the ends. */
  revisionIds: readonly string[];
  /**
   * The relation type of the traces of a SPEC-RELATION-TYPE, by its LONG-NAME. A type that is not
   * mapped is taken as it is when it names a relation type (an rxs export's), else `is_related`.
   */
  relationTypes?: ReadonlyMap<string, RelationType>;
  /** Say what would be created; create nothing. */
  dryRun?: boolean;
}

export interface RelationImportReport {
  /** SPEC-RELATIONs in the file. */
  relations: number;
  /** Traces created (in a dry run: that would be). */
  created: number;
  /** Relations whose trace exists already (same source, target and relation type). */
  existing: number;
  /** Relations with an end that is not an imported record (its type not imported, or missing). */
  skipped: number;
  notes: string[];
}

const traceKey = (source: string, target: string, type: string) => `${source}\u0000${target}\u0000${type}`;

/** The relation type a SPEC-RELATION-TYPE's traces get (`named`: the one its IDENTIFIER names). */
export function relationTypeOf(
  type: string,
  mapping: ReadonlyMap<string, RelationType> = new Map(),
  named?: string,
): RelationType {
  const mapped = mapping.get(type);
  if (mapped) return mapped;
  const relationType = named ?? type;
  return (RELATION_TYPES as readonly string[]).includes(relationType)
    ? (relationType as RelationType)
    : DEFAULT_RELATION_TYPE;
}

/**
 * The SPEC-RELATIONs between the records of a file's import as traces: the records are found by
 * their source identity (`context.global_element_id`, the spec object's IDENTIFIER; an rxs
 * export's `R-<_id>` names the record of that _id), listed once per topic. A trace that exists
 * already is not made again, so importing the file again creates only the new relations.
 */
export async function tracesOfRelations(
  client: Pick<RelationImportClient, 'tracer'>,
  relations: AsyncIterable<SpecRelation> | Iterable<SpecRelation>,
  records: RecordIdentities,
  options: Pick<RelationImportOptions, 'relationTypes' | 'dryRun'>,
): Promise<RelationImportReport> {
  const report: RelationImportReport = { relations: 0, created: 0, existing: 0, skipped: 0, notes: [] };
  const skipped: string[] = [];
  const wanted: { source: string; target: string; type: RelationType; identifier: string }[] = [];
  for await (const relation of relations) {
    report.relations++;
    const source = records.get(relation.source)?.recordId;
    const target = records.get(relation.target)?.recordId;
    if (!source || !target) {
      report.skipped++;
      if (skipped.length < MAX_NAMED) {
        const missing = [
          !source && `source ${relation.source || '(none)'}`,
          !target && `target ${relation.target || '(none)'}`,
        ]
          .filter(Boolean)
          .join(' and ');
        skipped.push(`${relation.identifier} (${missing})`);
      }
      continue;
    }
    wanted.push({
      source,
      target,
      type: relationTypeOf(relation.type, options.relationTypes, relation.relationType),
      identifier: relation.identifier,
    });
  }
  if (report.skipped > 0)
    report.notes.push(
      `${report.skipped} SPEC-RELATION${report.skipped === 1 ? '' : 's'} not made traces: an end is not an imported record (a spec object type not imported, or an object the file lacks): ${skipped.join(', ')}${report.skipped > MAX_NAMED ? ` and ${report.skipped - MAX_NAMED} more` : ''}.`,
    );
  if (wanted.length === 0) return report;
  const existing = new Set<string>();
  const ends = [...new Set(wanted.map((trace) => trace.source))].map((node_id) => ({
    node_id,
    node_type: 'Record' as const,
  }));
  await client.tracer.listTracesFor(ends, {
    onEdges: (edges) => {
      for (const edge of edges)
        for (const type of edge.relation_type) existing.add(traceKey(edge.source, edge.target, type));
    },
  });
  for (const trace of wanted) {
    const key = traceKey(trace.source, trace.target, trace.type);
    if (existing.has(key)) {
      report.existing++;
      continue;
    }
    existing.add(key);
    if (!options.dryRun)
      await client.tracer.createTrace({
        source: { node_id: trace.source, node_type: 'Record' },
        target: { node_id: trace.target, node_type: 'Record' },
        relation_type: trace.type,
      });
    report.created++;
  }
  return report;
}
