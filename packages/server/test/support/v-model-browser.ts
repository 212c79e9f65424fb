import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { DemoInfo } from '../../src/demo/demo-info.js';
import { seedDemo } from '../../src/demo/seed.js';
import { startTestServer, type TestServer } from '../harness.js';
import { signedInOwner } from './browser.js';

export interface VModelBrowser {
  t: TestServer;
  demo: DemoInfo;
  browser: Browser;
  page: Page;
  close(): Promise<void>;
}

/**
 * The real server with the demo's V-model tenant (the plain demo's tenants discarded first) and a
 * chromium page signed in as its owner.
 */
export async function vModelBrowser(): Promise<VModelBrowser> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rxs-v-model-'));
  const t = await startTestServer();
  const demo = await seedDemo(t.server.app.services, { dataDir, baseUrl: t.url, vModel: true });
  const { browser, page } = await signedInOwner({ url: t.url, demo });
  return {
    t,
    demo,
    browser,
    page,
    async close() {
      await browser.close();
      await t.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
