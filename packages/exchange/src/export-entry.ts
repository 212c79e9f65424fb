/**
 * The export part of the exchange (`@rxs/exchange/export`): mapping, the export procedure, its
 * writers and atomic files, without import, validation and trace reports, so that `rxs export` and
 * `rxs sync` load only what an export needs (docs/benchmarks.md, section 3: the unchanged poll).
 */
export * from './mapping/index.js';
export * from './mapping/errors.js';
export * from './export/model.js';
export * from './export/errors.js';
export * from './export/procedure.js';
export * from './export/identity.js';
export * from './export/mapping-file.js';
export * from './export/limits.js';
export * from './export/client-source.js';
export * from './export/trace-roles-as-of.js';
export * from './export/writers/index.js';
export * from './files/index.js';
export * from './event-loop.js';
// The pieces `rxs sync` writes its outputs with: stream helpers and the writers' row texts.
export { endOutput, whenDrained, writeAndWait, writeChunk } from './export/writers/output.js';
export { plainHead, plainRow, tableColumns } from './export/writers/csv.js';
export { csvText } from './export/writers/csv-text.js';
export { recordLine } from './export/writers/jsonl.js';
