/**
 * The browser API (the web app's JSON routes under `/api/...`): TypeBox schemas of its bodies, query
 * strings and answers, with their types. The server validates requests with the schemas; the web
 * app imports the types only (`import type`), so no schema code is bundled for the browser.
 */
export * from './common.js';
export * from './session.js';
export * from './accounts.js';
export * from './topics.js';
export * from './records.js';
export * from './history.js';
export * from './baselines.js';
export * from './traces.js';
export * from './export.js';
export * from './import.js';
export * from './traceability.js';
export * from './trace-model.js';
export * from './document.js';
