import { readFileSync } from 'node:fs';
import { type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';
import { launchChromium, screenshot as shot } from './support/browser.js';

/** The web app in Debian's chromium, driven by playwright-core, against the real server in-process. */
const STEP = 60_000;

describe('web app end to end', () => {
  let t: TestServer;
  let browser: Browser;
  let owner: BrowserContext;
  let page: Page;
  const state: {
    key?: string;
    historyId?: string;
    firstRevision?: string;
    secondRevision?: string;
    recordUrl?: string;
  } = {};

  async function signIn(context: BrowserContext, user: { email: string; password: string }): Promise<Page> {
    const tab = await context.newPage();
    await tab.goto(`${t.url}/`);
    // By keyboard: the e-mail field has the focus, Tab moves on, Enter submits.
    await expect.poll(() => tab.evaluate(() => document.activeElement?.id)).toBe('email');
    await tab.keyboard.type(user.email);
    await tab.keyboard.press('Tab');
    await tab.keyboard.type(user.password);
    await tab.keyboard.press('Enter');
    await tab.getByRole('heading', { name: 'Knowledge topics' }).waitFor();
    return tab;
  }

  /** Drags a palette entry of the form-js editor onto the end of the form. */
  async function dragField(type: string): Promise<void> {
    // Filling the properties panel may scroll the page: palette and canvas are at its top.
    await page.evaluate(() => window.scrollTo(0, 0));
    const source = await page.locator(`.fjs-palette-field[data-field-type="${type}"]`).boundingBox();
    const target = await page
      .locator('.fjs-editor-container .fjs-drop-container-vertical')
      .first()
      .boundingBox();
    if (!source || !target) throw new Error('The form editor is not on the page.');
    await page.mouse.move(source.x + source.width / 2, source.y + source.height / 2);
    await page.mouse.down();
    await page.mouse.move(source.x + 60, source.y + 60, { steps: 4 });
    await page.mouse.move(target.x + target.width / 2, target.y + target.height - 12, { steps: 8 });
    await page.mouse.up();
  }

  /** Opens a group of the properties panel of the selected field, if closed. */
  async function openGroup(name: string): Promise<void> {
    const header = page.locator('.bio-properties-panel-group-header', { hasText: name }).first();
    if (!(await header.evaluate((el) => el.classList.contains('open')))) await header.click();
  }

  async function setLabel(label: string): Promise<void> {
    await openGroup('General');
    await page.locator('#bio-properties-panel-label').click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type(label);
    // The panel applies edits after a short pause: wait until the canvas shows the new label.
    await page.locator('.fjs-editor-container .fjs-form-field-label', { hasText: label }).waitFor();
  }

  const field = (label: string): Locator => page.locator('.form-js-host').getByLabel(label, { exact: false });

  beforeAll(async () => {
    t = await startTestServer();
    browser = await launchChromium();
    owner = await browser.newContext({ viewport: { width: 1280, height: 860 }, acceptDownloads: true });
    owner.setDefaultTimeout(10_000);
  }, STEP);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it(
    'signs in with e-mail and password',
    async () => {
      const tab = await owner.newPage();
      await tab.goto(`${t.url}/topics`);
      await tab.getByRole('heading', { name: 'Sign in to RXS' }).waitFor();
      await tab.fill('#email', t.demo.tenant.users.owner.email);
      await tab.fill('#password', 'wrong password');
      await tab.click('button[type=submit]');
      await tab.getByRole('alert').filter({ hasText: 'wrong' }).waitFor();
      await shot(tab, 'sign-in');
      await tab.close();
      page = await signIn(owner, t.demo.tenant.users.owner);
      await expect.poll(() => page.locator('table').textContent()).toContain('System Requirements');
      await shot(page, 'topics');
    },
    STEP,
  );

  it(
    'creates an API key in Settings, shown once, and uses it like curl would',
    async () => {
      await page.getByRole('link', { name: 'Settings', exact: true }).click();
      await page.fill('#key-name', 'E2E script');
      await page.selectOption('#key-expiry', '30');
      await page.getByRole('button', { name: 'Create key' }).click();
      const value = page.getByTestId('new-key-value');
      await value.waitFor();
      state.key = await value.inputValue();
      expect(state.key).toMatch(/^rxs_[0-9a-f]{16}_/);
      await shot(page, 'settings-api-keys');

      const rev = t.demo.tenant.topics.systemRequirements!.currentRevisionId;
      const headers = { 'X-API-Key': state.key };
      const topic = await fetch(`${t.url}/kt/${rev}`, { headers });
      expect(topic.status).toBe(200);
      const records = await fetch(`${t.url}/records/?context__knowledge_unit_topic_id=${rev}`, { headers });
      expect(((await records.json()) as unknown[]).length).toBe(4);

      await page.getByRole('button', { name: 'I have stored the key' }).click();
      await expect.poll(() => page.getByTestId('new-key').count()).toBe(0);
      await page.reload();
      const row = page.getByTestId('keys-table').locator('tr', { hasText: 'E2E script' });
      await expect.poll(() => row.textContent()).not.toContain('Not yet');
      expect(await page.getByTestId('keys-table').textContent()).not.toContain(state.key);
    },
    STEP,
  );

  it(
    'designs a topic in the form-js editor, saves the draft and approves it',
    async () => {
      await page.getByRole('link', { name: 'Topics', exact: true }).click();
      await page.getByRole('link', { name: 'New topic' }).click();
      await page.fill('#topic-name', 'Hazard Analysis');
      await page.locator('.fjs-palette-field').first().waitFor();

      await dragField('textfield');
      await setLabel('Hazard');
      await page.fill('#bio-properties-panel-key', 'textfield_hz');
      await openGroup('Validation');
      await page.locator('#bio-properties-panel-required').check();
      await page
        .locator('.bio-properties-panel-group-header', { hasText: 'Custom properties' })
        .getByRole('button')
        .first()
        .click();
      await page.fill('#bio-properties-panel-property-0-key', 'service-key');
      await page.fill('#bio-properties-panel-property-0-value', 'hazard');

      await dragField('textfield');
      await setLabel('Risk ID');
      await page.fill('#bio-properties-panel-key', 'textfield_id');
      await openGroup('Validation');
      await page.locator('#bio-properties-panel-required').check();
      await page.fill('#bio-properties-panel-pattern', '^RISK-[0-9]+$');
      await shot(page, 'form-designer');

      await page.getByRole('button', { name: 'Save draft' }).click();
      await page.getByText('Draft created').waitFor();
      state.historyId = /\/topics\/([0-9a-f]{24})\/design/.exec(page.url())![1]!;
      await page.getByRole('button', { name: 'Approve…' }).click();
      await page.getByRole('dialog').getByLabel('Your password').fill(t.demo.tenant.users.owner.password);
      await page.getByRole('dialog').getByRole('button', { name: 'Sign and approve' }).click();
      await page.getByTestId('reapproval-notice').waitFor();
      state.firstRevision = (await page
        .getByTestId('current-revision-id')
        .locator('.id-field-value code')
        .textContent())!;
      expect(state.firstRevision).toMatch(/^[0-9a-f]{24}$/);
      expect(await page.getByTestId('history-id').locator('.id-field-value code').textContent()).toBe(
        state.historyId,
      );

      const kt = (await (
        await fetch(`${t.url}/kt/${state.firstRevision}`, { headers: { 'X-API-Key': state.key! } })
      ).json()) as { status: string; knowledge_topic_schema: { components: Record<string, unknown>[] } };
      expect(kt.status).toBe('approved');
      expect(kt.knowledge_topic_schema.components).toEqual([
        expect.objectContaining({
          key: 'textfield_hz',
          label: 'Hazard',
          properties: { 'service-key': 'hazard' },
          validate: expect.objectContaining({ required: true }),
        }),
        expect.objectContaining({
          key: 'textfield_id',
          label: 'Risk ID',
          validate: expect.objectContaining({ required: true, pattern: '^RISK-[0-9]+$' }),
        }),
      ]);
    },
    STEP,
  );

  it(
    'creates a record through the form, showing the server’s validation errors on their fields',
    async () => {
      await page.getByRole('link', { name: /^Records \(0\)$/ }).click();
      await page.getByRole('link', { name: 'Create the first record' }).click();
      await page.locator('.form-js-host .fjs-form').waitFor();
      await page.fill('#record-name', 'RISK-A');
      await field('Risk ID').fill('R1');
      const refused = page.waitForResponse(
        (r) => r.url().endsWith('/api/records') && r.request().method() === 'POST',
      );
      await page.getByRole('button', { name: 'Create record' }).click();
      expect((await refused).status()).toBe(422);
      const errors = page.locator('.form-js-host .fjs-form-field-error');
      await expect
        .poll(() => errors.allTextContents())
        .toEqual([
          'Field "Hazard" (textfield_hz) is required',
          'Field "Risk ID" (textfield_id) must match the pattern ^RISK-[0-9]+$, not "R1"',
        ]);
      expect(await page.getByTestId('validation-summary').textContent()).toContain('2 problems');
      await shot(page, 'record-validation');

      await field('Hazard').fill('Burns from hot chamber surfaces');
      await field('Risk ID').fill('RISK-1');
      await page.getByRole('button', { name: 'Create record' }).click();
      await page.getByText('Record created').waitFor();
      state.recordUrl = page.url();
      expect(await field('Hazard').inputValue()).toBe('Burns from hot chamber surfaces');
      // Said once: the address has no ?created left, and a reload shows the record without it.
      expect(state.recordUrl).not.toContain('created');
      await page.reload();
      await page.getByText('Burns from hot chamber surfaces').or(field('Hazard')).first().waitFor();
      expect(await page.getByText('Record created').count()).toBe(0);
    },
    STEP,
  );

  it(
    'links two records by search and shows the relation',
    async () => {
      const links = page.getByTestId('links-panel');
      await links.getByText('No links yet').waitFor();
      await links.getByRole('button', { name: 'Add link' }).click();
      await page.selectOption('#link-relation', 'is_related');
      await page.fill('#link-search', 'Requirements-1');
      await page.getByRole('button', { name: 'Link Requirements-1' }).click();
      const table = page.getByTestId('links-table');
      await expect.poll(() => table.textContent()).toContain('Requirements-1');
      expect(await table.textContent()).toContain('related to REQ_001');
      expect(await table.textContent()).toContain('System Requirements');
      await shot(page, 'record');
    },
    STEP,
  );

  it(
    'marks a link suspect after its record changed, and reviews it with a comment',
    async () => {
      const recordId = /\/records\/([0-9a-f]{24})/.exec(state.recordUrl!)![1]!;
      const record = (await t.api('GET', `/records/${recordId}`)).body;
      const changed = await t.api('PATCH', `/records/${recordId}`, {
        body: { data: { ...record.data, textfield_hz: 'Burns from chamber surfaces above 60 °C' } },
      });
      expect(changed.status, changed.text).toBe(200);
      // Changed back: two new versions, still one event making the link suspect.
      const back = await t.api('PATCH', `/records/${recordId}`, { body: { data: record.data } });
      expect(back.status, back.text).toBe(200);
      await page.reload();
      const links = page.getByTestId('links-panel');
      await links.getByText('1 link is suspect').waitFor();
      expect(await page.getByTestId('links-table').locator('.badge-warning').textContent()).toBe('Suspect');
      await shot(page, 'record-suspect-link');
      await links.getByRole('button', { name: 'Review the link to Requirements-1' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('Comment (optional)').fill('Still applies at 60 °C');
      await dialog.getByRole('button', { name: 'Link still holds' }).click();
      await expect.poll(() => links.locator('.badge-warning').count()).toBe(0);
      expect(await links.getByText('is suspect').count()).toBe(0);
      const [trace] = (
        await t.api('POST', '/traces/batch/list', {
          body: { nodes: [{ node_id: recordId, node_type: 'Record', version: '' }] },
        })
      ).body.results[recordId].edges;
      expect(trace.outdated).toBe(false);
      const history = (await t.api('GET', `/traces/${trace._id}/history`)).body;
      expect(history.map((e: { action: string }) => e.action)).toEqual(['created', 'suspect', 'reviewed']);
      expect(history[2]).toMatchObject({ reason: 'Still applies at 60 °C', via: 'session' });
    },
    STEP,
  );

  it(
    're-approves after edits: the page shows the new revision id and that the records moved',
    async () => {
      await page.goto(`${t.url}/topics/${state.historyId}`);
      await page.getByRole('button', { name: 'Edit form' }).click();
      await page.locator('.fjs-palette-field').first().waitFor();
      await dragField('textarea');
      await setLabel('Mitigation');
      await page.getByText('Unsaved changes').waitFor();
      await page.getByRole('button', { name: 'Approve…' }).click();
      await page.getByRole('dialog').getByLabel('Your password').fill(t.demo.tenant.users.owner.password);
      await page.getByRole('dialog').getByRole('button', { name: 'Save, sign and approve' }).click();

      const notice = page.getByTestId('reapproval-notice');
      await notice.waitFor();
      state.secondRevision = (await page
        .getByTestId('current-revision-id')
        .locator('.id-field-value code')
        .textContent())!;
      expect(state.secondRevision).not.toBe(state.firstRevision);
      expect(await notice.textContent()).toContain(state.secondRevision);
      expect(await notice.textContent()).toContain(`was ${state.firstRevision}`);
      expect(await notice.textContent()).toContain('1 record moved');
      const history = await page.getByTestId('revision-history').textContent();
      expect(history).toContain(state.firstRevision);
      expect(history).toContain('Superseded');
      await shot(page, 'topic');

      const headers = { 'X-API-Key': state.key! };
      const old = await fetch(`${t.url}/records/?context__knowledge_unit_topic_id=${state.firstRevision}`, {
        headers,
      });
      expect(await old.json()).toEqual([]);
      const moved = await fetch(
        `${t.url}/records/?context__knowledge_unit_topic_id=${state.secondRevision}`,
        {
          headers,
        },
      );
      expect(((await moved.json()) as { name: string }[]).map((r) => r.name)).toEqual(['RISK-A']);
    },
    STEP,
  );

  it(
    'sorts and filters the records table',
    async () => {
      await page.goto(`${t.url}/topics/${t.demo.tenant.topics.systemRequirements!.historyId}/records`);
      const names = () => page.locator('#records-table tbody th').allTextContents();
      // A row shows the readable id its title gives (REQ_001), not its name too (Requirements-1).
      await expect.poll(names).toEqual(['REQ_001', 'REQ_002', 'REQ_003', 'REQ_004']);
      await shot(page, 'records');
      await page.getByRole('button', { name: 'Record', exact: true }).click();
      await expect.poll(names).toEqual(['REQ_004', 'REQ_003', 'REQ_002', 'REQ_001']);
      await page.getByRole('button', { name: 'Filter columns' }).click();
      await page.getByLabel('Filter Priority').fill('medium');
      await expect.poll(names).toEqual(['REQ_004', 'REQ_003']);
      await page.getByRole('button', { name: 'Clear filters' }).click();
      await expect.poll(names).toHaveLength(4);
    },
    STEP,
  );

  it(
    'downloads an export made by the sdk writers and checks its contents',
    async () => {
      await page.goto(`${t.url}/export?revisions=${state.secondRevision}`);
      await page.getByRole('radio', { name: /^CSV/ }).check();
      await shot(page, 'export');
      const [csv] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Download 1 topic' }).click(),
      ]);
      expect(csv.suggestedFilename()).toMatch(/^rxs-hazard-analysis-\d{4}-\d{2}-\d{2}\.csv$/);
      const text = readFileSync((await csv.path())!, 'utf8').replace(/^\uFEFF/, '');
      const [header, row] = text.trim().split(/\r?\n/);
      expect(header).toContain('hazard,Risk ID,Mitigation');
      expect(row).toContain('RISK-A');
      expect(row).toContain('Burns from hot chamber surfaces');
      expect(row).toContain(`is_related:${t.demo.tenant.topics.systemRequirements!.recordIds[0]}`);

      await page.getByRole('radio', { name: /^ReqIF(?! archive)/ }).check();
      const [reqif] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Download 1 topic' }).click(),
      ]);
      expect(reqif.suggestedFilename()).toMatch(/\.reqif$/);
      const xml = readFileSync((await reqif.path())!, 'utf8');
      expect(xml).toContain('<REQ-IF');
      expect(xml).toContain('Burns from hot chamber surfaces');
    },
    STEP,
  );

  it(
    'deletes a record after confirmation',
    async () => {
      await page.goto(state.recordUrl!.split('?')[0]!);
      await page.getByRole('button', { name: 'Delete', exact: true }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await expect.poll(() => dialog.isVisible()).toBe(false);
      await page.getByRole('button', { name: 'Delete', exact: true }).click();
      await dialog.getByRole('button', { name: 'Delete record' }).click();
      await page.getByText('No records yet').waitFor();
    },
    STEP,
  );

  it(
    'shows users and roles to owners',
    async () => {
      await page.goto(`${t.url}/settings/users`);
      const table = page.getByTestId('users-table');
      await expect.poll(() => table.textContent()).toContain(t.demo.tenant.users.viewer.email);
      await shot(page, 'settings-users');
    },
    STEP,
  );

  it(
    'enforces the permission matrix: a viewer cannot create keys or records',
    async () => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
      context.setDefaultTimeout(10_000);
      const viewer = await signIn(context, t.demo.tenant.users.viewer);
      const requirements = t.demo.tenant.topics.systemRequirements!;

      await viewer.getByRole('link', { name: 'Settings', exact: true }).click();
      await viewer.getByText('Viewers do not create API keys').waitFor();
      expect(await viewer.getByRole('button', { name: 'Create key' }).count()).toBe(0);
      expect(await viewer.getByRole('link', { name: 'Users and roles' }).count()).toBe(0);

      await viewer.goto(`${t.url}/topics/${requirements.historyId}`);
      await viewer.getByTestId('current-revision-id').waitFor();
      expect(await viewer.getByRole('button', { name: /Edit form|Approve/ }).count()).toBe(0);
      await viewer.goto(`${t.url}/topics/${requirements.historyId}/records`);
      await viewer.locator('#records-table').waitFor();
      expect(await viewer.getByRole('link', { name: 'New record' }).count()).toBe(0);
      await viewer.goto(`${t.url}/topics/${requirements.historyId}/records/new`);
      await viewer.getByText('Your role cannot create records').waitFor();
      await viewer.goto(`${t.url}/topics/${requirements.historyId}/records/${requirements.recordIds[1]}`);
      await viewer.getByTestId('links-table').waitFor();
      expect(await viewer.getByRole('button', { name: /^(Edit|Delete|Add link|Remove)/ }).count()).toBe(0);

      // The server refuses too, whatever the page offers.
      const statuses = await viewer.evaluate(async (revisionId) => {
        const session = (await (await fetch('/api/session')).json()) as { csrfToken: string };
        const post = (path: string, body: unknown) =>
          fetch(path, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrfToken },
            body: JSON.stringify(body),
          }).then((r) => r.status);
        return [
          await post('/api/keys', { name: 'sneaky' }),
          await post('/api/records', {
            name: 'x',
            form: {},
            data: {},
            context: { knowledge_unit_topic_id: revisionId },
          }),
        ];
      }, requirements.currentRevisionId);
      expect(statuses).toEqual([403, 403]);
      await context.close();
    },
    STEP,
  );

  it(
    'fits a phone-sized screen',
    async () => {
      const phone = await browser.newContext({
        viewport: { width: 390, height: 844 },
        isMobile: true,
        hasTouch: true,
      });
      const tab = await signIn(phone, t.demo.tenant.users.owner);
      const requirements = t.demo.tenant.topics.systemRequirements!;
      await tab.goto(`${t.url}/topics/${requirements.historyId}`);
      await tab.getByTestId('current-revision-id').waitFor();
      // Nothing but the tables scrolls sideways.
      expect(await tab.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await shot(tab, 'phone-topic');
      await tab.goto(`${t.url}/topics/${requirements.historyId}/records`);
      await tab.locator('#records-table').waitFor();
      expect(await tab.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await shot(tab, 'phone-records');
      await phone.close();
    },
    STEP,
  );
});
