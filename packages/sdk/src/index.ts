export * from './contract/index.js';
// The exporter's part (client, mapping, export, sync), also loadable alone as `@rxs/sdk/exporter`.
export * from './exporter.js';
export * from './trace-report/coverage.js';
export * from './trace-report/coverage-types.js';
export * from './trace-report/html.js';
export * from './trace-report/xlsx.js';
export * from './validation/index.js';
export * from './import/index.js';
