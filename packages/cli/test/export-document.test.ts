import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemo, type DemoInfo } from '@rxs/server';
import { startTestServer, type TestServer } from '../../server/test/harness.js';
import { shouldSkip } from '../../exchange/test/support/spreadsheet-readers.js';
import { runCli } from './run-cli.js';
import {
  DOCX_READER_MISSING,
  docxText,
  PDF_READER_MISSING,
  pdfText,
  runCliToFile,
} from './support/document-readers.js';

/**
 * `rxs export --format pdf|docx` of the demo V-model, against the real server: a proposed
 * baseline's document, read by pdftotext and python-docx, names every record of the baseline's
 * topics by its readable id, its status and its signers; a document of now streams to standard
 * output and says it is not released.
 */

describe('rxs export --format pdf and docx', () => {
  let t: TestServer;
  let demo: DemoInfo;
  let dir: string;
  let keyFile: string;
  /** Readable ids of the baseline's records, from its JSON export. */
  let readableIds: string[];
  const rxs = (...args: string[]) => runCli([...args, '--url', t.url, '--api-key-file', keyFile]);
  const revisions = () =>
    Object.values(demo.tenant.topics).flatMap((topic) => ['--kt', topic.currentRevisionId]);

  beforeAll(async () => {
    t = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), 'rxs-export-document-'));
    demo = await seedDemo(t.server.app.services, {
      dataDir: join(dir, 'demo'),
      baseUrl: t.url,
      vModel: true,
    });
    keyFile = join(dir, 'owner.key');
    writeFileSync(keyFile, `${demo.tenant.users.owner.apiKey}\n`);
    const proposed = await rxs(
      'baseline',
      'propose',
      'R1',
      ...revisions(),
      '--signer',
      demo.tenant.users.owner.email,
    );
    expect(proposed.code, proposed.stderr).toBe(0);
    const json = await rxs('export', '--baseline', 'R1', '--format', 'json', '--out', '-', '--quiet');
    expect(json.code, json.stderr).toBe(0);
    const topics = JSON.parse(json.stdout).topics as { records: { readableId: string }[] }[];
    readableIds = topics.flatMap((topic) => topic.records.map((record) => record.readableId));
    expect(readableIds.length).toBeGreaterThan(10);
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.skipIf(shouldSkip(PDF_READER_MISSING))(
    "PDF of a baseline: every record's readable id, the status and the signer who has not signed",
    async () => {
      const file = join(dir, 'R1.pdf');
      const run = await rxs('export', '--baseline', 'R1', '--format', 'pdf', '--out', file, '--quiet');
      expect(run.code, run.stderr).toBe(0);
      const text = pdfText(file);
      expect(readableIds.filter((id) => !text.includes(id))).toEqual([]);
      expect(text).toContain('Baseline R1');
      expect(text).toContain('proposed');
      expect(text).toContain('NOT RELEASED');
      expect(text).toContain(demo.tenant.users.owner.email);
      expect(text).toContain('not signed yet');
      expect(text).toContain('Traceability matrix');
      expect(text).toContain('Coverage summary');
      // No baseline was released before R1: the change summary says there is nothing to compare with.
      expect(text).toContain('Change summary');
      expect(text).toContain('There is no earlier released baseline');
      // REQ_002 has parent REQ_001, which no role names: read as the record pages read it.
      expect(text).toMatch(/child of\s+REQ_001/);
      expect(text).toMatch(/parent of\s+REQ_002/);
    },
    120_000,
  );

  it.skipIf(shouldSkip(DOCX_READER_MISSING))(
    "DOCX of a baseline: python-docx opens it and finds every record's readable id",
    async () => {
      const file = join(dir, 'R1.docx');
      const run = await rxs('export', '--baseline', 'R1', '--format', 'docx', '--out', file, '--quiet');
      expect(run.code, run.stderr).toBe(0);
      const text = docxText(file);
      expect(readableIds.filter((id) => !text.includes(id))).toEqual([]);
      expect(text).toContain('proposed');
      expect(text).toContain('NOT RELEASED');
    },
    120_000,
  );

  it.skipIf(shouldSkip(PDF_READER_MISSING))(
    'PDF of now (--kt) streams with --out - and says it is not released',
    async () => {
      const file = join(dir, 'now.pdf');
      const streamed = await runCliToFile(
        [
          'export',
          ...revisions(),
          '--format',
          'pdf',
          '--out',
          '-',
          '--url',
          t.url,
          '--api-key-file',
          keyFile,
        ],
        file,
      );
      expect(streamed, 'exit code').toBe(0);
      expect(readFileSync(file).subarray(0, 5).toString()).toBe('%PDF-');
      const text = pdfText(file);
      expect(text).toContain('Current state (no baseline)');
      expect(text).toContain('not released');
      expect(readableIds.filter((id) => !text.includes(id))).toEqual([]);
    },
    120_000,
  );

  it.skipIf(shouldSkip(PDF_READER_MISSING))(
    'names a linked record outside the document by its id, saying it is not in it',
    async () => {
      const file = join(dir, 'design.pdf');
      const design = demo.tenant.topics.designOutputs!.currentRevisionId;
      const run = await rxs('export', '--kt', design, '--format', 'pdf', '--out', file, '--quiet');
      expect(run.code, run.stderr).toBe(0);
      // Design outputs are linked to records of topics this document does not hold.
      expect(pdfText(file).replace(/\s+/g, ' ')).toMatch(
        /related to record [0-9a-f]{24} \(not in this document\)/,
      );
    },
    120_000,
  );
});
