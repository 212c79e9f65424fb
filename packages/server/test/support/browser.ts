import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

/**
 * The browser of the web app's end-to-end tests: Debian's chromium, driven by playwright-core
 * (which downloads no browser of its own), against the built web app served by the real server.
 */
const CHROMIUM = process.env.RXS_CHROMIUM ?? '/usr/bin/chromium';
const WEB_INDEX = fileURLToPath(new URL('../../../web/dist/index.html', import.meta.url));
/** Set RXS_SCREENSHOT_DIR (e.g. docs/screenshots) to save screenshots of the pages on the way. */
const SCREENSHOTS = process.env.RXS_SCREENSHOT_DIR;

/** Starts a headless chromium, or says what is missing: the browser or the web app's build. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`No browser at ${CHROMIUM}: apt-get install chromium (or set RXS_CHROMIUM).`);
  if (!existsSync(WEB_INDEX)) throw new Error('The web app is not built: run npm run build:web first.');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
}

/**
 * Saves the page as `<name>.png` in RXS_SCREENSHOT_DIR, once it is idle; nothing when unset. The
 * first screen, or with `fullPage` the whole page.
 */
export async function screenshot(
  page: Page,
  name: string,
  options: { fullPage?: boolean } = {},
): Promise<void> {
  if (!SCREENSHOTS) return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.waitForLoadState('networkidle');
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: options.fullPage ?? false });
}

/**
 * A browser with one page signed in as the demo owner, on the topics page: where the web app's
 * end-to-end tests start. Close `browser` when done.
 */
export async function signedInOwner(
  t: { url: string; demo: { tenant: { users: { owner: { email: string; password: string } } } } },
  options: { acceptDownloads?: boolean } = {},
): Promise<{ browser: Browser; page: Page }> {
  const browser = await launchChromium();
  const context = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    acceptDownloads: options.acceptDownloads ?? false,
  });
  context.setDefaultTimeout(10_000);
  const page = await context.newPage();
  await page.goto(`${t.url}/`);
  await page.fill('#email', t.demo.tenant.users.owner.email);
  await page.fill('#password', t.demo.tenant.users.owner.password);
  await page.click('button[type=submit]');
  await page.getByRole('heading', { name: 'Knowledge topics' }).waitFor();
  return { browser, page };
}

/** A violation of an accessibility rule that axe-core found, with the elements it found it on. */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/**
 * The serious and critical accessibility violations axe-core finds on the page as it is now. axe
 * runs inside the page; it is evaluated there by the test driver, which the page's
 * Content-Security-Policy (scripts from the app's origin only) does not restrict.
 */
export async function seriousAxeViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource());
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: AxeRunner }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.map((node) => node.target.join(' ')),
    }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

interface AxeRunner {
  run(
    context: Document,
    options: { resultTypes: string[] },
  ): Promise<{
    violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[];
  }>;
}

let axeScript: string | undefined;

/** axe-core's browser build, from the dev dependencies. */
function axeSource(): string {
  if (axeScript === undefined) {
    let path: string;
    try {
      path = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
    } catch {
      throw new Error('axe-core is not installed: it is a dev dependency of the repository (npm ci).');
    }
    axeScript = readFileSync(path, 'utf8');
  }
  return axeScript;
}
