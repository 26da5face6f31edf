import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import type { TestSite } from './test-site.js';

export interface ApprovalResult {
  /** Where the browser ended up: normally the success_url / reject_url with WordPress's query parameters. */
  finalUrl: string;
  /** Visible text of that page. */
  body: string;
}

/**
 * Chromium without any phoning home. The last two flags are a second fence
 * behind the request blocking below: names other than localhost do not resolve,
 * and any non-loopback connection would go to a dead loopback proxy.
 */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-domain-reliability',
  '--disable-client-side-phishing-detection',
  '--metrics-recording-only',
  '--disable-features=Translate,OptimizationHints,MediaRouter',
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1',
  '--proxy-server=http://127.0.0.1:9',
];

/**
 * Plays the site administrator on wp-admin/authorize-application.php: logs in
 * when WordPress asks, then approves (or rejects) the connection and follows the
 * redirect to the application's callback. One browser per call, always closed.
 */
export async function approveApplicationAuthorization(
  site: TestSite,
  authorizeUrl: string,
  opts: { reject?: boolean } = {},
): Promise<ApprovalResult> {
  // Playwright insists on owning --user-data-dir; a fresh directory per call is the same thing.
  const profileDir = mkdtempSync(join(tmpdir(), 'sitewarden-chromium-'));
  let context: BrowserContext | undefined;
  try {
    context = await chromium.launchPersistentContext(profileDir, {
      executablePath: '/usr/bin/chromium',
      headless: true,
      args: CHROMIUM_ARGS,
      timeout: 30_000,
    });
    // Nothing a page asks for may leave the machine, not even an attempt.
    await context.route('**/*', (route) => (staysOnMachine(route.request().url()) ? route.continue() : route.abort('blockedbyclient')));
    const page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(15_000);

    await page.goto(authorizeUrl);
    if (new URL(page.url()).pathname.endsWith('/wp-login.php')) {
      await page.fill('#user_login', site.admin.username);
      await page.fill('#user_pass', site.admin.password);
      // click() waits for the navigation it starts; the load state for the page it leads to.
      await page.click('#wp-submit');
      await page.waitForLoadState();
      if (new URL(page.url()).pathname.endsWith('/wp-login.php')) {
        throw new Error(`could not log in as ${site.admin.username}:\n${await bodyText(page)}`);
      }
    }

    const button = page.locator(opts.reject ? '#reject' : '#approve');
    if (!(await button.isVisible())) {
      throw new Error(`no ${opts.reject ? 'reject' : 'approve'} button on ${page.url()}:\n${await bodyText(page)}`);
    }
    await button.click();

    const done =
      !opts.reject && !new URL(authorizeUrl).searchParams.get('success_url')
        ? // Without a success_url WordPress shows the new password on the same page.
          page.locator('#new-application-password-value').waitFor()
        : page.waitForURL((url) => !url.pathname.endsWith('/authorize-application.php'));
    // auth-app.js reports a failed REST call in an error notice instead of navigating.
    const failed = page
      .locator('.notice-error')
      .waitFor()
      .then(async () => {
        throw new Error(`WordPress refused the approval: ${await page.locator('.notice-error').innerText()}`);
      });
    failed.catch(() => undefined);
    await Promise.race([done, failed]);
    if (page.url().startsWith('chrome-error:')) {
      throw new Error(`the browser could not load the redirect target after ${opts.reject ? 'rejecting' : 'approving'}`);
    }
    return { finalUrl: page.url(), body: await bodyText(page) };
  } finally {
    await context?.close().catch(() => undefined);
    rmSync(profileDir, { recursive: true, force: true });
  }
}

function staysOnMachine(url: string): boolean {
  const { protocol, hostname } = new URL(url);
  if (protocol === 'data:' || protocol === 'blob:' || protocol === 'about:') return true;
  if (!['http:', 'https:', 'ws:', 'wss:'].includes(protocol)) return false;
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

async function bodyText(page: Page): Promise<string> {
  return page.locator('body').innerText().catch(() => '');
}
