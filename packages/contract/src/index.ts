export * from './common.js';
export * from './errors.js';
export * from './form.js';
export * from './knowledge-topic.js';
export * from './record.js';
export * from './trace.js';
export * from './auth.js';
export * from './history.js';
