import { join } from 'node:path';
import { copyDatabase, DEFAULT_BODY_LIMIT, openStorage, SERVICES, startServer } from '@rxs/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/test/run-cli.js';
import { createTestPostgresDatabase, startTestServer, type TestServer } from './harness.js';

describe('moving an embedded installation to PostgreSQL', () => {
  let sqlite: TestServer;
  let target: Awaited<ReturnType<typeof createTestPostgresDatabase>>;
  beforeAll(async () => {
    sqlite = await startTestServer({
      databaseUrl: `sqlite:${join(process.env.TMPDIR ?? '/tmp', `rxs-src-${Date.now()}.db`)}`,
    });
    target = await createTestPostgresDatabase();
  });
  afterAll(async () => {
    await sqlite.close();
    await target.drop();
  });

  it('copies every table with nothing lost (counts and checksums), and the copy serves the same data', async () => {
    const revision = sqlite.demo.tenant.topics.systemRequirements!.currentRevisionId;
    // Some data with awkward content first.
    await sqlite.api('POST', '/records/', {
      body: {
        name: 'ünïcödé “quotes” \\ back',
        form: {},
        data: { name: 'Line\nbreak', checklist_kgd0ri: ['Equipment', 'Other'] },
        context: { knowledge_unit_topic_id: revision },
      },
    });
    const before = await sqlite.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}`);

    // Through the command, as an operator runs it.
    const cli = await runCli([
      'migrate-data',
      '--from',
      `sqlite:${sqlite.server.storage.location}`,
      '--to',
      target.url,
      '--json',
    ]);
    expect(cli.code, cli.stderr).toBe(0);
    const reports = JSON.parse(cli.stdout).tables as Awaited<ReturnType<typeof copyDatabase>>;
    const source = await openStorage({ url: sqlite.server.storage.location });
    const destination = await openStorage({ url: target.url });
    expect(reports.map((r) => r.table)).toContain('records');
    for (const report of reports) {
      expect(report.targetRows).toBe(report.sourceRows);
      expect(report.targetChecksum).toBe(report.sourceChecksum);
    }
    expect(reports.find((r) => r.table === 'records')!.sourceRows).toBeGreaterThan(8);
    await expect(copyDatabase(source, destination)).rejects.toThrow(/already holds data/);
    await source.close();
    await destination.close();

    // A server on the copy: the same key works and the listing is identical.
    const pg = await startServer(
      {
        host: '127.0.0.1',
        port: 0,
        dataDir: sqlite.dataDir,
        databaseUrl: target.url,
        services: [...SERVICES],
        bodyLimit: DEFAULT_BODY_LIMIT,
        logLevel: 'silent',
      },
      { logger: false },
    );
    try {
      const after = await fetch(`${pg.url}/records/?context__knowledge_unit_topic_id=${revision}`, {
        headers: { 'x-api-key': sqlite.ownerKey },
      });
      expect(await after.json()).toEqual(before.body);
    } finally {
      await pg.close();
    }
  });
});
