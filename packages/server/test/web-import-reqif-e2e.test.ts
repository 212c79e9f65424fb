import { readFileSync } from 'node:fs';
import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';
import { screenshot, signedInOwner } from './support/browser.js';
import { approvedTopic } from './support/topics.js';

const STEP = 60_000;

/** Polarion's round trip file: a heading and a system requirement, each of its own spec object type. */
const POLARION = readFileSync(
  new URL('../../exchange/test/fixtures/reqif/polarion-roundtrip.reqif', import.meta.url),
);

/**
 * The import page in Debian's chromium against the real server, with a ReqIF file of two spec
 * object types: checked, the type chosen among those the check names, its attributes mapped as
 * columns, imported, and its record in the table with the spec object's IDENTIFIER as source id.
 */
describe('web app end to end: import of a ReqIF file', () => {
  let t: TestServer;
  let browser: Browser;
  let page: Page;
  let revision: string;
  let historyId: string;

  beforeAll(async () => {
    t = await startTestServer();
    revision = await approvedTopic(t, 'System requirements');
    historyId = (await t.api('GET', `/kt/${revision}`)).body.knowledge_topic_history_id;
    ({ browser, page } = await signedInOwner(t));
  }, STEP);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it(
    'checks a ReqIF file, offers its spec object types, maps its attributes, imports and shows the record',
    async () => {
      await page.goto(`${t.url}/topics/${historyId}/records`);
      await page.getByRole('link', { name: 'Import' }).click();
      await page.getByRole('heading', { name: 'Import into System requirements' }).waitFor();
      await page.setInputFiles('#import-file', {
        name: 'polarion.reqif',
        mimeType: 'application/xml',
        buffer: POLARION,
      });
      expect(await page.locator('#import-key option:checked').textContent()).toBe(
        "The spec object's IDENTIFIER",
      );
      await page.getByRole('button', { name: 'Check', exact: true }).click();

      // Two spec object types: the check names them, and the page offers them to choose from.
      await page.getByText('"polarion.reqif" has 2 spec object types').waitFor();
      const types = page.locator('select#import-spec-type');
      await types.waitFor();
      expect(await types.locator('option').allTextContents()).toEqual([
        'Choose one',
        'Heading',
        'System Requirement',
      ]);
      await types.selectOption('System Requirement');
      await page.getByRole('button', { name: 'Check', exact: true }).click();

      // Its attributes are the columns: one the form lacks is left out, the text mapped to a field.
      await page.getByText('“polarion.reqif” cannot be imported as it is').waitFor();
      expect(await page.getByText(/Column "Status" names no field/).count()).toBeGreaterThan(0);
      await page.getByLabel('Field for the column Status').selectOption('');
      await page.getByLabel('Field for the column ReqIF.Text').selectOption('note');
      await page.getByRole('button', { name: 'Check again' }).click();
      await page.getByText('“polarion.reqif” is ready to import').waitFor();
      expect(await page.getByTestId('import-counts').textContent()).toContain(
        '1 row checked, nothing written: 1 would be created',
      );
      expect(await page.getByTestId('import-preview').textContent()).toContain('SW: Lorem Ipsum');
      await screenshot(page, 'import-reqif-check', { fullPage: true });

      await page.getByRole('button', { name: 'Import 1 record' }).click();
      await page.getByText('Imported “polarion.reqif”').waitFor();
      expect(await page.getByTestId('import-result-counts').textContent()).toBe(
        '1 created, 0 updated, 0 unchanged, 0 rejected.',
      );
      expect(await page.getByTestId('import-relations').textContent()).toContain(
        '0 SPEC-RELATIONs of the file',
      );

      await page.getByRole('link', { name: 'Open the records' }).click();
      await page.getByRole('heading', { name: 'Records of System requirements' }).waitFor();
      const table = page.locator('#records-table');
      await table.waitFor();
      expect(await table.locator('tbody th[scope=row]').allTextContents()).toEqual(['SW: Lorem Ipsum']);
      const [record] = (await t.api('GET', `/records/?context__knowledge_unit_topic_id=${revision}`)).body;
      expect(record.context.global_element_id).toBe('rmf-1d312f18-fa7c-4de3-b8f3-ab105179fddf');
      expect(record.data.note).toContain('Lorem');
    },
    STEP,
  );
});
