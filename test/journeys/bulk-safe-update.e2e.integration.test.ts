import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { withBrowserPage } from '../support/browser.js';
import { serveTestApp } from '../support/served-app.js';
import { createTestSite, type TestSite } from '../support/wordpress/index.js';
import { connectSite, installConnector, installFixturePlugin, wordpressPlugins } from '../support/wordpress-state.js';
import { dashboardUser } from './dashboard-user.js';
import { journeyScreenshots } from './journey-screenshots.js';

/**
 * A safe bulk update from the Updates page, the way an agency runs its morning: two items ticked
 * on every site, one of them fatal (rolled back on its own), one that repaints the page (kept, but
 * a warning, not a green tick), and one site still waiting cancelled from the run's page; the run
 * ends and reads right at phone width too. Sitewarden in Debian's Chromium, real WordPress sites;
 * screenshots in test-artifacts/journeys/bulk-safe-update/.
 */
const shot = journeyScreenshots('bulk-safe-update');
const FATAL = 'sitewarden-fatal/sitewarden-fatal.php';
const RESTYLE = 'sitewarden-restyle/sitewarden-restyle.php';

let first: TestSite;
let second: TestSite;
let served: Awaited<ReturnType<typeof serveTestApp>>;
const alice = dashboardUser(() => served);
const ids: string[] = [];

async function withPlugins(site: TestSite, slugs: string[]): Promise<string> {
  await installConnector(site);
  for (const slug of slugs) installFixturePlugin(site, slug, '1.0.0');
  const id = await connectSite(served, site);
  for (const slug of slugs) {
    const activated = await served.call('POST', `/api/sites/${id}/plugins/${slug}/activate`);
    expect(activated.status, activated.text).toBe(200);
  }
  await served.services.sync.syncNow(id);
  return id;
}

/** The run page's state of the site at `url` (the row's data-site-state). */
const siteState = (page: Page, url: string) =>
  page.locator('tr', { has: page.locator(`a[href^="/sites/"]`, { hasText: url }) }).getAttribute('data-site-state');

beforeAll(async () => {
  // One site at a time: the second waits in the queue while the first is updated.
  [first, second, served] = await Promise.all([
    createTestSite(),
    createTestSite(),
    serveTestApp({ config: { bulkUpdates: { concurrency: 1, perHost: 1 } } }),
  ]);
  await alice.create();
  ids.push(await withPlugins(first, ['sitewarden-fatal', 'sitewarden-restyle']));
  ids.push(await withPlugins(second, ['sitewarden-restyle']));
}, 300_000);

afterAll(async () => {
  await served?.stop();
  await first?.stop();
  await second?.stop();
});

describe('journey: a safe bulk update across the fleet', { timeout: 600_000 }, () => {
  it('rolls back the fatal item, warns about the repainted page, and ends with a waiting site cancelled', async () => {
    await withBrowserPage(async (page) => {
      page.setDefaultTimeout(240_000);
      await alice.signIn(page);

      await page.goto(`${served.baseUrl}/updates`);
      await page.getByLabel('Select Sitewarden Fatal (plugin)').check();
      await page.getByLabel('Select Sitewarden Restyle (plugin)').check();
      await shot(page, '01-updates-ticked');
      await page.getByRole('button', { name: 'Preview bulk update' }).click();
      await page.getByRole('heading', { name: 'Preview of a bulk update' }).waitFor();
      await shot(page, '02-preview');

      // Safe by default; the visual check keeps a repainted page with a warning unless told to roll back.
      expect(await page.getByRole('checkbox', { name: /^Safe update/ }).isChecked()).toBe(true);
      expect(await page.getByRole('checkbox', { name: /^Roll back an update that changes a page/ }).isChecked()).toBe(
        false,
      );
      await page.getByRole('button', { name: 'Apply to 2 sites' }).click();
      await page.getByRole('heading', { name: 'Safe bulk update' }).waitFor();

      // The second site waits behind the first: cancel it alone.
      const cancel = page.getByRole('button', { name: 'Cancel this site' });
      await cancel.waitFor();
      await shot(page, '03-running-one-waiting');
      await cancel.click();
      await page.getByText(`Cancelled ${second.url}`).waitFor();

      // The run ends on its own (live.js swaps the table in; reloading is what a user without script does).
      await expect
        .poll(
          async () => {
            await page.reload();
            return page.locator('p.progress .badge').first().innerText();
          },
          { timeout: 300_000, interval: 2_000 },
        )
        .toMatch(/(failed|succeeded)$/);
      await shot(page, '04-run-ended');

      expect(await siteState(page, second.url)).toBe('cancelled');
      const cancelledRow = page.locator('tr', { has: page.locator('a', { hasText: second.url }) });
      expect(await cancelledRow.innerText()).not.toContain('pending');
      expect(await siteState(page, first.url)).toBe('rolled back');
      const row = page.locator('tr', { has: page.locator('a', { hasText: first.url }) });
      await expect.poll(() => row.innerText()).toMatch(/sitewarden-restyle \(plugin\)[\s\S]*updated, looks different/);
      await expect.poll(() => row.innerText()).toMatch(/sitewarden-fatal \(plugin\)[\s\S]*update-rolled-back/);
      // The warning is not the green tick.
      expect(await row.locator('.badge.degraded').count()).toBeGreaterThan(0);
      expect(await page.getByText('1 cancelled').count()).toBe(1);

      // The site's report of the rolled-back update holds the broken page's screenshot.
      await row.getByRole('link', { name: 'safe-update report' }).first().click();
      await page.getByText('After the update, before the rollback').first().waitFor();
      await shot(page, '05-rollback-report');

      // At phone width the run page does not scroll sideways.
      await page.goBack();
      await page.setViewportSize({ width: 390, height: 844 });
      await page.reload();
      // (A string: the test is compiled without the DOM's types.)
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      await shot(page, '06-run-phone');
      expect(overflow).toBeLessThanOrEqual(0);
    });

    // What WordPress holds: the fatal update put back, the repainted one kept, the cancelled site untouched.
    const onFirst = await wordpressPlugins(first);
    expect(onFirst[FATAL]?.Version).toBe('1.0.0');
    expect(onFirst[RESTYLE]?.Version).toBe('1.1.0');
    expect((await wordpressPlugins(second))[RESTYLE]?.Version).toBe('1.0.0');
    const home = await fetch(`${first.url}/`, { signal: AbortSignal.timeout(30_000) });
    await home.arrayBuffer();
    expect(home.status).toBe(200);
  });
});
