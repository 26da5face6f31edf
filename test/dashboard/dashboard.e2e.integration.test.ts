import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { withBrowserPage } from '../support/browser.js';
import { serveTestApp } from '../support/served-app.js';
import { createTestSite, type TestSite } from '../support/wordpress/index.js';
import {
  installConnector,
  installFixturePlugin,
  themeVersionOnDisk,
  wordpressPlugins,
} from '../support/wordpress-state.js';

/**
 * The dashboard as a person uses it, in Debian's Chromium against a real WordPress site: sign in,
 * connect the site, find it in the overview by tag, back it up and watch the backup finish live,
 * update a plugin, sign out. A screenshot of each page lands in test-artifacts/dashboard/.
 */
const ARTIFACTS = join(import.meta.dirname, '../../test-artifacts/dashboard');
const PASSWORD = 'a long dashboard password';

let site: TestSite;
let served: Awaited<ReturnType<typeof serveTestApp>>;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  site = await createTestSite();
  await installConnector(site);
  installFixturePlugin(site, 'sitewarden-demo', '1.0.0');
  served = await serveTestApp();
  await served.services.users.create('alice', PASSWORD);
}, 240_000);

afterAll(async () => {
  await served?.stop();
  await site?.stop();
});

const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

describe('the dashboard in a real browser', () => {
  it('signs in, connects a real site, filters, backs up live, updates a plugin and signs out', async () => {
    await withBrowserPage(async (page) => {
      page.setDefaultTimeout(60_000);
      await page.setViewportSize({ width: 1280, height: 800 });
      const errors: string[] = [];
      page.on('console', (message) => message.type() === 'error' && errors.push(message.text()));

      // Signed out, every page leads to sign-in.
      await page.goto(`${served.baseUrl}/`);
      expect(new URL(page.url()).pathname).toBe('/sign-in');
      await shot(page, '01-sign-in');
      // The keyboard reaches the form: the user name field has focus, Tab goes on to the password.
      await page.keyboard.type('alice');
      await page.keyboard.press('Tab');
      expect(
        await page.evaluate(
          () => (globalThis as unknown as { document: { activeElement: { id: string } } }).document.activeElement.id,
        ),
      ).toBe('password');
      await page.getByLabel('User name').fill('alice');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'No sites yet' }).waitFor();
      // The first Tab on a signed-in page lands on the skip link.
      await page.keyboard.press('Tab');
      expect(
        await page.evaluate(
          () =>
            (globalThis as unknown as { document: { activeElement: { textContent: string } } }).document.activeElement
              .textContent,
        ),
      ).toBe('Skip to content');
      await shot(page, '02-empty-overview');

      // Connect the test site with its administrator's application password.
      await page.getByLabel('Site address').fill(site.url);
      await page.getByText('With an application password instead').click();
      await page.getByLabel('WordPress user name').fill(site.admin.username);
      await page.getByLabel('Application password').fill(site.admin.applicationPassword);
      await page.getByRole('button', { name: 'Connect' }).click();
      await page.getByText('Site connected.').waitFor();
      const siteUrl = page.url();
      expect(new URL(siteUrl).pathname).toMatch(/^\/sites\/site_/);

      // Tag it in the site's settings, then find it in the overview through the tag filter.
      await page.getByLabel('Tags (comma separated)').fill('client-a, blog');
      await page.getByRole('button', { name: 'Save settings' }).click();
      await page.getByText('Settings saved.').waitFor();
      await page.getByRole('link', { name: 'Overview' }).click();
      await page.getByLabel('Tag', { exact: true }).selectOption('client-a');
      await page.getByRole('button', { name: 'Filter' }).click();
      expect(new URL(page.url()).searchParams.get('tag')).toBe('client-a');
      const row = page.getByRole('row').filter({ hasText: site.url });
      // The URL changes when the navigation commits, before the filtered page has loaded.
      await row.first().waitFor();
      await expect(row.count()).resolves.toBe(1);
      await expect(row.getByText('client-a').count()).resolves.toBe(1);
      await shot(page, '03-overview');
      await page.getByLabel('Tag', { exact: true }).selectOption('blog');
      await page.getByLabel('Backup failed').check();
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.getByText('No site matches these filters.').waitFor();
      await page.getByLabel('Backup failed').uncheck();
      await page.getByRole('button', { name: 'Filter' }).click();

      // Open the site and back it up: the backup finishes on this very page, without a reload.
      await page.getByRole('row').filter({ hasText: site.url }).getByRole('link').first().click();
      await page.getByRole('button', { name: 'Back up now' }).click();
      await page.getByText('Backup started').waitFor();
      await page.evaluate(() => ((globalThis as unknown as { stillHere: boolean }).stillHere = true));
      await page.locator('#backups .badge.completed').waitFor({ timeout: 300_000 });
      expect(await page.evaluate(() => (globalThis as unknown as { stillHere?: boolean }).stillHere)).toBe(true);
      await shot(page, '04-site');

      // Apply the update the mirror offers, safe by default (checks, screenshots, a restore point);
      // WordPress holds the new version and the report says it was kept.
      await page.getByRole('button', { name: 'Update Sitewarden Demo', exact: true }).click();
      await page.getByText('Safe update of sitewarden-demo (plugin) started').waitFor();
      await expect
        .poll(async () => (await wordpressPlugins(site))['sitewarden-demo/sitewarden-demo.php']?.Version, {
          timeout: 120_000,
          interval: 1_000,
        })
        .toBe('1.1.0');
      await served.services.safeUpdates.idle();
      await page.reload();
      await page.locator('#safe-updates').getByText('kept').first().waitFor();

      // The Updates page lists what is left (the theme the mirror offers a newer release of).
      await page.getByRole('link', { name: 'Updates', exact: true }).click();
      await page.getByRole('heading', { name: 'By item' }).waitFor();
      await expect(page.getByRole('button', { name: /Update Twenty Twenty-One on/ }).count()).resolves.toBe(1);
      await shot(page, '06-updates');

      // A bulk update: tick the theme, preview where it would run, apply it as a safe update
      // (the default) and watch the site's state change on the run's page without a reload.
      await page.getByRole('checkbox', { name: 'Select Twenty Twenty-One (theme)' }).check();
      await page.getByRole('button', { name: 'Preview bulk update' }).click();
      await page.getByRole('heading', { name: 'Preview of a bulk update' }).waitFor();
      await page.getByText('1 update on 1 site would run').waitFor();
      await expect(page.getByLabel(/Safe update/).isChecked()).resolves.toBe(true);
      await shot(page, '06b-bulk-preview');
      await page.getByRole('button', { name: 'Apply to 1 site' }).click();
      await page.getByText('Bulk update started on 1 site.').waitFor();
      const runUrl = page.url();
      await page.evaluate(() => ((globalThis as unknown as { stillHere: boolean }).stillHere = true));
      await page.locator('[data-site-state="updated"]').waitFor({ timeout: 300_000 });
      expect(await page.evaluate(() => (globalThis as unknown as { stillHere?: boolean }).stillHere)).toBe(true);
      expect(await themeVersionOnDisk(site, 'twentytwentyone')).toBe('99.0.0');
      await shot(page, '06c-bulk-run');

      // Its safe update's report, from the site page: the decision and the screenshots, served behind the session.
      await page.getByRole('link', { name: site.url }).click();
      await page.getByRole('link', { name: 'twentytwentyone (theme)' }).click();
      await page.getByRole('heading', { name: 'Decision' }).waitFor();
      await page.getByText('Updated and healthy after the update: kept.').waitFor();
      const images = page.locator('.shots img');
      await expect(images.count()).resolves.toBeGreaterThan(0);
      await images.last().scrollIntoViewIfNeeded();
      for (const image of await images.all())
        expect(
          await image.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth),
        ).toBeGreaterThan(0);
      await shot(page, '06d-safe-update-report');

      // An update policy: a refused time zone is shown beside its field, as typed; fixed, the policy is listed.
      await page.getByRole('link', { name: 'Updates', exact: true }).click();
      await page.getByRole('link', { name: 'Update policies' }).click();
      await page.getByRole('link', { name: 'New policy' }).click();
      await page.getByLabel('Name').fill('Nightly for client A');
      await page.getByLabel('Tag', { exact: true }).fill('client-a');
      await page.getByLabel('Time zone').fill('Mars/Olympus');
      const logged = errors.length;
      await page.getByRole('button', { name: 'Create policy' }).click();
      await page.getByText(/not a time zone/).waitFor();
      // The refused form answers 400 (with the form again), which Chromium logs as a failed load.
      expect(errors.splice(logged)).toEqual([expect.stringContaining('400 (Bad Request)')]);
      await expect(page.getByLabel('Name').inputValue()).resolves.toBe('Nightly for client A');
      await shot(page, '06e-policy-invalid');
      await page.getByLabel('Time zone').fill('Europe/Berlin');
      await page.getByRole('button', { name: 'Create policy' }).click();
      await page.getByText('Policy Nightly for client A created.').waitFor();
      await shot(page, '06f-policies');

      // Backups: no offsite target here (the page says how to add one); a tag's retention set from the form.
      await page.getByRole('link', { name: 'Backups' }).click();
      await page.getByText('No offsite target').waitFor();
      await page.getByLabel('Tag', { exact: true }).fill('client-a');
      await page.getByLabel('Keep the last').fill('5');
      await page.getByLabel('Weekly').fill('8');
      await page.getByRole('button', { name: 'Save retention' }).click();
      await page.getByText('Retention of tag client-a saved.').waitFor();
      await shot(page, '06g-backups');
      // Dark mode follows the system's setting.
      await page.emulateMedia({ colorScheme: 'dark' });
      await page.goto(runUrl);
      await page.locator('[data-site-state="updated"]').waitFor();
      await shot(page, '06h-bulk-run-dark');
      await page.emulateMedia({ colorScheme: 'light' });
      await page.getByRole('link', { name: 'Settings' }).click();
      await page.getByRole('heading', { name: 'API tokens' }).waitFor();
      await shot(page, '07-settings');
      // A phone's width: the overview still reads (narrow columns hidden, the table scrolls).
      await page.setViewportSize({ width: 390, height: 844 });
      await page.getByRole('link', { name: 'Overview' }).click();
      await shot(page, '08-overview-phone');
      await page.setViewportSize({ width: 1280, height: 800 });

      await page.getByRole('link', { name: 'Activity' }).click();
      await page.getByRole('heading', { name: 'Jobs' }).waitFor();
      await expect(page.getByRole('cell', { name: /completed|succeeded/ }).count()).resolves.toBeGreaterThan(0);
      await shot(page, '05-activity');

      await page.getByRole('button', { name: 'Sign out' }).click();
      expect(new URL(page.url()).pathname).toBe('/sign-in');
      await page.goto(siteUrl);
      expect(new URL(page.url()).pathname).toBe('/sign-in');
      expect(errors).toEqual([]);
    });
  }, 600_000);
});
