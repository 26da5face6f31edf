import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { chromeFlags } from '../../src/performance/chrome-flags.js';
import type { TestSite } from './wordpress/test-site.js';

/**
 * The daemon's own no-phoning-home flags (background networking, component updates and sync
 * off; names other than loopback do not resolve; anything else goes to a dead loopback proxy),
 * behind the request blocking below. Playwright adds its own headless switch.
 */
const CHROMIUM_ARGS = [
  ...chromeFlags({ auditedHost: '127.0.0.1', runningAsRoot: process.getuid?.() === 0, blockThirdParty: true }).filter(
    (flag) => !flag.startsWith('--headless'),
  ),
  '--disable-features=Translate,OptimizationHints,MediaRouter',
];

/**
 * Runs `work` with a page of Debian's Chromium on a fresh profile, always closed afterwards.
 * Nothing a page asks for may leave the machine, not even an attempt.
 */
export async function withBrowserPage<T>(work: (page: Page) => Promise<T>): Promise<T> {
  // Playwright insists on owning --user-data-dir; a fresh directory per call is the same thing.
  const profileDir = mkdtempSync(join(tmpdir(), 'sitewarden-chromium-'));
  const trace = browserTrace();
  const context = await chromium
    .launchPersistentContext(profileDir, {
      executablePath: '/usr/bin/chromium',
      headless: true,
      args: CHROMIUM_ARGS,
      timeout: 30_000,
    })
    .catch((error: unknown) => {
      trace.stop();
      rmSync(profileDir, { recursive: true, force: true });
      throw error;
    });
  let closing = false;
  context.on('close', () => closing || trace.note('the browser context closed before the test was done'));
  try {
    await context.route('**/*', (route) =>
      staysOnMachine(route.request().url()) ? route.continue() : route.abort('blockedbyclient'),
    );
    const page = context.pages()[0] ?? (await context.newPage());
    page.on('crash', () => trace.note(`the page crashed at ${page.url()}`));
    page.setDefaultTimeout(20_000);
    return await work(page);
  } catch (error) {
    throw trace.explain(error);
  } finally {
    closing = true;
    trace.stop();
    await context.close().catch(() => undefined);
    rmSync(profileDir, { recursive: true, force: true });
  }
}

const TRACED_SIGNALS = ['SIGTERM', 'SIGHUP', 'SIGINT'] as const;

/**
 * What happened to the browser while a test used it: its context closing or its page crashing
 * under the test, and any signal this test process received (Playwright closes its browsers on
 * SIGTERM, SIGHUP and SIGINT). A test that fails on a closed page then says why.
 */
function browserTrace() {
  const lines: string[] = [];
  const note = (line: string) => lines.push(`${new Date().toISOString()} ${line}`);
  const onSignal = (signal: NodeJS.Signals) => note(`this test process (pid ${process.pid}) received ${signal}`);
  for (const signal of TRACED_SIGNALS) process.on(signal, onSignal);
  return {
    note,
    stop: () => {
      for (const signal of TRACED_SIGNALS) process.off(signal, onSignal);
    },
    explain(error: unknown): unknown {
      if (lines.length > 0 && error instanceof Error) error.message += `\n\nWhile the test ran:\n${lines.join('\n')}`;
      return error;
    },
  };
}

/** Fills in wp-login.php as the site's administrator, when WordPress shows it. */
export async function logInIfAsked(page: Page, site: TestSite): Promise<void> {
  if (!new URL(page.url()).pathname.endsWith('/wp-login.php')) return;
  await page.fill('#user_login', site.admin.username);
  await page.fill('#user_pass', site.admin.password);
  // click() waits for the navigation it starts; the load state for the page it leads to.
  await page.click('#wp-submit');
  await page.waitForLoadState();
  if (new URL(page.url()).pathname.endsWith('/wp-login.php')) {
    throw new Error(`could not log in as ${site.admin.username}:\n${await bodyText(page)}`);
  }
}

export async function bodyText(page: Page): Promise<string> {
  return page
    .locator('body')
    .innerText()
    .catch(() => '');
}

function staysOnMachine(url: string): boolean {
  const { protocol, hostname } = new URL(url);
  if (protocol === 'data:' || protocol === 'blob:' || protocol === 'about:') return true;
  if (!['http:', 'https:', 'ws:', 'wss:'].includes(protocol)) return false;
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
