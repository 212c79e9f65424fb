import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';
import { screenshot, signedInOwner } from './support/browser.js';
import { approvedTopic, NOTE_SCORE_SCHEMA as SCHEMA } from './support/topics.js';

const STEP = 60_000;

/** A sheet of someone's own: one column misnamed, one row with a score that is no number. */
const CSV =
  'name,Notte,Score\r\n' +
  'P-1 Pump flow,Flow within 5 %,3\r\n' +
  'P-2 Occlusion alarm,Alarm within 30 s,eleven\r\n' +
  'P-3 Battery,Runs 8 h,7\r\n';

/**
 * The import page in Debian's chromium against the real server: a CSV chosen, checked (the column
 * mapping with a column that names no field, the rows as checked), a column mapped to its field,
 * the valid rows imported, and the records in the table.
 */
describe('web app end to end: import', () => {
  let t: TestServer;
  let browser: Browser;
  let page: Page;
  let revision: string;
  let historyId: string;

  beforeAll(async () => {
    t = await startTestServer();
    revision = await approvedTopic(t, 'Pump requirements', { schema: SCHEMA });
    historyId = (await t.api('GET', `/kt/${revision}`)).body.knowledge_topic_history_id;
    ({ browser, page } = await signedInOwner(t));
  }, STEP);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it(
    'checks a CSV, maps a column, imports the valid rows and shows them in the table',
    async () => {
      await page.goto(`${t.url}/topics/${historyId}/records`);
      await page.getByRole('heading', { name: 'Records of Pump requirements' }).waitFor();
      await page.getByRole('link', { name: 'Import' }).click();
      await page.getByRole('heading', { name: 'Import into Pump requirements' }).waitFor();
      await page.setInputFiles('#import-file', {
        name: 'pump.csv',
        mimeType: 'text/csv',
        buffer: Buffer.from(CSV),
      });
      await page.fill('#import-reason', 'Requirements from the pump review');
      await page.getByRole('button', { name: 'Check', exact: true }).click();

      // The column that names no field stops the import: nothing can be written yet.
      const counts = page.getByTestId('import-counts');
      await counts.waitFor();
      await page.getByText('“pump.csv” cannot be imported as it is').waitFor();
      expect(await page.getByText(/Column "Notte" names no field/).count()).toBeGreaterThan(0);
      const importButton = page.getByRole('button', { name: /^Import \d+ records?$/ });
      expect(await importButton.isDisabled()).toBe(true);
      expect(await page.getByTestId('import-columns').textContent()).toContain('Names no field: choose one');

      // Mapped to its field, the file checks: one row rejected, with its reason.
      await page.getByLabel('Field for the column Notte').selectOption('note');
      await page.getByRole('button', { name: 'Check again' }).click();
      await page.getByText('1 row of “pump.csv” rejected').waitFor();
      expect(await counts.textContent()).toContain(
        '3 rows checked, nothing written: 2 would be created, 0 would be updated, 0 unchanged, 1 rejected',
      );
      const preview = page.getByTestId('import-preview');
      const rows = await preview.locator('tbody tr').allTextContents();
      expect(rows).toHaveLength(3);
      expect(rows[0]).toContain('P-1 Pump flow');
      expect(rows[0]).toContain('Create');
      expect(rows[1]).toContain('Rejected');
      expect(rows[1]).toMatch(/takes a number, not "eleven"/);
      expect(await importButton.isDisabled()).toBe(true);
      await screenshot(page, 'import-check', { fullPage: true });

      // Writing the valid rows is a choice, checked again before it is made.
      await page.getByLabel(/Write the valid rows even if some are rejected/).check();
      expect(await importButton.isDisabled()).toBe(true);
      await page.getByRole('button', { name: 'Check again' }).click();
      await page.getByText('1 row of “pump.csv” rejected').waitFor();
      await importButton.click();
      await page.getByText('Imported “pump.csv” in part').waitFor();
      expect(await page.getByTestId('import-result-counts').textContent()).toBe(
        '2 created, 0 updated, 0 unchanged, 1 rejected.',
      );
      expect(await page.getByTestId('import-row-problems').textContent()).toContain('line 3');

      await page.getByRole('link', { name: 'Open the records' }).click();
      await page.getByRole('heading', { name: 'Records of Pump requirements' }).waitFor();
      const table = page.locator('#records-table');
      await table.waitFor();
      const names = await table.locator('tbody th[scope=row]').allTextContents();
      expect(names.sort()).toEqual(['P-1 Pump flow', 'P-3 Battery']);
      expect(await table.textContent()).toContain('Runs 8 h');
      const [record] = (await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}`)).body;
      const history = await t.api('GET', `/records/${record._id}/versions`);
      expect(JSON.stringify(history.body)).toContain('Requirements from the pump review');
    },
    STEP,
  );
});
