import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withBrowserPage } from '../support/browser.js';
import { serveTestApp } from '../support/served-app.js';
import { createTestSite, type TestSite } from '../support/wordpress/index.js';
import { connectSite, installConnector, installFixturePlugin, wordpressPlugins } from '../support/wordpress-state.js';
import { dashboardUser } from './dashboard-user.js';
import { journeyScreenshots } from './journey-screenshots.js';

/**
 * An update policy, set up in the dashboard, runs unattended in its window: the update it applies
 * repaints the site's page, so (unattended, visual rollback on by default) it is rolled back, and
 * the policy's next dry run shows that version held with when and why, until a user releases it.
 * Sitewarden in Debian's Chromium, a real WordPress site; screenshots in
 * test-artifacts/journeys/policy-visual-hold/.
 */
const shot = journeyScreenshots('policy-visual-hold');
const RESTYLE = 'sitewarden-restyle/sitewarden-restyle.php';

let site: TestSite;
let served: Awaited<ReturnType<typeof serveTestApp>>;
const alice = dashboardUser(() => served);
let siteId: string;

beforeAll(async () => {
  [site, served] = await Promise.all([createTestSite(), serveTestApp()]);
  await installConnector(site);
  installFixturePlugin(site, 'sitewarden-restyle', '1.0.0');
  await alice.create();
  siteId = await connectSite(served, site);
  const activated = await served.call('POST', `/api/sites/${siteId}/plugins/sitewarden-restyle/activate`);
  expect(activated.status, activated.text).toBe(200);
  const tagged = await served.call('PUT', `/api/sites/${siteId}/tags`, { json: { tags: ['clients'] } });
  expect(tagged.status, tagged.text).toBe(200);
  await served.services.sync.syncNow(siteId);
}, 240_000);

afterAll(async () => {
  await served?.stop();
  await site?.stop();
});

describe('journey: a policy’s window meets a visual change', { timeout: 600_000 }, () => {
  it('rolls the repainting update back unattended and holds that version in the next dry run', async () => {
    await withBrowserPage(async (page) => {
      page.setDefaultTimeout(120_000);
      await alice.signIn(page);

      // A policy for the tag, open all day every day (so its window is open now), plugins only.
      await page.goto(`${served.baseUrl}/updates/policies/new`);
      await page.getByLabel('Name').fill('Clients, around the clock');
      await page.getByLabel('Tag', { exact: true }).fill('clients');
      for (const kind of ['Themes', 'Translations', /^WordPress maintenance releases/])
        await page.getByRole('checkbox', { name: kind }).uncheck();
      for (const day of ['Saturday', 'Sunday']) await page.getByRole('checkbox', { name: day }).check();
      await page.getByLabel('Opens at').fill('00:00');
      await page.getByLabel('Closes at').fill('00:00');
      await page.getByLabel('Time zone').fill('UTC');
      // Unattended runs roll a visual change back unless told otherwise.
      expect(await page.getByRole('checkbox', { name: /^Roll back an update that changes a page/ }).isChecked()).toBe(
        true,
      );
      await shot(page, '01-new-policy');
      await page.getByRole('button', { name: 'Create policy' }).click();
      await page.getByText('Policy Clients, around the clock created.').waitFor();
      await page.getByRole('link', { name: 'Clients, around the clock' }).first().click();
      await page.waitForURL((url) => /^\/updates\/policies\/[^/]+$/.test(url.pathname));
      await page.getByText('sitewarden-restyle').first().waitFor();
      await shot(page, '02-dry-run-before');

      // The minute tick (the daemon's scheduler calls it): the window is open, so a run starts.
      expect(await served.services.updatePolicies.tick()).toBe(1);
      await served.services.bulkUpdates.idle();

      await page.reload();
      await page.getByText(/held, rolled back/).waitFor();
      await shot(page, '03-dry-run-held');
      expect(await page.getByText(/visual-change/).count()).toBeGreaterThan(0);
      expect(await page.getByRole('button', { name: /^Release/ }).count()).toBe(1);
    });

    // WordPress still runs the old version, and the next tick leaves it alone.
    expect((await wordpressPlugins(site))[RESTYLE]?.Version).toBe('1.0.0');
    await served.services.sync.syncNow(siteId);
    expect(await served.services.updatePolicies.tick()).toBe(0);
    const holds = await served.call('GET', `/api/update-policies/holds?siteId=${siteId}`);
    expect(holds.status, holds.text).toBe(200);
    expect(holds.json.items).toContainEqual(
      expect.objectContaining({ type: 'plugin', slug: 'sitewarden-restyle', version: '1.1.0' }),
    );
  });
});
