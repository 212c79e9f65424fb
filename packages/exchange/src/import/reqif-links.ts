import { readReqif, type ReqifHandlers, type ReqifReadOptions } from './reqif-events.js';
import { specHierarchyHandlers, type SpecHierarchy } from './reqif-hierarchy.js';
import {
  outlinesOfHierarchies,
  type OutlineImportClient,
  type OutlineImportReport,
} from './reqif-outline.js';
import { recordsByIdentity } from './reqif-records.js';
import {
  specRelationHandlers,
  tracesOfRelations,
  type RelationImportClient,
  type RelationImportOptions,
  type RelationImportReport,
  type SpecRelation,
} from './reqif-relations.js';

/** A ReqIF file's links between its spec objects: a SPEC-RELATION, or a SPECIFICATION's hierarchy. */
export type ReqifLink = { relation: SpecRelation } | { specification: SpecHierarchy };

/**
 * The SPEC-RELATIONs and the SPECIFICATIONs of a ReqIF 1.2 file, in file order, in one read (each
 * as readSpecRelations and readSpecHierarchies read it, under the same limits).
 */
export function readReqifLinks(file: string, options: ReqifReadOptions = {}): AsyncGenerator<ReqifLink> {
  const relations = specRelationHandlers(file);
  const hierarchies = specHierarchyHandlers(file);
  return readReqif<ReqifLink>(file, options, (reader): ReqifHandlers<ReqifLink> => {
    const relation = relations(reader);
    const hierarchy = hierarchies(reader);
    return {
      open: (name, tag, parent) => {
        relation.open(name, tag, parent);
        hierarchy.open(name, tag, parent);
      },
      close: (name, text) => {
        // A SPEC-RELATION and a SPECIFICATION never end at the same element.
        const found = relation.close(name, text);
        if (found) return { relation: found };
        const specification = hierarchy.close(name, text);
        return specification && { specification };
      },
    };
  });
}

export type LinkImportClient = RelationImportClient & OutlineImportClient;

export interface ReqifLinksReport {
  relations: RelationImportReport;
  outline: OutlineImportReport;
}

/**
 * A ReqIF import's links, after its spec objects: the SPEC-RELATIONs as traces
 * (importReqifRelations) and the SPECIFICATIONs' hierarchies as the topics' outlines
 * (importReqifOutline), the file read once and the topics' records listed once for both. What the
 * file names is held until the end of the read (its relations and hierarchies, bounded by the
 * reader's limits), then written: traces first, then outlines.
 */
export async function importReqifLinks(
  client: LinkImportClient,
  file: string,
  options: RelationImportOptions,
): Promise<ReqifLinksReport> {
  const records = await recordsByIdentity(client, options.revisionIds);
  const relations: SpecRelation[] = [];
  const specifications: SpecHierarchy[] = [];
  for await (const link of readReqifLinks(file, options))
    if ('relation' in link) relations.push(link.relation);
    else specifications.push(link.specification);
  return {
    relations: await tracesOfRelations(client, relations, records, options),
    outline: await outlinesOfHierarchies(client, specifications, records, options),
  };
}
