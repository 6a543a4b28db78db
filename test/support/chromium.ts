// Headless Chromium from Debian (/usr/bin/chromium) driven by playwright-core: the console's browser tests and the
// screenshot script share this launch and the watch on requests and console messages.
import { chromium, type Browser, type Page } from 'playwright-core';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

export const CHROMIUM = '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
}

export interface PageWatch {
  /** requests to any origin but the server's */
  outside: string[];
  /** console messages of type error, and uncaught page errors */
  errors: string[];
  /** responses with a status >= 400, as "METHOD path status" */
  failures: string[];
}

export function watchPage(page: Page, origin: string): PageWatch {
  const watch: PageWatch = { outside: [], errors: [], failures: [] };
  page.on('request', (r) => { if (!r.url().startsWith(origin + '/')) watch.outside.push(r.url()); });
  page.on('console', (m) => { if (m.type() === 'error') watch.errors.push(m.text()); });
  page.on('pageerror', (e) => watch.errors.push(`uncaught: ${e.message}`));
  page.on('response', (r) => {
    if (r.status() >= 400) watch.failures.push(`${r.request().method()} ${new URL(r.url()).pathname} ${r.status()}`);
  });
  return watch;
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }

/** axe-core run in the page (evaluated through the debugging protocol, so the page's CSP stays as it is). */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  const result = await page.evaluate(() => (window as unknown as { axe: { run(ctx: Document, o: object): Promise<{ violations: AxeViolation[] }> } })
    .axe.run(document, { resultTypes: ['violations'] }));
  return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }));
}

/** Fails the test on an axe-core violation of serious or critical impact on `screen`. */
export async function assertAccessible(page: Page, screen: string): Promise<void> {
  const bad = (await axeViolations(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(bad, [], `axe-core on ${screen}`);
}

/** How long a page action or a wait may take: CI runs the browser beside other suites on two cores. */
export const PAGE_TIMEOUT_MS = 30_000;

/** Waits (PAGE_TIMEOUT_MS at most) until `check` holds, else fails naming `what`. */
export async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (const end = Date.now() + PAGE_TIMEOUT_MS; Date.now() < end;) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`waited in vain for ${what}`);
}

/** Opens the console at `origin` and signs in with a password (no second factor), until the device list shows. */
export async function signInToConsole(page: Page, origin: string, email: string, password: string): Promise<void> {
  await page.goto(`${origin}/console/`);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Devices', level: 1 }).waitFor();
}
