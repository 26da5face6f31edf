import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyText, withBrowserPage } from '../support/browser.js';
import { adminApi, buildOnce, connectSite, startDaemonProcess, type DaemonApi } from '../support/daemon-process.js';
import { fetchWhole } from '../support/fetch-whole.js';
import { freeLoopbackPort } from '../support/net.js';
import { createTestSite, type TestSite } from '../support/wordpress/index.js';
import {
  activePlugins,
  installConnector,
  installFixturePlugin,
  themeVersionOnDisk,
  wordpressPlugins,
} from '../support/wordpress-state.js';
import { journeyScreenshots } from './journey-screenshots.js';

/**
 * A safe bulk update started from the dashboard, the daemon killed (`kill -9`) while the update of
 * sitewarden-fatal (whose 1.1.0 breaks every page) is in its after-checks, then started again on the
 * same data directory: the safe update resumes and rolls the update back, and the run's page (in
 * Debian's Chromium) tells what happened to each item, linked to the safe-update report: never
 * "before this site was updated" for an update that had begun. Real WordPress, the real daemon
 * process. Screenshots in test-artifacts/journeys/kill-mid-run/.
 */
const shot = journeyScreenshots('kill-mid-run');
const bed = {} as { site: TestSite; dataDir: string };

// As useDaemonSite, with time for a build and a site on a busy machine.
beforeAll(async () => {
  buildOnce();
  bed.site = await createTestSite();
  await installConnector(bed.site);
  bed.dataDir = mkdtempSync(join(tmpdir(), 'sitewarden-kill-mid-run-'));
}, 600_000);
afterAll(async () => {
  await bed.site?.stop();
  if (bed.dataDir) rmSync(bed.dataDir, { recursive: true, force: true });
}, 120_000);

const FATAL = 'sitewarden-fatal/sitewarden-fatal.php';
const DEMO = 'sitewarden-demo/sitewarden-demo.php';

