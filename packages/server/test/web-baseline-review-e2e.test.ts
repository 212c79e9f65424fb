import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';
import { screenshot, seriousAxeViolations, signedInOwner } from './support/browser.js';

/**
 * Baseline review in Debian's chromium against the real server: the owner proposes a baseline with
 * two signers, the editor signs it in their own session (after a wrong password), and the owner's
 * signature releases it; the released baseline downloads as a PDF document.
 */
const STEP = 60_000;

describe('web app end to end: baseline review and release', () => {
  let t: TestServer;
  let browser: Browser;
  let owner: Page;
  let editorContext: BrowserContext;
  let editor: Page;
  const users = () => t.demo.tenant.users;
  const rowOf = (page: Page, name: string) =>
    page.getByTestId('baselines-table').locator('tr', { has: page.getByRole('rowheader', { name }) });

  beforeAll(async () => {
    t = await startTestServer();
    ({ browser, page: owner } = await signedInOwner(t, { acceptDownloads: true }));
    editorContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    editorContext.setDefaultTimeout(10_000);
    editor = await editorContext.newPage();
    await editor.goto(`${t.url}/`);
    await editor.fill('#email', users().editor.email);
    await editor.fill('#password', users().editor.password);
    await editor.click('button[type=submit]');
    await editor.getByRole('heading', { name: 'Knowledge topics' }).waitFor();
  }, STEP);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it(
    'proposes a baseline with two signers, who see it proposed and waiting for them',
    async () => {
      await owner.goto(`${t.url}/topics/baselines`);
      await owner.getByRole('heading', { name: 'New baseline' }).waitFor();
      await owner.fill('#baseline-name', 'v3.0');
      await owner
        .getByRole('checkbox', { name: new RegExp(t.demo.tenant.topics.systemRequirements!.name) })
        .check();
      await owner.getByRole('button', { name: 'Create baseline' }).waitFor();

      await owner.selectOption('#baseline-signer-user', { label: `${users().owner.email} (owner)` });
      await owner.selectOption('#baseline-signer-meaning', 'approved');
      await owner.getByRole('button', { name: 'Add signer' }).click();
      await owner.selectOption('#baseline-signer-user', { label: `${users().editor.email} (editor)` });
      // An editor may not be asked for "approved": the page says so before the server would.
      await owner.getByText('only owners and admins may sign as Approved').waitFor();
      await owner.selectOption('#baseline-signer-meaning', 'reviewed');
      await owner.getByRole('button', { name: 'Add signer' }).click();
      const chosen = owner.getByTestId('chosen-signers');
      await expect.poll(() => chosen.textContent()).toContain(users().editor.email);

      await owner.getByRole('button', { name: 'Propose for review' }).click();
      await owner.getByText('Baseline proposed').waitFor();
      const row = rowOf(owner, 'v3.0');
      await expect.poll(() => row.textContent()).toContain('Proposed');
      const text = (await row.textContent())!;
      expect(text).toContain(`${users().owner.email} (approved): waiting`);
      expect(text).toContain(`${users().editor.email} (reviewed): waiting`);
      // The owner is asked to sign too.
      await row.getByRole('button', { name: 'Sign v3.0' }).waitFor();
      expect(await seriousAxeViolations(owner)).toEqual([]);
    },
    STEP,
  );

  it(
    'signs as the editor: a wrong password is told at the field, then the signature shows',
    async () => {
      await editor.goto(`${t.url}/topics/baselines`);
      const row = rowOf(editor, 'v3.0');
      await row.getByRole('button', { name: 'Sign v3.0' }).click();
      const dialog = editor.getByRole('dialog');
      await dialog.getByText('Your signature means Reviewed').waitFor();
      await dialog.getByLabel('Your password').fill('not the password');
      await dialog.getByRole('button', { name: 'Sign baseline' }).click();
      const password = dialog.getByLabel('Your password');
      await expect.poll(() => password.getAttribute('aria-invalid')).toBe('true');
      await dialog.getByText('The password is wrong, so nothing was signed').waitFor();
      expect(await seriousAxeViolations(editor)).toEqual([]);
      await screenshot(editor, 'baseline-sign-dialog');

      await dialog.getByLabel('Reason (optional)').fill('Review minutes 12');
      await password.fill(users().editor.password);
      await dialog.getByRole('button', { name: 'Sign baseline' }).click();
      await editor.getByText('“v3.0” waits for 1 more signature').waitFor();
      await expect.poll(() => row.textContent()).toContain(`${users().editor.email} (reviewed): signed`);
      expect(await row.textContent()).toContain('Review minutes 12');
      expect(await row.getByRole('button', { name: 'Sign v3.0' }).count()).toBe(0);
    },
    STEP,
  );

  it(
    'releases at the owner’s signature; a released baseline offers nothing to sign',
    async () => {
      await owner.reload();
      const row = rowOf(owner, 'v3.0');
      await expect.poll(() => row.textContent()).toContain(`${users().editor.email} (reviewed): signed`);
      expect(await row.textContent()).toContain('Proposed');
      await row.getByRole('button', { name: 'Sign v3.0' }).click();
      const dialog = owner.getByRole('dialog');
      await dialog.getByText('Your signature means Approved').waitFor();
      await dialog.getByLabel('Your password').fill(users().owner.password);
      await dialog.getByRole('button', { name: 'Sign baseline' }).click();
      await owner.getByText('Signed: the baseline is released').waitFor();
      await expect.poll(() => row.textContent()).toContain('Released');
      expect(await row.textContent()).toContain(`${users().owner.email} (approved): signed`);
      expect(await row.getByRole('button', { name: /^(Sign|Refuse) v3\.0$/ }).count()).toBe(0);
      expect(await seriousAxeViolations(owner)).toEqual([]);
      await screenshot(owner, 'baseline-review', { fullPage: true });

      const released = await t.api('GET', `/baselines/?name=v3.0`);
      expect(released.body[0]).toMatchObject({ status: 'released' });
      expect(released.body[0].signatures).toHaveLength(2);
    },
    STEP,
  );

  it(
    'downloads the released baseline as a PDF document',
    async () => {
      const row = rowOf(owner, 'v3.0');
      const button = row.getByRole('button', { name: 'Download PDF of v3.0' });
      const [pdf] = await Promise.all([owner.waitForEvent('download'), button.click()]);
      expect(pdf.suggestedFilename()).toMatch(/^rxs-v3-0-\d{4}-\d{2}-\d{2}\.pdf$/);
      expect(
        readFileSync((await pdf.path())!)
          .subarray(0, 5)
          .toString(),
      ).toBe('%PDF-');
      await owner.getByText(/Downloaded rxs-v3-0-.*\.pdf/).waitFor();
      await row.getByRole('button', { name: 'Download Word of v3.0' }).waitFor();
      expect(await seriousAxeViolations(owner)).toEqual([]);
    },
    STEP,
  );

  it(
    'downloads topics as they are now as a PDF document from the Export page',
    async () => {
      const revision = t.demo.tenant.topics.systemRequirements!.currentRevisionId;
      await owner.goto(`${t.url}/export?revisions=${revision}`);
      await owner.getByRole('radio', { name: /^PDF document/ }).check();
      // A document always carries the traces and the labels: the options say so.
      expect(await owner.getByRole('checkbox', { name: /Include the traces/ }).isChecked()).toBe(true);
      const [pdf] = await Promise.all([
        owner.waitForEvent('download'),
        owner.getByRole('button', { name: 'Download 1 topic' }).click(),
      ]);
      expect(pdf.suggestedFilename()).toMatch(/^rxs-system-requirements-\d{4}-\d{2}-\d{2}\.pdf$/);
      expect(
        readFileSync((await pdf.path())!)
          .subarray(0, 5)
          .toString(),
      ).toBe('%PDF-');
      await owner.getByRole('radio', { name: /^Word document \(DOCX\)/ }).waitFor();
      expect(await seriousAxeViolations(owner)).toEqual([]);
    },
    STEP,
  );
});
