import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DemoInfo } from '../src/demo/demo-info.js';
import type { TestServer } from './harness.js';
import { launchChromium, screenshot, seriousAxeViolations } from './support/browser.js';
import { vModelBrowser, type VModelBrowser } from './support/v-model-browser.js';

const STEP = 60_000;

/**
 * Settings → Trace model in a real browser, on the demo's V-model: the owner reads the roles, adds
 * one and finds it after a reload, sees the service's refusal at the field it is about; a viewer
 * reads the model without a way to change it; axe finds nothing serious.
 */
describe('web app end to end: the trace model in Settings', () => {
  let t: TestServer;
  let demo: DemoInfo;
  let browser: Browser;
  let page: Page;
  let setup: VModelBrowser;
  const table = () => page.getByTestId('trace-model-table');
  const rowNames = (on: Page = page) =>
    on.getByTestId('trace-model-table').locator('tbody th[scope=row]').allTextContents();

  beforeAll(async () => {
    setup = await vModelBrowser();
    ({ t, demo, browser, page } = setup);
  }, 2 * STEP);

  afterAll(() => setup?.close());

  const addRole = async (role: {
    forward: string;
    backward: string;
    from: string;
    to: string;
    relation: string;
  }) => {
    await page.getByRole('button', { name: 'Add role' }).click();
    await page.getByRole('heading', { name: 'Add a role' }).waitFor();
    await page.getByLabel('Forward name', { exact: true }).fill(role.forward);
    await page.getByLabel('Backward name', { exact: true }).fill(role.backward);
    await page.getByLabel('From topic').selectOption({ label: role.from });
    await page.getByLabel('To topic').selectOption({ label: role.to });
    await page.getByLabel('Relation type', { exact: true }).selectOption(role.relation);
    await page.getByRole('button', { name: 'Add to the model' }).click();
  };

  it(
    'shows the V-model from the Settings tab, the focus on the heading',
    async () => {
      await page.goto(`${t.url}/settings/keys`);
      await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
      await page.getByRole('link', { name: 'Trace model' }).click();
      await table().waitFor();
      expect(page.url()).toBe(`${t.url}/settings/trace-model`);
      await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Settings');
      expect(await rowNames()).toEqual([
        'derives from',
        'implements',
        'verifies',
        'validates',
        'realizes',
        'cites as evidence',
      ]);
      const verifies = table().locator('tbody tr', { hasText: 'verified by' });
      const cells = await verifies.locator('td').allTextContents();
      expect(cells.slice(0, 3)).toEqual(['verified by', 'Verification Tests', 'System Requirements']);
      expect(cells[3]).toContain('is_related');
      await screenshot(page, 'settings-trace-model', { fullPage: true });
    },
    STEP,
  );

  it(
    'adds a role by keyboard-usable, labelled fields, saves it, and finds it after a reload',
    async () => {
      await addRole({
        forward: 'mitigates',
        backward: 'mitigated by',
        from: 'Risk Controls',
        to: 'System Requirements',
        relation: 'is_related',
      });
      // The form is gone; the focus waits on Save, which sends the whole model.
      await expect
        .poll(() => page.evaluate(() => document.activeElement?.textContent))
        .toBe('Save trace model');
      expect(await rowNames()).toContain('mitigates');
      await page.keyboard.press('Enter');
      await page.getByText('The trace model was saved.').waitFor();
      await page.reload();
      await table().waitFor();
      expect((await rowNames()).at(-1)).toBe('mitigates');
      const cells = await table()
        .locator('tbody tr', { hasText: 'mitigated by' })
        .locator('td')
        .allTextContents();
      expect(cells.slice(0, 3)).toEqual(['mitigated by', 'Risk Controls', 'System Requirements']);
    },
    STEP,
  );

  it(
    'hides the internal relation types until asked for, and shows the service’s refusal at its field',
    async () => {
      await page.getByRole('button', { name: 'Add role' }).click();
      const relation = page.getByLabel('Relation type', { exact: true });
      const internal = () => relation.locator('option[value^="auto_"]').count();
      expect(await internal()).toBe(0);
      await page.getByLabel('Show internal relation types').check();
      expect(await internal()).toBeGreaterThan(0);
      await page.getByRole('button', { name: 'Cancel' }).click();

      // The same names between the same two topics: only the service knows the model refuses it.
      await addRole({
        forward: 'mitigates',
        backward: 'mitigated by',
        from: 'Risk Controls',
        to: 'System Requirements',
        relation: 'mentions',
      });
      await page.getByRole('button', { name: 'Save trace model' }).click();
      const error = page.locator('#trace-role-forward-error');
      await error.waitFor();
      expect(await error.textContent()).toMatch(/already names roles\[\d+\] \(mitigates\)/);
      expect(await page.getByLabel('Forward name', { exact: true }).getAttribute('aria-invalid')).toBe(
        'true',
      );
      await page.getByRole('alert').filter({ hasText: 'The trace model was not saved' }).waitFor();

      await screenshot(page, 'settings-trace-model-refused', { fullPage: true });
      expect(await seriousAxeViolations(page)).toEqual([]);
      await page.getByRole('button', { name: 'Discard changes' }).click();
      expect((await rowNames()).filter((name) => name === 'mitigates')).toHaveLength(1);
    },
    STEP,
  );

  it(
    'says when someone else changed the model meanwhile, and reloads it on request',
    async () => {
      await page.getByRole('button', { name: 'Remove role realizes' }).click();
      const current = await t.api('GET', '/trace-model', { key: demo.tenant.users.owner.apiKey });
      const changed = await t.api('PUT', '/trace-model', {
        key: demo.tenant.users.owner.apiKey,
        body: { version: current.body.version, roles: current.body.roles.slice(0, -1) },
      });
      expect(changed.status, changed.text).toBe(200);
      await page.getByRole('button', { name: 'Save trace model' }).click();
      await page.getByText('Someone else changed the trace model').waitFor();
      await page.getByRole('button', { name: 'Reload the trace model' }).click();
      await expect.poll(() => rowNames()).not.toContain('mitigates');
      expect(await rowNames()).toContain('realizes');
    },
    STEP,
  );

  it(
    'lets a viewer read the model without a way to change it; axe finds no serious violation',
    async () => {
      const viewerBrowser = await launchChromium();
      try {
        const context = await viewerBrowser.newContext({ viewport: { width: 1280, height: 900 } });
        context.setDefaultTimeout(10_000);
        const tab = await context.newPage();
        await tab.goto(`${t.url}/`);
        await tab.fill('#email', demo.tenant.users.viewer.email);
        await tab.fill('#password', demo.tenant.users.viewer.password);
        await tab.click('button[type=submit]');
        await tab.getByRole('heading', { name: 'Knowledge topics' }).waitFor();
        await tab.goto(`${t.url}/settings/trace-model`);
        await tab.getByTestId('trace-model-table').waitFor();
        expect(await rowNames(tab)).toContain('verifies');
        await tab.getByText('Only owners and admins change the trace model').waitFor();
        expect(await tab.getByRole('button', { name: /Add role|Edit|Remove|Save/ }).count()).toBe(0);
        await tab.waitForLoadState('networkidle');
        expect(await seriousAxeViolations(tab)).toEqual([]);
      } finally {
        await viewerBrowser.close();
      }
    },
    STEP,
  );
});