/** Polls `read` every 50 ms until `reached` holds for what it answers, for at most `ms`. */
async function poll<T>(what: string, read: () => Promise<T>, reached: (value: T) => boolean, ms: number): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (reached(value)) return value;
    if (Date.now() > until) throw new Error(`${what} never happened; last seen: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('journey: the daemon killed in the middle of a safe bulk update', () => {
  it('after the restart, the run page tells what became of each item and links the safe-update report', async () => {
    // Installed and active before the site is connected, so the first sync reads their offers.
    installFixturePlugin(bed.site, 'sitewarden-demo', '1.0.0');
    installFixturePlugin(bed.site, 'sitewarden-fatal', '1.0.0');
    await bed.site.php(
      `require_once ABSPATH . 'wp-admin/includes/plugin.php'; foreach (['${DEMO}', '${FATAL}'] as $p) { $r = activate_plugin($p); if (is_wp_error($r)) { fwrite(STDERR, $r->get_error_message()); exit(1); } }`,
    );
    const themeBefore = await themeVersionOnDisk(bed.site, 'twentytwentyone');

    // One port for both processes: the page's address and its session cookie stay the same.
    const port = await freeLoopbackPort();
    const env = {
      SITEWARDEN_DATA_DIR: bed.dataDir,
      SITEWARDEN_PORT: String(port),
      SITEWARDEN_PUBLIC_URL: `http://127.0.0.1:${port}`,
      SITEWARDEN_LOG_LEVEL: 'info',
      SITEWARDEN_BACKUP_INTERVAL_HOURS: '0',
      SITEWARDEN_SCHEDULED_AUDITS: 'off',
      SITEWARDEN_SCHEDULED_UPTIME_PROBES: 'off',
    };
    const base = `http://127.0.0.1:${port}`;
    let daemon = await startDaemonProcess(env);
    const call: DaemonApi = adminApi(bed.dataDir, () => daemon.port);
    try {
      const siteId = await connectSite(call, bed.site);
      const password = /password: (.+)/.exec(readFileSync(join(bed.dataDir, 'admin-password'), 'utf8'))![1]!;

      await withBrowserPage(async (page) => {
        page.setDefaultTimeout(60_000);
        await page.setViewportSize({ width: 1280, height: 800 });
        await page.goto(`${base}/sign-in`);
        await page.getByLabel('User name').fill('admin');
        await page.getByLabel('Password').fill(password);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.waitForURL((url) => url.pathname !== '/sign-in');

        // Three updates on the site, as a safe bulk update: two plugins, then the theme.
        await page.goto(`${base}/updates`);
        await page.getByLabel('Select Sitewarden Demo (plugin)').check();
        await page.getByLabel('Select Sitewarden Fatal (plugin)').check();
        await page.getByLabel(/^Select Twenty Twenty-One \(theme\)$/).check();
        await shot(page, '01-updates-selected');
        await page.getByRole('button', { name: 'Preview bulk update' }).click();
        await page.waitForURL(/\/updates\/runs\/bulk_/);
        await shot(page, '02-preview');
        expect(await page.locator('#safe').isChecked()).toBe(true);
        await page.getByRole('button', { name: 'Apply to 1 site' }).click();
        await page.getByRole('heading', { name: 'Safe bulk update' }).waitFor();
        const runPath = new URL(page.url()).pathname;
        const runId = runPath.split('/').pop()!;

        // The demo plugin's safe update is kept; the fatal one's update breaks the site and its
        // after-checks (2 s of settling, then three rounds) are running: the daemon is killed there.
        // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the safe updates as the API lists them
        const listed = async (): Promise<any[]> => (await call('GET', `/api/sites/${siteId}/safe-updates`)).json.items;
        const fatal = await poll(
          'the fatal update reaching its after-checks',
          async () => (await listed()).find((update) => update.slug === 'sitewarden-fatal'),
          (update) => update?.phase === 'after-check',
          420_000,
        );
        await page.reload();
        await shot(page, '03-run-under-way');
        daemon.child.kill('SIGKILL');
        await daemon.exited;
        expect((await fetchWhole(`${bed.site.url}/`)).status).toBe(500);

        // Started again on the same data directory; the page is opened again as the user would.
        daemon = await startDaemonProcess(env);
        const run = await poll(
          'the bulk item following the resumed safe update',
          async () => (await call('GET', `/api/fleet/updates/runs/${runId}`)).json,
          // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the run as the API answers it
          (answer: any) => answer.sites?.[0]?.items?.every((item: { state: string }) => item.state !== 'pending'),
          240_000,
        );
        expect(run.job).toMatchObject({ state: 'failed', reason: 'interrupted' });
        expect(run.sites[0]).toMatchObject({ state: 'failed', reason: 'update-rolled-back' });
        expect(run.sites[0].items).toMatchObject([
          { slug: 'sitewarden-demo', state: 'succeeded', toVersion: '1.1.0' },
          { slug: 'sitewarden-fatal', state: 'failed', reason: 'update-rolled-back', safeUpdateId: fatal.id },
          { slug: 'twentytwentyone', state: 'skipped', reason: 'interrupted' },
        ]);

        await page.goto(`${base}${runPath}`);
        const row = page.locator('tr[data-site-state]');
        await row.waitFor();
        expect(await row.getAttribute('data-site-state')).toBe('rolled back');
        const text = await bodyText(page);
        expect(text).toContain(
          'the daemon stopped during this site’s update; its safe update finished all the same: plugin sitewarden-demo kept, plugin sitewarden-fatal rolled back (see the safe-update report)',
        );
        expect(text).toContain('the daemon stopped before this item was updated');
        expect(text).not.toContain('before this site was updated');
        // Each item that ran as a safe update links its report: the fatal one's here.
        const report = row
          .locator('li', { hasText: 'sitewarden-fatal' })
          .getByRole('link', { name: 'safe-update report' });
        expect(await report.getAttribute('href')).toBe(`/sites/${siteId}/safe-updates/${fatal.id}`);
        await shot(page, '04-run-after-restart');

        await report.click();
        await page.waitForURL(`${base}/sites/${siteId}/safe-updates/${fatal.id}`);
        expect(await bodyText(page)).toMatch(/rolled.back/i);
        await shot(page, '05-safe-update-report');

        // The site's update history says the same, linked to the report.
        await page.goto(`${base}/updates/history?site=${siteId}`);
        const historyRow = page.locator('tr', { hasText: 'sitewarden-fatal (plugin)' });
        expect(await historyRow.innerText()).toContain('update-rolled-back');
        expect(await historyRow.getByRole('link', { name: 'report' }).getAttribute('href')).toBe(
          `/sites/${siteId}/safe-updates/${fatal.id}`,
        );
        expect(await bodyText(page)).not.toContain('before this site was updated');
        await shot(page, '06-update-history');
      });

      // What WordPress holds: the demo plugin updated, the fatal one back at 1.0.0 and active, the theme untouched.
      expect((await fetchWhole(`${bed.site.url}/`)).status).toBe(200);
      const plugins = await wordpressPlugins(bed.site);
      expect(plugins[DEMO]?.Version).toBe('1.1.0');
      expect(plugins[FATAL]?.Version).toBe('1.0.0');
      expect(await activePlugins(bed.site)).toContain(FATAL);
      expect(await themeVersionOnDisk(bed.site, 'twentytwentyone')).toBe(themeBefore);
    } finally {
      daemon.child.kill('SIGKILL');
      await daemon.exited;
    }
  }, 900_000);
});
