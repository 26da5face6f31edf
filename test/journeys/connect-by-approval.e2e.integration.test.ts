import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withBrowserPage, logInIfAsked } from '../support/browser.js';
import { serveTestApp } from '../support/served-app.js';
import { createTestSite, type TestSite } from '../support/wordpress/index.js';
import { dashboardUser } from './dashboard-user.js';
import { journeyScreenshots } from './journey-screenshots.js';

/**
 * A new user connects their first site the way the dashboard suggests: by approval on the site.
 * Sitewarden in Debian's Chromium, WordPress's own authorize-application screen, and back: the
 * user walks away once (the site waits as pending), comes back to its page, opens the approval
 * page again, approves, and lands signed in on the connected site. Screenshots of each step in
 * test-artifacts/journeys/connect-by-approval/.
 */
const shot = journeyScreenshots('connect-by-approval');

let site: TestSite;
let served: Awaited<ReturnType<typeof serveTestApp>>;
const alice = dashboardUser(() => served);

beforeAll(async () => {
  [site, served] = await Promise.all([createTestSite(), serveTestApp()]);
  await alice.create();
}, 240_000);

afterAll(async () => {
  await served?.stop();
  await site?.stop();
});

async function applicationPasswordNames(): Promise<string[]> {
  return JSON.parse(
    await site.php(`
      $user = get_user_by( 'login', ${JSON.stringify(site.admin.username)} );
      echo wp_json_encode( array_column( WP_Application_Passwords::get_user_application_passwords( $user->ID ), 'name' ) );
    `),
  ) as string[];
}

describe('journey: connect a site by approval from the dashboard', () => {
  it('goes to the site’s approval page, survives walking away, and comes back connected', async () => {
    await withBrowserPage(async (page) => {
      page.setDefaultTimeout(60_000);
      const visited: string[] = [];
      page.on('request', (request) => {
        if (request.isNavigationRequest() && request.frame() === page.mainFrame()) visited.push(request.url());
      });

      await alice.signIn(page);
      await page.getByRole('heading', { name: 'No sites yet' }).waitFor();

      // Connect: the dashboard's own page moves the browser on to WordPress (login first).
      await page.getByLabel('Site address').fill(site.url);
      await page.getByRole('button', { name: 'Connect' }).click();
      await page.waitForURL((url) => url.origin === site.url);
      await shot(page, '01-site-login');
      const [pending] = await served.services.sitesRepository.list({ limit: 10 });
      expect(pending).toMatchObject({ state: 'pending' });
      expect(pending!.url.startsWith(site.url)).toBe(true);

      // The user walks away before approving; the site waits on its own page, as a page.
      await page.goto(`${served.baseUrl}/`);
      await page
        .getByRole('link', { name: pending!.name ?? pending!.url })
        .first()
        .click();
      await page.getByRole('heading', { name: 'Waiting for approval' }).waitFor();
      await shot(page, '02-pending-site');

      await page.getByRole('link', { name: 'Open the approval page again' }).click();
      await page.waitForURL((url) => url.origin === site.url);
      await logInIfAsked(page, site);
      await page.locator('#approve').waitFor();
      await shot(page, '03-approval');
      await page.locator('#approve').click();

      // Back on Sitewarden, on a page whose address holds no password.
      await page.getByRole('heading', { name: 'Site connected' }).waitFor();
      await shot(page, '04-connected');
      expect(page.url()).toBe(`${served.baseUrl}/connect/result?site=${pending!.id}`);
      expect(visited.some((url) => url.includes('/api/authorization/callback'))).toBe(true);

      await page.getByRole('link', { name: 'Open the site in Sitewarden' }).click();
      await page.getByRole('button', { name: 'Refresh now' }).waitFor();
      await shot(page, '05-site-page');
    });

    // What WordPress itself now holds, and what the daemon does.
    expect(await applicationPasswordNames()).toContain('Sitewarden');
    const [connected] = await served.services.sitesRepository.list({ limit: 10 });
    expect(connected).toMatchObject({ state: 'connected', username: site.admin.username });
    expect(served.logs.raw()).not.toMatch(/"password":"[^[]/);
  });
});
