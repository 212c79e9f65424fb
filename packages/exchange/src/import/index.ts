export * from './rows.js';
export {
  readSpecRelations,
  relationTypeOf,
  DEFAULT_RELATION_TYPE,
  type RelationImportClient,
  type RelationImportOptions,
  type RelationImportReport,
  type SpecRelation,
} from './reqif-relations.js';
export {
  type OutlineImportClient,
  type OutlineImportOptions,
  type OutlineImportReport,
} from './reqif-outline.js';
export { readSpecHierarchies, type SpecHierarchy, type SpecHierarchyEntry } from './reqif-hierarchy.js';
export {
  importReqifLinks,
  readReqifLinks,
  type LinkImportClient,
  type ReqifLink,
  type ReqifLinksReport,
} from './reqif-links.js';
export type { ReqifReadOptions } from './reqif-events.js';
