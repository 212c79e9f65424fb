import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';
import { screenshot, seriousAxeViolations, signedInOwner } from './support/browser.js';
import { approvedTopic } from './support/topics.js';

/** A topic's document in Debian's chromium against the real server: on screen, by axe, and printed. */
const STEP = 60_000;

/** Poppler's pdftotext reads the printed PDF back; without it the PDF's text is not checked. */
const HAS_PDFTOTEXT = spawnSync('pdftotext', ['-v']).error === undefined;

const SCHEMA = {
  components: [
    { type: 'textfield', key: 'title', label: 'Title' },
    { type: 'textarea', key: 'body', label: 'Requirement text' },
  ],
};

describe('web app end to end: a topic document', () => {
  let t: TestServer;
  let browser: Browser;
  let page: Page;
  let historyId: string;
  let folder: string;
  let beforeChange: string;

  beforeAll(async () => {
    t = await startTestServer();
    folder = mkdtempSync(join(tmpdir(), 'rxs-document-'));
    const revision = await approvedTopic(t, 'Valve Specification', { schema: SCHEMA });
    historyId = (await t.api('GET', `/kt/${revision}`)).body.knowledge_topic_history_id;
    const ids: string[] = [];
    for (const [name, title, body] of [
      ['VAL-1', 'Housing', 'Cast iron.'],
      ['VAL-2', 'Seal', 'Rated for 16 bar.\nReplaced yearly.'],
      ['VAL-3', 'Handle', 'Turns a quarter.'],
    ]) {
      const created = await t.api('POST', '/records/', {
        body: { name, form: {}, data: { title, body }, context: { knowledge_unit_topic_id: revision } },
      });
      expect(created.status, created.text).toBe(201);
      ids.push(created.body._id);
    }
    const outline = await t.api('PUT', `/records/outline/${historyId}`, {
      body: {
        entries: [
          { record_id: ids[0], level: 1 },
          { record_id: ids[1], level: 2 },
          { record_id: ids[2], level: 1 },
        ],
      },
    });
    expect(outline.status, outline.text).toBe(200);
    const trace = await t.api('POST', '/traces/', {
      body: {
        source: { node_id: ids[2], node_type: 'Record' },
        target: { node_id: ids[1], node_type: 'Record' },
        relation_type: 'mentions',
      },
    });
    expect(trace.status, trace.text).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, 20));
    beforeChange = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 20));
    // The handle changed after the link was made: the link is suspect.
    const handle = await t.api('GET', `/records/${ids[2]}`);
    const changed = await t.api('PATCH', `/records/${ids[2]}`, {
      body: {
        data: { ...handle.body.data, body: 'Turns a quarter, clockwise.' },
        version: handle.body.version,
      },
    });
    expect(changed.status, changed.text).toBe(200);
    ({ browser, page } = await signedInOwner(t));
  }, STEP);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  it(
    'opens from the topic page: numbered headings, labelled fields with their line breaks, links',
    async () => {
      await page.goto(`${t.url}/topics/${historyId}`);
      await page.getByRole('link', { name: 'Document' }).click();
      await page.getByRole('heading', { name: 'Valve Specification', level: 1 }).waitFor();
      expect(new URL(page.url()).pathname).toBe(`/topics/${historyId}/document`);
      await expect.poll(() => page.getByTestId('document-meta').textContent()).toContain('as it is now');
      expect(await page.getByRole('heading', { level: 2 }).allTextContents()).toEqual([
        '1 VAL-1 Housing',
        '2 VAL-3 Handle',
      ]);
      expect(await page.getByRole('heading', { level: 3 }).allTextContents()).toEqual(['1.1 VAL-2 Seal']);
      const seal = page.getByTestId('document-record').nth(1);
      const field = seal.locator('.document-field');
      expect(await field.locator('strong').textContent()).toBe('Requirement text:');
      // The value's own line break stays one.
      expect(await field.locator('.document-value').innerText()).toBe('Rated for 16 bar.\nReplaced yearly.');
      expect(await seal.locator('.document-links li').textContent()).toBe(
        'mentioned by VAL-3 — Handle suspect',
      );
      expect(await seal.locator('.document-suspect').isVisible()).toBe(true);
      await screenshot(page, 'topic-document');
    },
    STEP,
  );

  it(
    'as of a moment: the values then, the moment in local time',
    async () => {
      await page.goto(`${t.url}/topics/${historyId}/document?as_of=${encodeURIComponent(beforeChange)}`);
      const meta = page.getByTestId('document-meta');
      await expect.poll(() => meta.textContent()).toContain('as of');
      expect(await meta.locator('time').getAttribute('datetime')).toBe(beforeChange);
      const handle = page.getByTestId('document-record').nth(2);
      expect(await handle.locator('.document-value').textContent()).toBe('Turns a quarter.');
      expect(await page.locator('.document-suspect').count()).toBe(0);
      await page.goto(`${t.url}/topics/${historyId}/document`);
      await page.getByRole('heading', { name: '1.1 VAL-2 Seal' }).waitFor();
    },
    STEP,
  );

  it(
    'axe finds no serious or critical violation',
    async () => {
      await page.waitForLoadState('networkidle');
      expect(await seriousAxeViolations(page)).toEqual([]);
    },
    STEP,
  );

  it(
    'prints without navigation, black on white, each record kept together',
    async () => {
      await page.emulateMedia({ media: 'print' });
      expect(await page.locator('.app-header').isVisible()).toBe(false);
      expect(await page.getByRole('button', { name: 'Print' }).isVisible()).toBe(false);
      expect(await page.getByRole('heading', { name: '1.1 VAL-2 Seal' }).isVisible()).toBe(true);
      const style = await page
        .getByTestId('document-record')
        .first()
        .evaluate((section) => {
          const css = getComputedStyle(section);
          return { breakInside: css.breakInside, color: css.color, background: css.backgroundColor };
        });
      expect(style).toEqual({
        breakInside: 'avoid',
        color: 'rgb(0, 0, 0)',
        background: 'rgb(255, 255, 255)',
      });
      // page.pdf prints with the print style sheet unless another medium is emulated.
      await page.emulateMedia({ media: null });
      const pdf = await page.pdf({ format: 'A4' });
      expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      writeFileSync(join(folder, 'document.pdf'), pdf);
      // Kept beside the screenshots for a reviewer to read, when they are kept.
      const keep = process.env.RXS_SCREENSHOT_DIR;
      if (keep) writeFileSync(join(keep, 'topic-document.pdf'), pdf);
    },
    STEP,
  );

  it.skipIf(!HAS_PDFTOTEXT)(
    "the printed PDF's text holds the numbered headings and a value, not the navigation",
    async () => {
      const read = spawnSync('pdftotext', ['-layout', join(folder, 'document.pdf'), '-'], {
        encoding: 'utf8',
      });
      expect(read.status, read.stderr).toBe(0);
      const text = read.stdout;
      expect(text).toMatch(/1\s+VAL-1\s+Housing/);
      expect(text).toMatch(/1\.1\s+VAL-2\s+Seal/);
      expect(text).toMatch(/2\s+VAL-3\s+Handle/);
      expect(text).toContain('Rated for 16 bar.');
      expect(text).toMatch(/mentioned by\s+VAL-3\s+—\s+Handle\s+SUSPECT/);
      for (const chrome of ['Traceability', 'Sign out', 'Skip to content', 'Print'])
        expect(text).not.toContain(chrome);
    },
    STEP,
  );
});
