import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DemoInfo } from '../src/demo/demo-info.js';
import type { TestServer } from './harness.js';
import { seriousAxeViolations } from './support/browser.js';
import { vModelBrowser, type VModelBrowser } from './support/v-model-browser.js';

const STEP = 60_000;

/**
 * Links by role in a real browser, on the demo V-model: a system requirement's link dialog offers
 * the roles of its topic, a link made by "verified by" reads "verified by TC-…" on the requirement
 * and "verifies REQ_…" on the test, and the internal relation types stay hidden until asked for.
 */
describe('web app end to end: links named by the trace model’s roles', () => {
  let t: TestServer;
  let demo: DemoInfo;
  let browser: Browser;
  let page: Page;
  let setup: VModelBrowser;

  beforeAll(async () => {
    setup = await vModelBrowser();
    ({ t, demo, browser, page } = setup);
  }, 2 * STEP);

  afterAll(() => setup?.close());

  const topics = () => demo.tenant.topics;
  // REQ_004 (footprint) has no verification test in the demo, TC-004 verifies nothing yet.
  const requirementPath = () =>
    `/topics/${topics().systemRequirements!.historyId}/records/${topics().systemRequirements!.recordIds[3]}`;
  const testPath = () =>
    `/topics/${topics().verificationTests!.historyId}/records/${topics().verificationTests!.recordIds[3]}`;

  it(
    'the link dialog of a system requirement offers the V-model’s roles, the internal types only when asked',
    async () => {
      await page.goto(`${t.url}${requirementPath()}`);
      const links = page.getByTestId('links-panel');
      await links.getByRole('button', { name: 'Add link' }).click();
      const roles = page.locator('#link-role option');
      await expect.poll(() => roles.allTextContents()).toContain('verified by (Verification Tests)');
      expect(await roles.allTextContents()).toEqual([
        'derives from (User Needs)',
        'implemented by (Design Outputs)',
        'verified by (Verification Tests)',
        'Other relation types…',
      ]);

      await page.selectOption('#link-role', 'other');
      const relations = () => page.locator('#link-relation option').allTextContents();
      expect(await relations()).toContain('is related');
      expect((await relations()).some((name) => name.startsWith('auto '))).toBe(false);
      await page.getByLabel(/Show internal types/).check();
      expect(await relations()).toContain('auto referenced in process modeller');
      await page.getByLabel(/Show internal types/).uncheck();
      expect((await relations()).some((name) => name.startsWith('auto '))).toBe(false);
    },
    STEP,
  );

  it(
    'links the requirement to a test by “verified by”: searching finds tests only, with id, title and topic',
    async () => {
      await page.selectOption('#link-role', 'verifies:to');
      // "TC-00" and "REQ_00" share no name; a search on "-00" finds both topics' records and more.
      await page.fill('#link-search', '-00');
      const hits = page.getByRole('list', { name: 'Matching records' }).locator('li');
      await hits.first().waitFor();
      const texts = (await hits.allInnerTexts()).map((text) => text.replace(/\s+/g, ' '));
      expect(texts.length).toBeGreaterThan(0);
      for (const text of texts) expect(text).toContain('Verification Tests');
      const hit = hits.filter({ hasText: 'TC-004' });
      expect((await hit.innerText()).replace(/\s+/g, ' ')).toMatch(/TC-004 \S.*Verification Tests/);
      await hit.getByRole('button', { name: 'Link TC-004' }).click();

      const table = page.getByTestId('links-table');
      await expect.poll(() => table.innerText()).toContain('verified by TC-004');
      expect(await table.innerText()).not.toContain('this record');
    },
    STEP,
  );

  it(
    'the test reads the same link as “verifies REQ_004”, its stored trace going test → requirement',
    async () => {
      const answer = await page.request.get(
        `${t.url}/api/records/${topics().verificationTests!.recordIds[3]}/links`,
      );
      expect(answer.status(), await answer.text()).toBe(200);
      expect(await answer.json()).toMatchObject([
        { direction: 'outgoing', relationType: 'is_related', node: { readableId: 'REQ_004' } },
      ]);

      await page.goto(`${t.url}${testPath()}`);
      const table = page.getByTestId('links-table');
      await expect.poll(() => table.innerText()).toMatch(/verifies REQ_004 — \S/);
    },
    STEP,
  );

  it(
    'a link no role names says its relation type plainly from either end',
    async () => {
      // REQ_002 has parent REQ_001 in the demo: no role of the V-model names has_parent.
      const requirements = topics().systemRequirements!;
      await page.goto(`${t.url}/topics/${requirements.historyId}/records/${requirements.recordIds[0]}`);
      const table = page.getByTestId('links-table');
      await expect.poll(() => table.innerText()).toMatch(/parent of REQ_002 — /);
      expect(await table.innerText()).toContain('verified by TC-001');
      await page.goto(`${t.url}/topics/${requirements.historyId}/records/${requirements.recordIds[1]}`);
      await expect.poll(() => table.innerText()).toMatch(/child of REQ_001 — /);
    },
    STEP,
  );

  it(
    'axe finds no serious or critical violation on the record page, its links and the open link dialog',
    async () => {
      await page.goto(`${t.url}${requirementPath()}`);
      await page.getByTestId('links-table').waitFor();
      await page.getByTestId('links-panel').getByRole('button', { name: 'Add link' }).click();
      await page.locator('#link-role').waitFor();
      await page.waitForLoadState('networkidle');
      expect(await seriousAxeViolations(page)).toEqual([]);
    },
    STEP,
  );
});
