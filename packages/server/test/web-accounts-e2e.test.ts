import { type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';
import { launchChromium } from './support/browser.js';

/** Sign-in across tenants and the audit log, in Debian's chromium against the real server. */
const STEP = 60_000;
const PASSWORD = 'one-password-two-tenants';

describe('web app: accounts end to end', () => {
  let t: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    t = await startTestServer();
    const { accounts } = t.server.app.services;
    // One person, an admin in both tenants with the same password.
    await accounts.createUser(t.demo.tenant.id, {
      email: 'both@example.com',
      role: 'admin',
      password: PASSWORD,
    });
    await accounts.createUser(t.demo.otherTenant.id, {
      email: 'both@example.com',
      role: 'admin',
      password: PASSWORD,
    });
    browser = await launchChromium();
  }, STEP);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it(
    'asks which organisation when the address belongs to two, then signs in to the one chosen',
    async () => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
      context.setDefaultTimeout(10_000);
      const tab = await context.newPage();
      await tab.goto(`${t.url}/`);
      await tab.fill('#email', 'both@example.com');
      await tab.fill('#password', PASSWORD);
      await tab.click('button[type=submit]');
      const organisation = tab.getByLabel('Organisation');
      await organisation.waitFor();
      await organisation.selectOption({ label: t.demo.otherTenant.name });
      await tab.click('button[type=submit]');
      await tab.getByRole('heading', { name: 'Knowledge topics' }).waitFor();
      const session = await tab.evaluate(() => fetch('/api/session').then((r) => r.json()));
      expect(session.user.tenantId).toBe(t.demo.otherTenant.id);

      // The sign-in is in that tenant's audit log, shown in Settings → Users and roles.
      await tab.goto(`${t.url}/settings/users`);
      const log = tab.getByTestId('audit-table');
      await expect.poll(() => log.textContent()).toContain('Signed in');
      expect(await log.textContent()).toContain('both@example.com');
      await context.close();
    },
    STEP,
  );
});
