export * from './contract/index.js';
export * from './mapping/index.js';
export * from './export/model.js';
export * from './export/procedure.js';
export * from './export/writers/index.js';
export * from './sync/index.js';
export * from './client/index.js';
