import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startTestServer, type TestServer } from '../../../server/test/harness.js';

/** A test server with the demo data and a folder of files for `rxs export` of its two demo topics. */
export interface DemoExport {
  t: TestServer;
  /** A folder of the test's own, removed after it. */
  dir: string;
  /** The owner's API key, as a file for `--api-key-file`. */
  keyFile: string;
  /** The current revisions of the demo's System Requirements and Verification Tests. */
  requirements: string;
  tests: string;
  /** `rxs export` of both topics by the owner, quiet, followed by `args`. */
  exportArgs(...args: string[]): string[];
}

/**
 * Starts the server before the tests of the `describe` block this is called in and stops it after
 * them; the fields are set once those tests run.
 */
export function useDemoExport(dirPrefix: string): DemoExport {
  const demo = {
    exportArgs: (...args: string[]) => [
      'export',
      '--url',
      demo.t.url,
      '--api-key-file',
      demo.keyFile,
      '--quiet',
      '--kt',
      demo.requirements,
      '--kt',
      demo.tests,
      ...args,
    ],
  } as DemoExport;
  beforeAll(async () => {
    demo.t = await startTestServer();
    demo.dir = mkdtempSync(join(tmpdir(), dirPrefix));
    demo.keyFile = join(demo.dir, 'owner.key');
    writeFileSync(demo.keyFile, `${demo.t.ownerKey}\n`);
    demo.requirements = demo.t.demo.tenant.topics.systemRequirements!.currentRevisionId;
    demo.tests = demo.t.demo.tenant.topics.verificationTests!.currentRevisionId;
  });
  afterAll(async () => {
    await demo.t.close();
    rmSync(demo.dir, { recursive: true, force: true });
  });
  return demo;
}
