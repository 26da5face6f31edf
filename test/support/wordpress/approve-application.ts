import { bodyText, logInIfAsked, withBrowserPage } from '../browser.js';
import type { TestSite } from './test-site.js';

export interface ApprovalResult {
  /** Where the browser ended up: normally the success_url / reject_url with WordPress's query parameters. */
  finalUrl: string;
  /** Visible text of that page. */
  body: string;
  /** Every address the tab loaded a page from, redirects included, in order. */
  navigations: string[];
}

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
  return withBrowserPage(async (page) => {
    const navigations: string[] = [];
    page.on('request', (request) => {
      if (request.isNavigationRequest() && request.frame() === page.mainFrame()) navigations.push(request.url());
    });
    await page.goto(authorizeUrl);
    await logInIfAsked(page, site);

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
      throw new Error(
        `the browser could not load the redirect target after ${opts.reject ? 'rejecting' : 'approving'}`,
      );
    }
    await page.waitForLoadState();
    return { finalUrl: page.url(), body: await bodyText(page), navigations };
  });
}
