import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logInIfAsked, withBrowserPage } from '../support/browser.js';
import { serveTestApp } from '../support/served-app.js';
import { createTestSite, type TestSite } from '../support/wordpress/index.js';
import { activePlugins, installFixturePlugin, wordpressPlugins } from '../support/wordpress-state.js';
import { dashboardUser } from './dashboard-user.js';
import { journeyScreenshots } from './journey-screenshots.js';

/**
 * A user connects a site by application password before installing the connector. Without it
 * WordPress's REST API lists plugins but not their updates: the dashboard must say "unknown", not
 * "up to date". The user follows the dashboard's own download link, uploads the zip in wp-admin as
 * any plugin, refreshes, and sees the update WordPress offers. Screenshots in
 * test-artifacts/journeys/install-the-connector/.
 */
const shot = journeyScreenshots('install-the-connector');

let site: TestSite;
let served: Awaited<ReturnType<typeof serveTestApp>>;
const alice = dashboardUser(() => served);

beforeAll(async () => {
  [site, served] = await Promise.all([createTestSite(), serveTestApp()]);
  installFixturePlugin(site, 'sitewarden-demo', '1.0.0');
  await alice.create();
}, 240_000);

afterAll(async () => {
  await served?.stop();
  await site?.stop();
});

describe('journey: connect without the connector, then install it from the dashboard’s link', () => {
  it(
    'says updates are unknown until the connector is installed, then shows the update offered',
    { timeout: 180_000 },
    async () => {
      await withBrowserPage(async (page) => {
        page.setDefaultTimeout(30_000);
        await alice.signIn(page);

        await page.getByLabel('Site address').fill(site.url);
        await page.getByText('With an application password instead').click();
        await page.getByLabel('WordPress user name').fill(site.admin.username);
        await page.getByLabel('Application password').fill(site.admin.applicationPassword);
        await page.getByRole('button', { name: 'Connect' }).click();
        await page.getByText('Site connected.').waitFor();
        const sitePage = page.url();

        // Not "up to date": unknown, with the way out.
        const demo = page.getByRole('row').filter({ hasText: 'sitewarden-demo' });
        await expect(demo.getByText('unknown').count()).resolves.toBe(1);
        await expect(demo.getByText('up to date').count()).resolves.toBe(0);
        await page.getByText('Updates unknown: install the connector.').first().waitFor();
        await shot(page, '01-updates-unknown');
        await page.getByRole('link', { name: 'Overview' }).click();
        await page.getByText('with updates unknown: install the connector').waitFor();
        await shot(page, '02-overview-unknown');
        await page.goto(sitePage);

        // The dashboard's link downloads the zip (behind the session; never an /api path).
        const [download] = await Promise.all([
          page.waitForEvent('download'),
          page.getByRole('link', { name: 'Download the connector' }).first().click(),
        ]);
        expect(download.suggestedFilename()).toBe('sitewarden-connector.zip');
        expect(new URL(download.url()).pathname).toBe('/connector.zip');
        // Saved under its own name: WordPress takes only a file called *.zip.
        const zip = join(mkdtempSync(join(tmpdir(), 'sitewarden-journey-')), download.suggestedFilename());
        await download.saveAs(zip);

        // In wp-admin, as any plugin: Plugins → Add New → Upload Plugin.
        await page.goto(`${site.url}/wp-admin/plugin-install.php?tab=upload`);
        await logInIfAsked(page, site);
        if (!page.url().includes('plugin-install.php'))
          await page.goto(`${site.url}/wp-admin/plugin-install.php?tab=upload`);
        await page.locator('#pluginzip').setInputFiles(zip);
        await page.locator('#install-plugin-submit').click();
        await page
          .getByText('Plugin installed successfully.')
          .waitFor()
          .catch(async (error: unknown) => {
            await shot(page, '03-wordpress-install-failed');
            throw error;
          });
        await shot(page, '03-wordpress-installed');
        await page.getByRole('link', { name: 'Activate Plugin' }).click();
        await page.waitForURL((url) => url.pathname.endsWith('/plugins.php'));

        // Back in Sitewarden: Refresh now reads the site again, with the connector this time.
        await page.goto(sitePage);
        await page.getByRole('button', { name: 'Refresh now' }).click();
        await page.getByText('Reading the site’s plugins, themes and updates again').waitFor();
        await expect
          .poll(
            async () => (await served.services.sitesRepository.findById(sitePage.split('/').at(-1)!))?.connectorVersion,
            {
              timeout: 30_000,
            },
          )
          .toMatch(/^\d+\.\d+\.\d+$/);
        await page.goto(sitePage);
        await page.getByRole('row').filter({ hasText: 'sitewarden-demo' }).getByText('→ 1.1.0').waitFor();
        await expect(page.getByText('Updates unknown: install the connector.').count()).resolves.toBe(0);
        await shot(page, '04-update-offered');
      });

      // What WordPress itself holds: the connector, active, installed from the dashboard's zip.
      expect(Object.keys(await wordpressPlugins(site))).toContain('sitewarden-connector/sitewarden-connector.php');
      expect(await activePlugins(site)).toContain('sitewarden-connector/sitewarden-connector.php');
    },
  );
});
