/**
 * The servers under test, each its own process: RXS (`rxs serve` on a generated database), the
 * transfer-limit server (the same listing bytes from memory) and json-server 0.17 (on a db.json
 * holding the same records, or in memory from a .cjs module).
 */
import { createReadStream, createWriteStream, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { answers, freePort, startProcess } from './processes.mjs';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
// The executable `rxs` users run (its shebang sets Node's flags), spawned directly, not via `node`.
export const RXS_BIN = join(ROOT, 'packages/cli/bin/rxs.js');
const JSON_SERVER_BIN = join(ROOT, 'node_modules/json-server/lib/cli/bin.js');
const LIMIT_SERVER = join(ROOT, 'bench/tools/limit-server.mjs');

/**
 * `rxs serve` on `dataDir` (its rxs.db), on a free port. Logs at `warn`: per-request info logging
 * is an operator's choice, and json-server runs with --quiet too. `bin`: another build's `rxs`
 * (the release before history, for the side-by-side write benchmark); `extraArgs`: more flags
 * (`--listing-cache-mb 0`: every listing built from the database). The request rates are off
 * (environment, which older builds ignore): a benchmark drives one key at full speed on purpose.
 */
export async function startRxs({ dataDir, apiKey, logFile, bin = RXS_BIN, extraArgs = [] }) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const server = await startProcess({
    name: 'rxs serve',
    command: process.execPath,
    args: [bin, 'serve', '--data-dir', dataDir, '--port', String(port), '--log-level', 'warn', ...extraArgs],
    env: { RXS_RATE_LIMIT: '0', RXS_TENANT_RATE_LIMIT: '0' },
    logFile,
    ready: () => answers(`${url}/healthz`),
  });
  // The first authenticated request writes last_used_at; do it now, not during a measurement.
  await answers(`${url}/kt/?limit=1`, { 'x-api-key': apiKey });
  return { ...server, url };
}

export async function startLimitServer({ file, logFile }) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const server = await startProcess({
    name: 'transfer-limit server',
    command: process.execPath,
    args: [LIMIT_SERVER, file, String(port)],
    logFile,
    ready: () => answers(`${url}/`),
  });
  return { ...server, url };
}

/**
 * Writes json-server's database from the RXS listing without parsing it: `{"records": <listing>}`.
 * Also a .cjs module that loads it into json-server's in-memory mode (no file writes on POST).
 */
export async function writeJsonServerDb(listingFile, dir) {
  const dbFile = join(dir, 'db.json');
  const out = createWriteStream(dbFile);
  out.write('{"records":');
  for await (const chunk of createReadStream(listingFile)) {
    if (!out.write(chunk)) await once(out, 'drain');
  }
  out.end('}\n');
  await once(out, 'finish');
  writeFileSync(join(dir, 'package.json'), '{"type": "commonjs"}\n');
  writeFileSync(
    join(dir, 'db-memory.cjs'),
    "// json-server's in-memory mode: the same records, but POSTs are not written to disk.\n" +
      "module.exports = () => JSON.parse(require('fs').readFileSync(require('path').join(__dirname, 'db.json'), 'utf8'));\n",
  );
  return { dbFile, memoryModule: join(dir, 'db-memory.cjs') };
}

/**
 * json-server 0.17 with `--id _id --quiet` on `source` (db.json: file mode, every POST rewrites the
 * file; db-memory.cjs: memory mode). Loading a large file takes a while, hence the long timeout.
 */
export async function startJsonServer({ source, dir, logFile }) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const server = await startProcess({
    name: `json-server (${source.endsWith('.json') ? 'file' : 'memory'})`,
    command: process.execPath,
    args: [
      '--max-old-space-size=8192',
      JSON_SERVER_BIN,
      source,
      '--port',
      String(port),
      '--host',
      '127.0.0.1',
      '--id',
      '_id',
      '--quiet',
      '--snapshots',
      dir,
    ],
    cwd: dir,
    logFile,
    ready: () => answers(`${url}/`),
    timeoutMs: 300_000,
  });
  return { ...server, url };
}
