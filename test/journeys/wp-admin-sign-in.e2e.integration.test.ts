import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withBrowserPage } from '../support/browser.js';
import { serveTestApp } from '../support/served-app.js';
import { createTestSite, type TestSite } from '../support/wordpress/index.js';
import { connectSite, installConnector } from '../support/wordpress-state.js';
import { dashboardUser } from './dashboard-user.js';
import { journeyScreenshots } from './journey-screenshots.js';

/**
 * A Sitewarden user jumps from a site's page in the dashboard into its wp-admin with one click:
 * Sitewarden in Debian's Chromium, the connector's single-use link, WordPress's own dashboard,
 * signed in as the connected administrator without typing a WordPress password. Screenshots of
 * each step in test-artifacts/journeys/wp-admin-sign-in/.
 */
const shot = journeyScreenshots('wp-admin-sign-in');

let site: TestSite;
let served: Awaited<ReturnType<typeof serveTestApp>>;
const alice = dashboardUser(() => served);
let siteId: string;

beforeAll(async () => {
  [site, served] = await Promise.all([createTestSite(), serveTestApp()]);
  await installConnector(site);
  await alice.create();
  siteId = await connectSite(served, site);
  await served.services.sync.syncNow(siteId);
}, 240_000);

afterAll(async () => {
  await served?.stop();
  await site?.stop();
});

describe('journey: sign in to a site’s wp-admin from the dashboard', () => {
  it('clicks Sign in to wp-admin on the site’s page and lands in wp-admin as the administrator', async () => {
    const signedInAs = await withBrowserPage(async (page) => {
      page.setDefaultTimeout(60_000);

      await alice.signIn(page);

      await page.goto(`${served.baseUrl}/sites/${siteId}`);
      const button = page.getByRole('button', { name: 'Sign in to wp-admin' });
      await button.waitFor();
      await shot(page, '01-site-page');

      // Our own page moves the browser on (the CSP's form-action keeps the form on this origin).
      await button.click();
      await page.waitForURL((url) => url.origin === site.url && url.pathname === '/wp-admin/');
      await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
      await shot(page, '02-wp-admin');
      return page.locator('#wp-admin-bar-my-account .display-name').first().innerText();
    });
    expect(signedInAs).toBe(site.admin.username);

    // Recorded, naming the dashboard user who asked; the link itself is nowhere in the logs.
    const [user] = await served.services.users.list();
    const [event] = served.logs.events('site.admin-login');
    expect(event).toMatchObject({
      siteId,
      wordpressUser: site.admin.username,
      requestedByKind: 'user',
      requestedById: user!.id,
    });
    expect(served.logs.raw()).not.toContain('sitewarden_login=');
  });

  it('offers no button once the site has it turned off', async () => {
    const turnOff = await served.services.adminLogin.prepareSettings(siteId, { enabled: false });
    await turnOff();
    await withBrowserPage(async (page) => {
      await alice.signIn(page);
      await page.goto(`${served.baseUrl}/sites/${siteId}`);
      await page.getByRole('button', { name: 'Refresh now' }).waitFor();
      expect(await page.getByRole('button', { name: 'Sign in to wp-admin' }).count()).toBe(0);
      await shot(page, '03-turned-off');
    });
  });
});
