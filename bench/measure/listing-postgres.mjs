/**
 * 1b. The listing on PostgreSQL: the benchmark's SQLite dataset copied into a fresh
 * PostgreSQL database with `rxs migrate-data`, then `GET /records/?context__knowledge_unit_topic_id=REV`
 * from `rxs serve --database postgres://...` (kept: an unchanged topic, answered from disk; built:
 * a second server with `--listing-cache-mb 0`), against `psql` copying the same rows out as the
 * same JSON text, built by PostgreSQL itself: `\copy (SELECT <record as JSON> ... ORDER BY id) to stdout`.
 */
import { join } from 'node:path';
import { settle, timedOk } from '../lib/processes.mjs';
import { RXS_BIN, startRxs } from '../lib/servers.mjs';
import { median, ratios } from '../lib/stats.mjs';
import { download } from './listing.mjs';

/** The database URL of `name` on the server of `adminUrl`. */
function databaseUrl(adminUrl, name) {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * A record as the listing shows it, as JSON text built by PostgreSQL: the baseline's rows, the very
 * text RXS sends (its stored JSON columns spliced in, strings quoted by to_json).
 */
const RECORD_JSON = `concat('{"_id":"', id, '","name":', to_json(name), ',"form":', form,
  ',"version":', to_json(version), ',"data":', data,
  ',"read_only":', CASE WHEN read_only <> 0 THEN 'true' ELSE 'false' END,
  ',"metadata":{"tenant_id":', to_json(tenant_id),
  '},"context":{"knowledge_unit_topic_id":', coalesce(to_json(kt_revision_id)::text, 'null'),
  CASE WHEN octet_length(context::text) > 2 THEN ',' ELSE '' END, substr(context::text, 2),
  ',"audit_info":{"user_id_created":', to_json(created_by), ',"timestamp_created":', to_json(created_at),
  ',"user_id_last_updated":', coalesce(to_json(updated_by)::text, 'null'),
  ',"timestamp_last_updated":', coalesce(to_json(updated_at)::text, 'null'),
  ',"last_action":', to_json(last_action), '}}')`;

export async function measureListingPostgres({ adminUrl, sqliteFile, meta, size, headerFile, dir, runs, log }) {
  const name = `rxs_bench_n${size}`;
  const psql = (url, command) => timedOk('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', url, '-c', command]);
  await psql(adminUrl, `DROP DATABASE IF EXISTS ${name}`);
  await psql(adminUrl, `CREATE DATABASE ${name}`);
  const url = databaseUrl(adminUrl, name);
  const copyStart = Date.now();
  await timedOk(process.execPath, [RXS_BIN, 'migrate-data', '--from', `sqlite:${sqliteFile}`, '--to', url, '--json']);
  const copySeconds = (Date.now() - copyStart) / 1000;
  log(`  copied into PostgreSQL in ${copySeconds.toFixed(1)} s`);
  await psql(url, 'VACUUM ANALYZE');

  const server = (label, extraArgs = []) =>
    startRxs({
      dataDir: join(dir, `pg-${label}`),
      apiKey: meta.apiKey,
      logFile: join(dir, 'logs', `rxs-pg-${label}.log`),
      extraArgs: ['--database', url, ...extraArgs],
    });
  const kept = await server('kept');
  const built = await server('built', ['--listing-cache-mb', '0']);
  try {
    const path = `/records/?context__knowledge_unit_topic_id=${meta.revisionId}`;
    const copy = `\\copy (SELECT ${RECORD_JSON.replace(/\s+/g, ' ')} FROM records WHERE tenant_id = '${meta.tenantId}' AND kt_revision_id = '${meta.revisionId}' ORDER BY id) to stdout`;
    const psqlCopy = async () => {
      const result = await timedOk('bash', [
        '-c',
        `psql -X -q -v ON_ERROR_STOP=1 "$1" -c "$2" | wc -c`,
        'psql-copy',
        url,
        copy,
      ]);
      return { seconds: result.seconds, bytes: Number(result.stdout.trim()) };
    };
    const contenders = [
      { name: 'psql', run: psqlCopy },
      { name: 'rxs', run: () => download(`${kept.url}${path}`, headerFile), pid: kept.pid },
      { name: 'rxsBuilt', run: () => download(`${built.url}${path}`, headerFile), pid: built.pid },
    ];
    const seconds = Object.fromEntries(contenders.map((c) => [c.name, []]));
    const bytes = {};
    for (const c of contenders) bytes[c.name] = (await c.run()).bytes; // warm-up; fills the kept listing
    for (let round = 0; round < runs; round++) {
      const order = contenders.map((_, i) => contenders[(i + round) % contenders.length]);
      for (const c of order) {
        if (c.pid) await settle(c.pid);
        seconds[c.name].push((await c.run()).seconds);
      }
      log(
        `  postgres listing round ${round + 1}/${runs}: ` +
          contenders.map((c) => `${c.name} ${seconds[c.name].at(-1).toFixed(3)} s`).join(', '),
      );
    }
    return {
      copySeconds,
      bytes,
      seconds,
      median: Object.fromEntries(Object.entries(seconds).map(([k, v]) => [k, median(v)])),
      ratio: {
        rxsOverPsql: median(ratios(seconds.rxs, seconds.psql)),
        builtOverPsql: median(ratios(seconds.rxsBuilt, seconds.psql)),
      },
    };
  } finally {
    await kept.stop();
    await built.stop();
    await psql(adminUrl, `DROP DATABASE IF EXISTS ${name}`).catch(() => {});
  }
}
