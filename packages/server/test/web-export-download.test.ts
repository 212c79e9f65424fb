import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';
import { webClient, type WebClient } from './web-client.js';

/** Data keys of the wide record: more columns than an XLSX sheet has (16,384). */
const WIDE_KEYS = 16_400;

/**
 * The web app's export download: a finished, valid file or a visible error, never a 200 with a
 * broken file; each format's file named after the format; the writer's warnings in a header.
 */
describe('web app export download', () => {
  let t: TestServer;
  let viewer: WebClient;
  const requirements = () => t.demo.tenant.topics.systemRequirements!;
  const download = (query: string) =>
    fetch(`${t.url}/api/export?${query}`, { headers: { cookie: viewer.cookie! } });

  beforeAll(async () => {
    // An installation that raised RXS_MAX_RECORD_KEYS, so that an editor can write the wide record.
    t = await startTestServer({ maxRecordKeys: 20_000 });
    viewer = webClient(t.url);
    const { email, password } = t.demo.tenant.users.viewer;
    expect((await viewer.signIn(email, password)).status).toBe(200);
  });
  afterAll(() => t.close());

  it('names each format’s file after the format (Sphinx-Needs is not named like the JSON export)', async () => {
    const rev = requirements().currentRevisionId;
    const endings = {
      csv: 'csv',
      xlsx: 'xlsx',
      reqif: 'reqif',
      needs: 'needs.json',
      json: 'json',
      jsonl: 'jsonl',
    };
    for (const [format, ending] of Object.entries(endings)) {
      const response = await download(`revisions=${rev}&format=${format}`);
      expect(response.status, format).toBe(200);
      await response.arrayBuffer();
      expect(response.headers.get('content-disposition'), format).toMatch(
        new RegExp(
          `filename="rxs-system-requirements-\\d{4}-\\d{2}-\\d{2}\\.${ending.replace('.', '\\.')}"$`,
        ),
      );
    }
  });

  it('reports values the XLSX had to cut, in a header the browser shows', async () => {
    const rev = requirements().currentRevisionId;
    const [recordId] = requirements().recordIds;
    const existing = await t.api('GET', `/records/${recordId}`);
    const long = 'x'.repeat(40_000);
    const changed = await t.api('PATCH', `/records/${recordId}`, {
      body: { data: { ...existing.body.data, long_note: long } },
    });
    expect(changed.status).toBe(200);
    try {
      const response = await download(`revisions=${rev}&format=xlsx`);
      expect(response.status).toBe(200);
      const warnings = JSON.parse(
        decodeURIComponent(response.headers.get('x-rxs-export-warnings') ?? '%5B%5D'),
      ) as string[];
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(`(_id ${recordId})`);
      expect(warnings[0]).toContain('field "long_note": 40,000 characters cut to 32,767');
      const book = new ExcelJS.Workbook();
      await book.xlsx.load(await response.arrayBuffer());
      const exportSheet = book.getWorksheet('Export')!;
      const texts = exportSheet
        .getSheetValues()
        .flat()
        .map((v) =>
          v && typeof v === 'object' && 'richText' in v
            ? (v as ExcelJS.CellRichTextValue).richText.map((r) => r.text).join('')
            : v,
        );
      expect(texts).toContain(warnings[0]);
    } finally {
      await t.api('PATCH', `/records/${recordId}`, { body: { data: existing.body.data } });
    }
  });

  describe('with a record of 16,400 data keys', () => {
    beforeAll(async () => {
      const [recordId] = requirements().recordIds;
      const template = await t.api('GET', `/records/${recordId}`);
      // Its own readable id: the template's texts that start with REQ_001 are renamed.
      const data: Record<string, unknown> = Object.fromEntries(
        Object.entries(template.body.data as Record<string, unknown>).map(([key, value]) => [
          key,
          typeof value === 'string' ? value.replace(/^REQ[_-]\d+/, 'WIDE_001') : value,
        ]),
      );
      for (let i = 0; i < WIDE_KEYS; i++) data[`k${i}`] = `v${i}`;
      const created = await t.api('POST', '/records/', {
        body: {
          name: 'WIDE_001 a very wide record',
          form: {},
          data,
          context: { knowledge_unit_topic_id: requirements().currentRevisionId },
        },
      });
      expect(created.status, JSON.stringify(created.body).slice(0, 600)).toBe(201);
    });

    it('answers XLSX with a visible error that says what to do, never a 200 with a broken file', async () => {
      const response = await download(`revisions=${requirements().currentRevisionId}&format=xlsx`);
      const body = (await response.json()) as { detail: string };
      expect(response.status, body.detail).toBe(422);
      expect(body.detail).toMatch(/columns/);
      expect(body.detail).toMatch(/CSV or JSON|Remove the stray keys|remove the stray keys/);
    });

    it('gives every format either a whole, valid file or a visible error', async () => {
      for (const format of ['csv', 'xlsx', 'reqif', 'needs', 'json', 'jsonl']) {
        const response = await download(`revisions=${requirements().currentRevisionId}&format=${format}`);
        const bytes = Buffer.from(await response.arrayBuffer());
        if (response.status !== 200) {
          expect(response.status, format).toBeGreaterThanOrEqual(400);
          expect(JSON.parse(bytes.toString('utf8')).detail, format).toEqual(expect.any(String));
          continue;
        }
        expect(Number(response.headers.get('content-length')), format).toBe(bytes.length);
        const text = bytes.toString('utf8');
        switch (format) {
          case 'csv':
            expect(
              text
                .replace(/^\uFEFF/, '')
                .split('\r\n')[0]!
                .split(',').length,
            ).toBeGreaterThan(WIDE_KEYS);
            break;
          case 'xlsx': {
            const book = new ExcelJS.Workbook();
            await book.xlsx.load(bytes as unknown as ArrayBuffer);
            expect(book.worksheets.length).toBeGreaterThan(0);
            break;
          }
          case 'reqif':
            expect(text.trimEnd()).toMatch(/<\/REQ-IF>$/);
            break;
          case 'jsonl':
            for (const line of text.trim().split('\n')) JSON.parse(line);
            break;
          default:
            JSON.parse(text);
        }
      }
    });
  });
});
