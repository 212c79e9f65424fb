import { readFileSync } from 'node:fs';
import { type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';
import { launchChromium, screenshot } from './support/browser.js';

/** Record history, signed approvals and baselines in Debian's chromium against the real server. */
const STEP = 60_000;

describe('web app end to end: history, approvals, baselines', () => {
  let t: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const state: { historyId?: string; revisionId?: string; recordId?: string; recordUrl?: string } = {};

  const shot = (name: string): Promise<void> => screenshot(page, name);

  const field = (label: string): Locator => page.locator('.form-js-host').getByLabel(label, { exact: false });

  beforeAll(async () => {
    t = await startTestServer();
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    context.setDefaultTimeout(10_000);
    page = await context.newPage();
    await page.goto(`${t.url}/`);
    await page.fill('#email', t.demo.tenant.users.owner.email);
    await page.fill('#password', t.demo.tenant.users.owner.password);
    await page.click('button[type=submit]');
    await page.getByRole('heading', { name: 'Knowledge topics' }).waitFor();

    // A draft topic made through the API; the browser approves it.
    const draft = await t.api('POST', '/kt/', {
      body: {
        knowledge_topic_name: 'Pump Specs',
        type: 'multi_record',
        knowledge_topic_schema: {
          type: 'default',
          components: [
            {
              type: 'textfield',
              key: 'flow',
              label: 'Flow rate',
              properties: { 'service-key': 'flow_rate' },
            },
            { type: 'textarea', key: 'notes', label: 'Notes' },
          ],
        },
      },
    });
    expect(draft.status).toBe(201);
    state.revisionId = draft.body._id;
    state.historyId = draft.body.knowledge_topic_history_id;
  }, STEP);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it(
    'approves a draft with the password dialog; a wrong password approves nothing',
    async () => {
      await page.goto(`${t.url}/topics/${state.historyId}`);
      await page.getByRole('button', { name: 'Approve draft' }).first().click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('Reviewed').check();
      await dialog.getByLabel('Reason (optional)').fill('Design review DR-3');
      await dialog.getByLabel('Your password').fill('not my password');
      await dialog.getByRole('button', { name: 'Sign and approve' }).click();
      await dialog.getByText('The password is wrong, so nothing was approved').waitFor();
      await shot('approve-dialog');
      expect((await t.api('GET', `/kt/${state.revisionId}`)).body.status).toBe('draft');

      await dialog.getByLabel('Your password').fill(t.demo.tenant.users.owner.password);
      await dialog.getByRole('button', { name: 'Sign and approve' }).click();
      await page.getByTestId('reapproval-notice').waitFor();
      const approval = page.getByTestId('approval');
      await expect.poll(() => approval.textContent()).toContain('Reviewed');
      const text = await approval.textContent();
      expect(text).toContain(t.demo.tenant.users.owner.email);
      expect(text).toContain('Design review DR-3');
      expect(text).toContain('Password entered again');
      await shot('topic-approval');
    },
    STEP,
  );

  it(
    'edits a record with a reason, then shows the history, the difference and an old version',
    async () => {
      const created = await t.api('POST', '/records/', {
        body: {
          name: 'PUMP-7',
          form: {},
          data: { flow: '10 l/min', notes: 'Initial' },
          context: { knowledge_unit_topic_id: state.revisionId },
        },
      });
      expect(created.status).toBe(201);
      state.recordId = created.body._id;
      state.recordUrl = `${t.url}/topics/${state.historyId}/records/${state.recordId}`;
      await page.goto(state.recordUrl);
      await page.getByRole('button', { name: 'Edit', exact: true }).click();
      await page.locator('.form-js-host .fjs-form').waitFor();
      await page.getByLabel('Reason for change (optional)').fill('Bench test BT-9');
      // Typed and saved at once with Enter, the field never losing the focus: the new value is saved.
      await field('Flow rate').fill('14 l/min');
      await field('Flow rate').press('Enter');
      await page.getByText('Changes saved').waitFor();

      const history = page.getByTestId('record-history');
      await expect.poll(() => history.locator('.version').count()).toBe(2);
      const newest = history.locator('.version').first();
      expect(await newest.textContent()).toContain('Bench test BT-9');
      expect(await newest.textContent()).toContain(t.demo.tenant.users.owner.email);
      const row = newest.locator('tr', { hasText: 'flow_rate' });
      expect(await row.locator('.diff-before').textContent()).toBe('10 l/min');
      expect(await row.locator('.diff-after').textContent()).toBe('14 l/min');
      // Unchanged fields are not listed.
      expect(await newest.locator('tr', { hasText: 'Notes' }).count()).toBe(0);
      await history.scrollIntoViewIfNeeded();
      await shot('record-history');

      await history
        .locator('.version')
        .last()
        .getByRole('link', { name: /View version/ })
        .click();
      await page.getByText('A past version, read only').waitFor();
      await expect.poll(() => field('Flow rate').inputValue()).toBe('10 l/min');
      expect(await page.getByTestId('version-values').textContent()).toContain('10 l/min');
    },
    STEP,
  );

  it(
    'creates a baseline, downloads its export as of its moment, and compares it with now',
    async () => {
      await page.goto(`${t.url}/topics/${state.historyId}`);
      await page.getByRole('link', { name: 'Baselines' }).click();
      await page.getByRole('heading', { name: 'New baseline' }).waitFor();
      await page.fill('#baseline-name', 'v1.0');
      await page.fill('#baseline-description', 'First release');
      // Opened from the topic: it is ticked already.
      const topic = page.getByRole('checkbox', { name: /Pump Specs/ });
      await expect.poll(() => topic.isChecked()).toBe(true);
      await page.getByRole('button', { name: 'Create baseline' }).click();
      await page.getByText('Baseline created').waitFor();
      const table = page.getByTestId('baselines-table');
      await expect.poll(() => table.textContent()).toContain('v1.0');
      expect(await table.textContent()).toContain('Pump Specs');

      // A change after the baseline stays out of its export.
      const current = await t.api('GET', `/records/${state.recordId}`);
      const changed = await t.api('PATCH', `/records/${state.recordId}`, {
        body: { data: { flow: '20 l/min', notes: 'Initial' }, version: current.body.version },
      });
      expect(changed.status).toBe(200);

      await page.selectOption('#baseline-format', 'csv');
      const [csv] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Download v1.0' }).click(),
      ]);
      expect(csv.suggestedFilename()).toMatch(/^rxs-pump-specs-\d{4}-\d{2}-\d{2}\.csv$/);
      const text = readFileSync((await csv.path())!, 'utf8');
      expect(text).toContain('14 l/min');
      expect(text).not.toContain('20 l/min');

      await page.selectOption('#compare-from', { label: 'v1.0' });
      await page.selectOption('#compare-to', 'now');
      await page.getByRole('button', { name: 'Compare', exact: true }).click();
      const comparison = page.getByTestId('comparison');
      await comparison.waitFor();
      expect(await comparison.getByTestId('comparison-counts').textContent()).toContain('1 changed');
      const row = comparison.locator('tr', { hasText: 'flow_rate' });
      expect(await row.locator('.diff-before').textContent()).toBe('14 l/min');
      expect(await row.locator('.diff-after').textContent()).toBe('20 l/min');
      await row.evaluate((element) => element.scrollIntoView({ block: 'end' }));
      await shot('baselines');
    },
    STEP,
  );

  it(
    'deletes with a reason; the record’s address shows its history and restores it',
    async () => {
      await page.goto(state.recordUrl!);
      await page.getByRole('button', { name: 'Delete', exact: true }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('Reason for deleting (optional)').fill('Entered twice');
      await dialog.getByRole('button', { name: 'Delete record' }).click();
      await page.getByText('No records yet').waitFor();

      await page.goto(state.recordUrl!);
      await page.getByText('This record was deleted').waitFor();
      const newest = page.getByTestId('record-history').locator('.version').first();
      expect(await newest.textContent()).toContain('Entered twice');
      await page.getByRole('button', { name: 'Restore' }).click();
      await dialog.getByLabel('Reason for restoring (optional)').fill('Was not a duplicate');
      await dialog.getByRole('button', { name: 'Restore record' }).click();
      await page.getByRole('button', { name: 'Edit', exact: true }).waitFor();
      await expect
        .poll(() => page.getByTestId('record-history').locator('.version').first().textContent())
        .toContain('Was not a duplicate');
      expect((await t.api('GET', `/records/${state.recordId}`)).body.data.flow).toBe('20 l/min');
    },
    STEP,
  );

  it(
    'fits a phone-sized screen: history and baselines scroll only inside their tables',
    async () => {
      const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
      phone.setDefaultTimeout(10_000);
      const tab = await phone.newPage();
      await tab.goto(`${t.url}/`);
      await tab.fill('#email', t.demo.tenant.users.viewer.email);
      await tab.fill('#password', t.demo.tenant.users.viewer.password);
      await tab.click('button[type=submit]');
      await tab.getByRole('heading', { name: 'Knowledge topics' }).waitFor();
      await tab.goto(state.recordUrl!);
      await tab.getByTestId('record-history').locator('.version').first().waitFor();
      expect(await tab.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      // A viewer reads history and baselines but is offered no change.
      expect(await tab.getByRole('button', { name: /^(Edit|Delete)$/ }).count()).toBe(0);
      await tab.goto(`${t.url}/topics/baselines`);
      await tab.getByTestId('baselines-table').waitFor();
      expect(await tab.getByRole('heading', { name: 'New baseline' }).count()).toBe(0);
      await tab.getByRole('button', { name: 'Compare', exact: true }).click();
      await tab.getByTestId('comparison').waitFor();
      expect(await tab.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await phone.close();
    },
    STEP,
  );
});
