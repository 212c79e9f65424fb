/**
 * Benchmark data: a SQLite database holding one tenant, an owner with an API key, the real sample
 * topic ("System Requirements", approved) and N records generated from the sample records (about
 * 1 KB each as the listing returns them). Records go in through the server's one write path
 * (`insertRecords`: the record and its first version) in batched inserts inside transactions, which makes 1M records a matter of seconds instead of 1M POSTs.
 *
 * Datasets are cached under `<out>/cache/` (keyed by size and generator version) and copied before
 * each use, because the benchmark writes to them.
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { changeActor, createServices, insertRecords, openStorage } from '@rxs/server';

/** Bump when the generated data changes, so stale caches are not reused. */
const GENERATOR_VERSION = 4;
const BATCH = 1000;

export const SAMPLES_DIR = new URL('../../packages/server/src/demo/samples/', import.meta.url);

export function loadSamples() {
  const topic = JSON.parse(readFileSync(new URL('kt_system_requirements.json', SAMPLES_DIR), 'utf8'));
  const records = JSON.parse(readFileSync(new URL('records_system_requirements.json', SAMPLES_DIR), 'utf8'));
  return { topic, records };
}

/** Ids like the server's ObjectIds (seconds, 5 random bytes, counter): 24 hex, ascending with `i`. */
/**
 * A tenant for a benchmark with its owner, the owner's API key and the principal the services take:
 * `{ tenant, user, key, owner }`.
 */
export async function benchTenant(accounts, name, ownerName = 'Owner') {
  const tenant = await accounts.createTenant(name);
  const user = await accounts.createUser(tenant.id, {
    email: 'owner@bench.rxs.local',
    name: ownerName,
    role: 'owner',
  });
  const key = await accounts.createApiKey(tenant.id, { userId: user.id, name: 'bench' });
  return { tenant, user, key, owner: { tenantId: tenant.id, userId: user.id, role: 'owner' } };
}

export function idMaker(startSeconds) {
  const unique = randomBytes(5).toString('hex');
  return (i) =>
    (startSeconds + Math.floor(i / 0x1000000)).toString(16).padStart(8, '0') +
    unique +
    (i % 0x1000000).toString(16).padStart(6, '0');
}

/** The form data of the i-th generated record: sample `i % samples.length`, numbered. */
export function recordData(i, samples) {
  const sample = samples[i % samples.length];
  const n = i + 1;
  const title = sample.data.name.replace(/^REQ_\d+\s*—\s*/, '');
  return {
    ...sample.data,
    name: `REQ_${String(n).padStart(6, '0')} — ${title}`,
    description: `${sample.data.description} (design input DI-${n % 997}, rev. A)`,
  };
}

/** The i-th generated record's stored row, built from sample `i % samples.length`. */
export function makeRow(i, { samples, newId, tenantId, revisionId, userId, tenant, baseMs }) {
  const sample = samples[i % samples.length];
  const n = i + 1;
  const data = recordData(i, samples);
  const { knowledge_unit_topic_id: _ignored, ...context } = sample.context;
  context.linked_product = tenant.product_history_id;
  context.knowledge_unit_id = tenant.knowledge_unit_history_id;
  return {
    id: newId(i),
    tenant_id: tenantId,
    kt_revision_id: revisionId,
    name: `Requirements-${n}`,
    form: JSON.stringify(sample.form),
    version: '1.0',
    data: JSON.stringify(data),
    read_only: 0,
    context: JSON.stringify(context),
    created_by: userId,
    created_at: new Date(baseMs + i * 1000).toISOString(),
    updated_by: null,
    updated_at: null,
    last_action: 'created',
  };
}

/** A valid `POST /records/` body for the topic (used by the write benchmark). */
export function createBody(revisionId, samples, n = 0) {
  const sample = samples[1 % samples.length];
  return {
    name: `Bench-${n}`,
    form: sample.form,
    data: { ...sample.data, name: `REQ_B${n} — benchmark write` },
    context: { knowledge_unit_topic_id: revisionId },
  };
}

/**
 * Generates the dataset of `size` records into `dir` (rxs.db + meta.json) unless a complete one is
 * there already. Returns its meta: tenant, revision id, the owner's API key, and some record ids.
 */
export async function ensureDataset(dir, size, log) {
  const metaFile = join(dir, 'meta.json');
  if (existsSync(metaFile)) {
    const meta = JSON.parse(readFileSync(metaFile, 'utf8'));
    if (meta.generatorVersion === GENERATOR_VERSION && meta.size === size) return meta;
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const started = Date.now();
  const dbFile = join(dir, 'rxs.db');
  const storage = await openStorage({ url: dbFile });
  try {
    const services = createServices(storage);
    const { accounts, techdoc } = services;
    const { topic, records: samples } = loadSamples();
    const { tenant, user, key, owner } = await benchTenant(accounts, 'Benchmark Medical', 'Bench owner');
    const draft = await techdoc.create(owner, {
      knowledge_topic_name: topic.knowledge_topic_name,
      type: topic.type,
      knowledge_topic_schema: topic.knowledge_topic_schema,
    });
    const revision = await techdoc.approve(owner, draft._id);

    const context = {
      samples,
      newId: idMaker(Math.floor(Date.parse('2026-01-01T00:00:00Z') / 1000)),
      tenantId: tenant.id,
      revisionId: revision._id,
      userId: user.id,
      tenant,
      baseMs: Date.parse('2026-01-01T00:00:00Z'),
    };
    const actor = changeActor(
      { tenantId: tenant.id, userId: user.id, role: 'owner', via: 'local' },
      'benchmark data',
    );
    const sampleIds = [];
    const every = Math.max(1, Math.floor(size / 1000));
    // Every 100th record, with its index: the 1% that the sync benchmark changes.
    const changeIds = [];
    for (let start = 0; start < size; start += BATCH * 20) {
      // 20 statements of BATCH rows per transaction: one fsync per 20 000 rows.
      await storage.db.transaction().execute(async (trx) => {
        for (let b = start; b < Math.min(size, start + BATCH * 20); b += BATCH) {
          const rows = [];
          for (let i = b; i < Math.min(size, b + BATCH); i++) {
            const row = makeRow(i, context);
            rows.push(row);
            if (i % every === 0) sampleIds.push(row.id);
            if (i % 100 === 50) changeIds.push([row.id, i]);
          }
          // The server's one write path: each record with its first version, as a POST would.
          await insertRecords(trx, rows, actor);
        }
      });
      if (log && size >= 200_000 && start % 200_000 === 0) log(`  generated ${start} of ${size} records`);
    }
    const meta = {
      generatorVersion: GENERATOR_VERSION,
      size,
      tenantId: tenant.id,
      userId: user.id,
      revisionId: revision._id,
      apiKey: key.key,
      sampleIds,
      changeIds,
      generatedInSeconds: (Date.now() - started) / 1000,
    };
    await storage.close();
    writeFileSync(`${metaFile}.tmp`, `${JSON.stringify(meta, null, 2)}\n`, { mode: 0o600 });
    renameSync(`${metaFile}.tmp`, metaFile);
    return meta;
  } catch (error) {
    await storage.close().catch(() => undefined);
    throw error;
  }
}

/** A working copy of a cached dataset's database (the benchmark writes to it). */
export function copyDataset(cacheDir, workDir) {
  mkdirSync(workDir, { recursive: true });
  for (const suffix of ['', '-wal', '-shm']) rmSync(join(workDir, `rxs.db${suffix}`), { force: true });
  copyFileSync(join(cacheDir, 'rxs.db'), join(workDir, 'rxs.db'));
}
