/**
 * The exporter's part of the sdk (`@rxs/sdk/exporter`): the client, mapping, export and sync, with
 * the contract's types but not its schemas (TypeBox), nor import, validation and trace reports.
 * What `rxs export` and `rxs sync` load, so that a poll starts in a fraction of the time the whole
 * sdk takes (docs/benchmarks.md, section 3: the unchanged poll).
 */
export type * from './contract/index.js';
export * from './contract/plain.js';
export * from './mapping/index.js';
export * from './mapping/errors.js';
export * from './export/model.js';
export * from './export/errors.js';
export * from './export/procedure.js';
export * from './export/identity.js';
export * from './export/mapping-file.js';
export * from './export/limits.js';
export * from './export/writers/index.js';
export * from './sync/index.js';
export * from './files/index.js';
export * from './event-loop.js';
export * from './client/index.js';
