import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withBrowserPage } from '../support/browser.js';
import { serveTestApp } from '../support/served-app.js';
import { createTestSite, type TestSite } from '../support/wordpress/index.js';
import { activePlugins, connectSite, installConnector, installFixturePlugin } from '../support/wordpress-state.js';
import { dashboardUser } from './dashboard-user.js';
import { journeyScreenshots } from './journey-screenshots.js';

/**
 * A user updates a plugin without checks from a site's page, the new version fatals every
 * WordPress request, and the user undoes it from the same page: Sitewarden in Debian's Chromium,
 * the site's own "critical error" page as the browser sees it, the Roll back confirmation, the site
 * answering again with the old version on disk. Screenshots in test-artifacts/journeys/plain-update-rollback/.
 */
const shot = journeyScreenshots('plain-update-rollback');
const FATAL_FILE = 'sitewarden-fatal/sitewarden-fatal.php';

let site: TestSite;
let served: Awaited<ReturnType<typeof serveTestApp>>;
const alice = dashboardUser(() => served);
let siteId: string;

/** Read from the plugin's header on disk: WordPress itself cannot answer while the plugin fatals. */
const versionOnDisk = () =>
  /Version:\s*(\S+)/.exec(readFileSync(join(site.root, 'wp-content/plugins', FATAL_FILE), 'utf8'))?.[1];

beforeAll(async () => {
  [site, served] = await Promise.all([createTestSite(), serveTestApp()]);
  await installConnector(site);
  installFixturePlugin(site, 'sitewarden-fatal', '1.0.0');
  await alice.create();
  siteId = await connectSite(served, site);
  const activated = await served.call('POST', `/api/sites/${siteId}/plugins/sitewarden-fatal/activate`);
  expect(activated.status, activated.text).toBe(200);
  await served.services.sync.syncNow(siteId);
}, 240_000);

afterAll(async () => {
  await served?.stop();
  await site?.stop();
});

describe('journey: undo a plain update that broke the site', { timeout: 300_000 }, () => {
  it('updates without checks, sees the site broken, rolls back from the site page', async () => {
    await withBrowserPage(async (page) => {
      page.setDefaultTimeout(120_000);
      await alice.signIn(page);

      await page.goto(`${served.baseUrl}/sites/${siteId}`);
      const update = page.getByRole('button', { name: 'Update Sitewarden Fatal without checks' });
      await update.waitFor();
      await shot(page, '01-update-offered');
      await update.click();
      await page.waitForURL((url) => url.pathname === `/sites/${siteId}`);
      await shot(page, '02-after-plain-update');
      expect(versionOnDisk()).toBe('1.1.0');

      // What the site's visitors now see.
      const broken = await page.goto(`${site.url}/`);
      expect(broken?.status()).toBe(500);
      await shot(page, '03-site-broken');

      await page.goto(`${served.baseUrl}/sites/${siteId}`);
      await page.getByRole('link', { name: 'Roll back' }).first().click();
      await page.getByRole('heading', { name: /^Roll back sitewarden-fatal/ }).waitFor();
      await shot(page, '04-confirm-rollback');
      await page.getByLabel('Put sitewarden-fatal back as it was').check();
      await page.getByRole('button', { name: 'Roll back' }).click();
      await page.getByText('Rolled back sitewarden-fatal to 1.0.0').waitFor();
      await shot(page, '05-rolled-back');

      const healthy = await page.goto(`${site.url}/`);
      expect(healthy?.status()).toBe(200);
      await shot(page, '06-site-answers');
    });

    // WordPress holds the old version, still active.
    expect(versionOnDisk()).toBe('1.0.0');
    expect(await activePlugins(site)).toContain(FATAL_FILE);
    // Recorded as the dashboard user's doing.
    const [user] = await served.services.users.list();
    const history = await served.call('GET', `/api/sites/${siteId}/updates/history?slug=sitewarden-fatal&limit=10`);
    expect(history.json.items[0]).toMatchObject({
      result: 'succeeded',
      rollbackOf: expect.any(String),
      trigger: { kind: 'user', id: user!.id },
    });
  });
});
