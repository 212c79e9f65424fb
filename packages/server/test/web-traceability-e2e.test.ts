import { readFileSync } from 'node:fs';
import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';
import { screenshot, signedInOwner } from './support/browser.js';
import { approvedTopic, createNote } from './support/topics.js';

const STEP = 60_000;

/**
 * The traceability page in Debian's chromium against the real server: coverage bars, the matrix
 * with the rows not covered marked and filtered, suspect links reviewed from the page, the view in
 * the URL, and the report downloaded.
 */
describe('web app end to end: traceability', () => {
  let t: TestServer;
  let browser: Browser;
  let page: Page;
  let requirements: string;
  let tests: string;
  const ids: Record<string, string> = {};

  const link = async (from: string, to: string) => {
    const res = await t.api('POST', '/traces/', {
      body: {
        source: { node_id: ids[from], node_type: 'Record' },
        target: { node_id: ids[to], node_type: 'Record' },
        relation_type: 'is_related',
      },
    });
    expect(res.status, res.text).toBe(201);
  };

  beforeAll(async () => {
    t = await startTestServer();
    // Names sort before the demo's topics, so these two are the first on the page.
    requirements = await approvedTopic(t, 'A1 Pump requirements');
    tests = await approvedTopic(t, 'A2 Pump verification');
    for (const name of ['PR-1 Flow 5 ml/h', 'PR-2 Occlusion alarm', 'PR-3 Battery 8 h'])
      ids[name.slice(0, 4)] = await createNote(t, requirements, name);
    for (const name of ['PV-1 Flow test', 'PV-2 Alarm test', 'PV-3 Drop test'])
      ids[name.slice(0, 4)] = await createNote(t, tests, name);
    await link('PR-1', 'PV-1');
    await link('PR-2', 'PV-2');
    // The requirement changed after it was linked: that link is suspect.
    const changed = await t.api('PATCH', `/records/${ids['PR-2']}`, {
      body: { data: { note: 'PR-2 Occlusion alarm within 30 s' } },
    });
    expect(changed.status).toBe(200);

    ({ browser, page } = await signedInOwner(t, { acceptDownloads: true }));
  }, STEP);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it(
    'shows coverage per rule, the matrix with the rows not covered, and keeps the view in the URL',
    async () => {
      await page.getByRole('link', { name: 'Traceability' }).click();
      await page.getByRole('heading', { name: 'Traceability' }).waitFor();
      const choices = page.getByTestId('traceability-topics');
      await choices.getByLabel(/A1 Pump requirements/).check();
      await choices.getByLabel(/A2 Pump verification/).check();
      await page.getByRole('button', { name: 'Show coverage' }).click();
      // The coverage shown before the click (another model's) is replaced once the new one arrives.
      const rule = page
        .getByTestId('coverage-rule')
        .filter({ hasText: 'A1 Pump requirements → A2 Pump verification' });
      await rule.waitFor();
      expect(await rule.textContent()).toContain('A1 Pump requirements → A2 Pump verification');
      expect(await rule.textContent()).toContain('66.7%');
      expect(await rule.textContent()).toContain('(2 of 3)');
      expect(page.url()).toContain(`revisions=${requirements},${tests}`);

      const matrix = page.getByTestId('rule-matrix');
      expect(await matrix.locator('tr.uncovered th').allTextContents()).toEqual(['PR-3']);
      expect(await matrix.locator('td.suspect').count()).toBe(1);
      expect(await matrix.textContent()).toContain('Orphans of A2 Pump verification (1): PV-3');
      await screenshot(page, 'traceability');
      await page.getByLabel('Only records not covered').check();
      expect(await matrix.locator('tbody tr').count()).toBe(1);

      // A reload (or a shared link) shows the same topics.
      await page.reload();
      await page.getByTestId('coverage-rule').waitFor();
      expect(await page.getByTestId('coverage-rule').textContent()).toContain('66.7%');
    },
    STEP,
  );

  it(
    'reviews a suspect link from the page, and downloads the report',
    async () => {
      const suspect = page.getByTestId('suspect-links');
      expect(await suspect.textContent()).toContain('PR-2 → PV-2');
      await suspect.getByRole('button', { name: /^Review PR-2/ }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('Comment (optional)').fill('Alarm test covers 30 s');
      await dialog.getByRole('button', { name: 'Link still holds' }).click();
      await page.getByText('Reviewed the link PR-2').waitFor();
      await expect.poll(() => page.getByTestId('suspect-links').count()).toBe(0);
      expect(await page.getByTestId('rule-matrix').locator('td.suspect').count()).toBe(0);

      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Download HTML' }).click(),
      ]);
      expect(download.suggestedFilename()).toMatch(/^rxs-2-topics-\d{4}-\d{2}-\d{2}\.traceability\.html$/);
      const html = readFileSync((await download.path())!, 'utf8');
      expect(html).toContain('<h1>Traceability report</h1>');
      expect(html).toContain('<li>PR-3</li>');
      expect(html).toContain('66.7%');

      // A mapping file's link is the rule: only traces in its direction count.
      await page.goto(`${t.url}/traceability?revisions=${requirements},${tests}`);
      await page.getByTestId('coverage-rule').waitFor();
      await page.getByLabel('Mapping', { exact: true }).fill(
        JSON.stringify({
          links: [
            {
              from: 'A2 Pump verification',
              to: 'A1 Pump requirements',
              name: 'verifies',
              incoming: 'verified by',
            },
          ],
        }),
      );
      const answered = page.waitForResponse(
        (r) => r.url().endsWith('/api/traceability') && r.request().method() === 'POST',
      );
      await page.getByRole('button', { name: 'Show coverage' }).click();
      expect((await answered).status()).toBe(200);
      await expect
        .poll(() => page.getByTestId('coverage-rule').first().textContent(), { timeout: 10_000 })
        .toContain('A2 Pump verification → A1 Pump requirements (verifies)');
      expect(await page.getByTestId('coverage-rule').first().textContent()).toContain('0.0%');
      const [mapped] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Download JSON' }).click(),
      ]);
      const json = JSON.parse(readFileSync((await mapped.path())!, 'utf8'));
      expect(json.rules[0].rule.linkType).toBe('verifies');
      await page.getByLabel('Mapping', { exact: true }).fill('{"links": [{"from": "No such topic"}]}');
      await page.getByRole('button', { name: 'Show coverage' }).click();
      await page
        .getByText(/Mapping file:/)
        .first()
        .waitFor();

      // Another tenant's revision: a clear 404, not an empty report.
      const other = t.demo.otherTenant.topics.riskRegister!.currentRevisionId;
      await page.goto(`${t.url}/traceability?revisions=${requirements},${other}`);
      await page.getByText(/was not found/).waitFor();
    },
    STEP,
  );
});
