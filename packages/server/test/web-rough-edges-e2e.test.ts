import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';
import { signedInOwner } from './support/browser.js';

const STEP = 60_000;

/**
 * The web app's finish in a real browser: errors that say what happened and what to do,
 * long text that wraps, a deletion that is confirmed, one voice in validation.
 */
describe('web app end to end: errors, long text, deletion', () => {
  let t: TestServer;
  let browser: Browser;
  let page: Page;
  let historyId: string;
  let revisionId: string;

  beforeAll(async () => {
    t = await startTestServer();
    const topic = t.demo.tenant.topics.systemRequirements!;
    historyId = topic.historyId;
    revisionId = topic.currentRevisionId;
    ({ browser, page } = await signedInOwner(t));
  }, STEP);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const record = async (name: string) => {
    const res = await t.api('POST', '/records/', {
      body: {
        name,
        form: {},
        data: { name: 'REQ_900 — Long text', description: 'x'.repeat(400) },
        context: { knowledge_unit_topic_id: revisionId },
      },
    });
    expect(res.status, res.text).toBe(201);
    return res.body._id as string;
  };
  const context = () => page.context();
  const pageWidth = () => page.evaluate(() => document.documentElement.scrollWidth);

  it(
    'a malformed address and a deleted record say what happened, without a useless "Try again"',
    async () => {
      await page.goto(`${t.url}/topics/not-an-id`);
      await page.getByText('This address is not valid').waitFor();
      expect(await page.getByText(/Check the link you followed/).count()).toBe(1);
      expect(await page.getByText('Something went wrong').count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Try again' }).count()).toBe(0);

      await page.goto(`${t.url}/topics/${historyId}/records/0123456789abcdef01234567`);
      await page.getByText('Not found').first().waitFor();
      expect(await page.getByText(/It may have been deleted, or the link is wrong/).count()).toBe(1);
      expect(await page.getByRole('button', { name: 'Try again' }).count()).toBe(0);
    },
    STEP,
  );

  it(
    'a 300-character name wraps: neither the record page nor the table gets wider than the window',
    async () => {
      const long = `REQ-${'Sterilization'.repeat(23)}`.slice(0, 300);
      const id = await record(long);
      await page.goto(`${t.url}/topics/${historyId}/records/${id}`);
      await page.getByRole('heading', { name: long.slice(0, 40) }).waitFor();
      expect(await pageWidth()).toBeLessThanOrEqual(1280);
      await page.goto(`${t.url}/topics/${historyId}/records`);
      // The row shows the readable id of its title (REQ_900), with its 400-character description.
      await page.getByRole('link', { name: 'REQ_900' }).first().waitFor();
      expect(await pageWidth()).toBeLessThanOrEqual(1280);
    },
    STEP,
  );

  it(
    'the records table keeps sort, filters and search in the address: after Back, after a reload, shared',
    async () => {
      await page.goto(`${t.url}/topics/${historyId}/records`);
      const names = () => page.locator('#records-table tbody th').allTextContents();
      await expect.poll(names).toContain('REQ_001');
      await page.getByRole('button', { name: 'Record', exact: true }).click();
      await page.getByRole('button', { name: 'Filter columns' }).click();
      await page.getByLabel('Filter Priority').fill('medium');
      await expect.poll(names).toEqual(['REQ_004', 'REQ_003']);
      await expect.poll(() => page.url()).toContain('dir=desc');
      const shared = page.url();
      expect(new URL(shared).searchParams.get('filters')).toBe('{"Priority":"medium"}');

      // Into a record and Back: the same view.
      await page.getByRole('link', { name: 'REQ_004' }).click();
      await page.getByRole('heading', { name: 'Requirements-4' }).waitFor();
      await page.goBack();
      await expect.poll(names).toEqual(['REQ_004', 'REQ_003']);
      // A reload, and the address opened fresh (as someone it was sent to): the same view.
      await page.reload();
      await expect.poll(names).toEqual(['REQ_004', 'REQ_003']);
      const other = await context().newPage();
      await other.goto(shared);
      await expect
        .poll(() => other.locator('#records-table tbody th').allTextContents())
        .toEqual(['REQ_004', 'REQ_003']);
      expect(await other.getByLabel('Filter Priority').inputValue()).toBe('medium');
      await other.close();
    },
    STEP,
  );

  it(
    "the form speaks with the service's voice: the browser's check says what the server says",
    async () => {
      const tests = t.demo.tenant.topics.verificationTests!;
      await page.goto(`${t.url}/topics/${tests.historyId}/records/new`);
      await page.locator('.form-js-host .fjs-form').waitFor();
      const field = (label: string) => page.locator('.form-js-host').getByLabel(label, { exact: false });
      await page.fill('#record-name', 'TC-900');
      await field('Test ID').fill('TC-900');
      await field('Title').fill('Door seal leak test');
      await field('Duration (min)').fill('-5');
      const refused = page.waitForResponse(
        (r) => r.url().endsWith('/api/records') && r.request().method() === 'POST',
      );
      await page.getByRole('button', { name: 'Create record' }).click();
      expect((await refused).status()).toBe(422);
      const errors = page.locator('.form-js-host .fjs-form-field-error');
      await expect
        .poll(() => errors.allTextContents())
        .toContain('Field "Duration (min)" (number_3lm0ze) must be at least 0, not -5');
      // Now the browser checks the field as it changes, with no request: the same words.
      await field('Duration (min)').fill('-7');
      await expect
        .poll(() => errors.allTextContents())
        .toContain('Field "Duration (min)" (number_3lm0ze) must be at least 0, not -7');
      expect((await errors.allTextContents()).join(' ')).not.toContain('Field must have minimum value');
      expect(await page.getByTestId('validation-summary').textContent()).toMatch(
        /^The server found 2 problems; they are marked on the fields below\.$/,
      );
    },
    STEP,
  );

  it(
    'the form designer offers no Image view or iFrame, which the page may not load',
    async () => {
      await page.goto(`${t.url}/topics/${t.demo.tenant.topics.verificationTests!.historyId}`);
      await page.getByRole('button', { name: 'Edit form' }).click();
      await page.locator('.fjs-palette-field').first().waitFor();
      const entry = (type: string) => page.locator(`.fjs-palette-field[data-field-type="${type}"]`);
      expect(await entry('textfield').isVisible()).toBe(true);
      expect(await entry('image').count()).toBe(1);
      expect(await entry('image').isVisible()).toBe(false);
      expect(await entry('iframe').isVisible()).toBe(false);
    },
    STEP,
  );

  it(
    'the designer shows a live preview and the schema JSON; on a phone it says it needs a wider screen',
    async () => {
      // A draft of Verification Tests (the palette test above may have opened it already).
      const vt = t.demo.tenant.topics.verificationTests!.currentRevisionId;
      expect([201, 409]).toContain((await t.api('POST', `/kt/${vt}/draft`)).status);
      await page.goto(`${t.url}/topics/${t.demo.tenant.topics.verificationTests!.historyId}/design`);
      const preview = page.getByTestId('design-preview');
      await preview.locator('.fjs-form').waitFor();
      expect(await preview.getByLabel('Test ID', { exact: false }).count()).toBeGreaterThan(0);
      await page.getByText('Import a form-js schema (JSON)').click();
      await page.fill(
        '#schema-json',
        JSON.stringify({
          components: [{ type: 'textfield', key: 'batch', label: 'Sterilizer batch number' }],
        }),
      );
      await page.getByRole('button', { name: 'Load into the editor' }).click();
      await preview.getByLabel('Sterilizer batch number').first().waitFor();
      // One form in the preview: the one of the design as it is now.
      expect(await preview.locator('.fjs-form').count()).toBe(1);
      expect(await preview.getByLabel('Test ID', { exact: false }).count()).toBe(0);
      await page.getByTestId('design-schema').locator('summary').click();
      expect(await page.getByTestId('design-schema').locator('code').textContent()).toContain(
        '"key": "batch"',
      );

      const phone = await page
        .context()
        .browser()!
        .newContext({ viewport: { width: 390, height: 844 } });
      const small = await phone.newPage();
      // A new browser: sign in on the phone, which then shows the designer's address.
      await small.goto(page.url());
      await small.fill('#email', t.demo.tenant.users.owner.email);
      await small.fill('#password', t.demo.tenant.users.owner.password);
      await small.click('button[type=submit]');
      await small.getByTestId('design-preview').waitFor();
      await small.getByText('The form designer needs a wider screen').waitFor();
      expect(await small.locator('.design-layout').isVisible()).toBe(false);
      expect(await small.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await phone.close();
    },
    STEP,
  );

  it(
    'a deleted record is confirmed on the records page, with the way to its history',
    async () => {
      const id = await record('REQ-DEL Delete me');
      await page.goto(`${t.url}/topics/${historyId}/records/${id}`);
      await page.getByRole('button', { name: 'Delete', exact: true }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Delete record' }).click();
      await page.getByText('Record “REQ-DEL Delete me” deleted').waitFor();
      expect(page.url()).toContain(`/topics/${historyId}/records`);
      await page.getByRole('link', { name: 'at its address' }).click();
      await page.waitForURL(`**/records/${id}`);
    },
    STEP,
  );

  it(
    'approving a form that adds a required field warns which records would no longer validate, and the table flags them',
    async () => {
      const draft = await t.api('POST', `/kt/${revisionId}/draft`);
      expect(draft.status, draft.text).toBe(201);
      const schema = draft.body.knowledge_topic_schema;
      const patched = await t.api('PATCH', `/kt/${draft.body._id}`, {
        body: {
          knowledge_topic_schema: {
            ...schema,
            components: [
              ...schema.components,
              { type: 'textfield', key: 'trace_ref', label: 'Trace reference', validate: { required: true } },
            ],
          },
        },
      });
      expect(patched.status, patched.text).toBe(200);
      const count = (await t.api('GET', `/records/count?context__knowledge_unit_topic_id=${revisionId}`)).body
        .count;

      await page.goto(`${t.url}/topics/${historyId}`);
      await page.getByRole('button', { name: 'Approve draft' }).first().click();
      const impact = page.getByRole('dialog').getByTestId('approval-impact');
      await impact.waitFor();
      expect(await page.getByRole('dialog').textContent()).toContain(
        `${count} of ${count} records would not validate`,
      );
      expect(await impact.textContent()).toContain(
        'Requirements-1: Field "Trace reference" (trace_ref) is required',
      );
      await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();

      // Approved anyway (through the API): the table flags every record that can no longer be saved.
      const approved = await t.api('POST', `/kt/${draft.body._id}/approve`);
      expect(approved.status, approved.text).toBe(200);
      await page.goto(`${t.url}/topics/${historyId}/records`);
      await page.locator('#records-table tbody tr').first().waitFor();
      const flagged = page.locator('#records-table tbody th .badge-warning');
      await expect.poll(() => flagged.count()).toBe(Math.min(count, 50));
      expect(await flagged.first().textContent()).toBe('Does not validate');
    },
    STEP,
  );
});
