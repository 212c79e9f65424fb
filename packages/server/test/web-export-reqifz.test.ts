import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';
import { webClient, type WebClient } from './web-client.js';

/**
 * The web app's ReqIF archive download: offered among the formats, sent as a zip named
 * `.reqifz` that holds the ReqIF file named after it.
 */
describe('web app export of a ReqIF archive', () => {
  let t: TestServer;
  let viewer: WebClient;
  let dir: string;

  beforeAll(async () => {
    t = await startTestServer();
    viewer = webClient(t.url);
    const { email, password } = t.demo.tenant.users.viewer;
    expect((await viewer.signIn(email, password)).status).toBe(200);
    dir = mkdtempSync(join(tmpdir(), 'rxs-web-reqifz-'));
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('offers reqifz and sends application/zip named .reqifz, holding <name>.reqif', async () => {
    const meta = await fetch(`${t.url}/api/meta`, { headers: { cookie: viewer.cookie! } });
    const { exportFormats } = (await meta.json()) as {
      exportFormats: { format: string; extension: string }[];
    };
    expect(exportFormats.map(({ format }) => format)).toEqual(expect.arrayContaining(['reqif', 'reqifz']));
    expect(exportFormats.find(({ format }) => format === 'reqifz')).toMatchObject({ extension: 'reqifz' });

    const revision = t.demo.tenant.topics.systemRequirements!.currentRevisionId;
    const response = await fetch(`${t.url}/api/export?revisions=${revision}&format=reqifz`, {
      headers: { cookie: viewer.cookie! },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/zip');
    const name = /filename="(rxs-system-requirements-\d{4}-\d{2}-\d{2})\.reqifz"$/.exec(
      response.headers.get('content-disposition') ?? '',
    )?.[1];
    expect(name).toBeDefined();
    const file = join(dir, 'download.reqifz');
    writeFileSync(file, Buffer.from(await response.arrayBuffer()));
    const script = [
      'import sys, zipfile',
      'z = zipfile.ZipFile(sys.argv[1])',
      'assert z.testzip() is None',
      'print(z.namelist()[0]); print(z.read(z.namelist()[0]).decode().strip().splitlines()[-1].strip())',
    ].join('\n');
    const [entry, end] = execFileSync('/usr/bin/python3', ['-c', script, file], { encoding: 'utf8' }).split(
      '\n',
    );
    expect(entry).toBe(`${name}.reqif`);
    expect(end).toBe('</REQ-IF>');
  });
});
