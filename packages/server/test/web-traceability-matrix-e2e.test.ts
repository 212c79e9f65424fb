import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from './harness.js';
import { screenshot, seriousAxeViolations } from './support/browser.js';
import { vModelBrowser, type VModelBrowser } from './support/v-model-browser.js';

const STEP = 60_000;
const VERIFIES = 'System Requirements → Verification Tests (verified by)';

/**
 * The traceability page on the demo's V-model in Debian's chromium: the whole chain of the trace
 * model by default, each role a rule; an empty cell of a rule's matrix makes the trace under its
 * role and the cell is covered; a covered cell shows its trace; a chosen set of roles saved as a
 * view by name and opened again; axe finds nothing serious.
 */
describe('web app end to end: the traceability matrix and saved views', () => {
  let t: TestServer;
  let browser: Browser;
  let page: Page;
  let setup: VModelBrowser;

  beforeAll(async () => {
    setup = await vModelBrowser();
    ({ t, browser, page } = setup);
  }, 2 * STEP);

  afterAll(() => setup?.close());

  it(
    'shows the V chain of the trace model without anything to choose',
    async () => {
      await page.goto(`${t.url}/traceability`);
      await page.getByTestId('coverage-rule').first().waitFor();
      const rules = await page.getByTestId('coverage-rule').locator('td:first-child').allTextContents();
      expect(rules).toEqual(
        expect.arrayContaining([
          'User Needs → System Requirements (refined by)',
          'System Requirements → Design Outputs (implemented by)',
          VERIFIES,
          'User Needs → Validation Studies (validated by)',
        ]),
      );
      expect(rules.some((rule) => !rule.endsWith(')'))).toBe(false);
      // The mapping file is there, folded away.
      expect(await page.getByLabel('Mapping', { exact: true }).isVisible()).toBe(false);
      await page.getByText('Advanced: a mapping file').click();
      expect(await page.getByLabel('Mapping', { exact: true }).isVisible()).toBe(true);
      expect(await seriousAxeViolations(page)).toEqual([]);
    },
    STEP,
  );

  it(
    'makes a trace by role from an empty cell, and the cell is covered',
    async () => {
      const matrix = page.getByRole('region', { name: VERIFIES });
      // A row not covered yet, if the demo has one: the trace then covers it.
      const inUncovered = matrix.locator('tr.uncovered').getByRole('button', { name: /^Make a trace: / });
      const wasUncovered = (await inUncovered.count()) > 0;
      const make = (
        wasUncovered ? inUncovered : matrix.getByRole('button', { name: /^Make a trace: / })
      ).first();
      const label = (await make.getAttribute('aria-label'))!;
      const [, row, column] = /^Make a trace: (.+) verified by (.+)$/.exec(label)!;
      await make.click();
      const dialog = page.getByRole('dialog');
      await dialog.getByText('verified by', { exact: true }).waitFor();
      const created = page.waitForResponse(
        (r) => r.url().endsWith('/api/traces') && r.request().method() === 'POST',
      );
      await dialog.getByRole('button', { name: 'Make the trace' }).click();
      expect((await created).status()).toBe(201);
      await page.getByText(/^Made the trace /).waitFor();
      const covered = matrix.getByRole('button', { name: `${row} verified by ${column}: show the trace` });
      await covered.waitFor();
      if (wasUncovered)
        await expect.poll(() => matrix.locator('tr.uncovered th').allTextContents()).not.toContain(row);
      await screenshot(page, 'traceability-matrix', { fullPage: true });

      await covered.click();
      const trace = page.getByRole('dialog');
      await trace.getByRole('heading', { name: 'Trace' }).waitFor();
      expect(await trace.textContent()).toContain('verifies / verified by');
      expect(await trace.getByRole('link', { name: row! }).getAttribute('href')).toMatch(/\/records\//);
      expect(await seriousAxeViolations(page)).toEqual([]);
      await trace.getByRole('button', { name: 'Close' }).click();
    },
    STEP,
  );

  it(
    'saves a chosen set of roles as a view and opens it again',
    async () => {
      const views = page.getByTestId('traceability-views');
      for (const box of await views.getByRole('checkbox').all()) await box.uncheck();
      await views.getByLabel(VERIFIES).check();
      await views.getByRole('button', { name: 'Show these roles' }).click();
      await expect.poll(() => page.url()).toContain('roles=verifies');
      await expect.poll(() => page.getByTestId('coverage-rule').count()).toBe(1);

      await page.getByLabel('Save what is shown as').fill('Verification only');
      await page.getByRole('button', { name: 'Save view' }).click();
      await page.getByText('Saved the view “Verification only”.').waitFor();

      await page.goto(`${t.url}/traceability`);
      await expect.poll(() => page.getByTestId('coverage-rule').count()).toBeGreaterThan(1);
      await page.getByTestId('saved-views').getByRole('link', { name: 'Verification only' }).click();
      await expect.poll(() => page.url()).toContain('roles=verifies');
      await expect.poll(() => page.getByTestId('coverage-rule').count()).toBe(1);
      expect(await page.getByTestId('coverage-rule').textContent()).toContain(VERIFIES);
      expect(await seriousAxeViolations(page)).toEqual([]);
    },
    STEP,
  );
});
