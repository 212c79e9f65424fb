import { fileURLToPath } from 'node:url';

const file = (pkg: string, path: string) =>
  fileURLToPath(new URL(`./packages/${pkg}/src/${path}`, import.meta.url));

/** Tests run against the TypeScript sources; the packages' `exports` point at their builds. */
export const sourceAliases = [
  ['@rxs/contract', 'contract', 'index.ts'],
  ['@rxs/contract/plain', 'contract', 'plain.ts'],
  ['@rxs/contract/validation', 'contract', 'validation/index.ts'],
  ['@rxs/contract/validation/checks', 'contract', 'validation/checks.ts'],
  ['@rxs/client', 'client', 'index.ts'],
  ['@rxs/exchange', 'exchange', 'index.ts'],
  ['@rxs/exchange/export', 'exchange', 'export-entry.ts'],
  ['@rxs/exchange/import', 'exchange', 'import/rows.ts'],
  ['@rxs/sync', 'sync', 'index.ts'],
  ['@rxs/sdk', 'sdk', 'index.ts'],
  ['@rxs/sdk/exporter', 'sdk', 'exporter.ts'],
  ['@rxs/web-api', 'web-api', 'index.ts'],
  ['@rxs/server', 'server', 'index.ts'],
  ['@rxs/server/config', 'server', 'config.ts'],
].map(([name, pkg, path]) => ({
  find: new RegExp(`^${name!.replace('/', '\\/')}$`),
  replacement: file(pkg!, path!),
}));
