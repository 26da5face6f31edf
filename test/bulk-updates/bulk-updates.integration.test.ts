import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestSite, type TestSite } from '../support/wordpress/index.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import {
  connectSite,
  installConnector,
  installFixturePlugin,
  themeVersionOnDisk,
  wordpressPlugins,
} from '../support/wordpress-state.js';
import { CONNECTOR_VERSION } from '../support/connector-version.js';

/**
 * A bulk update of three real WordPress sites from the local mirror: sitewarden-demo 1.0.0 → 1.1.0
 * and twentytwentyone → 99.0.0. The second site cannot write its files (FS_METHOD ftpext, as the
 * plugin and theme tests make a site refuse): it fails with its reason, the others are updated.
 * The run as the API shows it (`GET /api/fleet/updates/runs/{id}`, per-site results) is kept in
 * test-artifacts/bulk-updates/real-sites-run.json.
 */
const ARTIFACTS = join(import.meta.dirname, '../../test-artifacts/bulk-updates');
const SITES = 3;
const FAILING = 1;
let t: TestApp;
const sites: { site: TestSite; id: string }[] = [];
let failingConfig: { path: string; original: string } | undefined;

beforeAll(async () => {
  t = createTestApp();
  for (let index = 0; index < SITES; index++) {
    const site = await createTestSite();
    await installConnector(site);
    installFixturePlugin(site, 'sitewarden-demo', '1.0.0');
    const id = await connectSite(t, site);
    await t.services.sync.syncNow(id);
    sites.push({ site, id });
  }
  const path = join(sites[FAILING]!.site.root, 'wp-config.php');
  const original = readFileSync(path, 'utf8');
  writeFileSync(path, original.replace("define( 'FS_METHOD', 'direct' );", "define( 'FS_METHOD', 'ftpext' );"));
  failingConfig = { path, original };
}, 600_000);

afterAll(async () => {
  if (failingConfig) writeFileSync(failingConfig.path, failingConfig.original);
  await t?.close();
  for (const { site } of sites) await site.stop();
}, 120_000);

describe('a bulk update of real WordPress sites', () => {
  it('updates a plugin and a theme on every site but the one that cannot write, which fails with its reason', async () => {
    const selection = {
      all: true,
      items: [
        { type: 'plugin', slug: 'sitewarden-demo' },
        { type: 'theme', slug: 'twentytwentyone' },
      ],
    };
    const plan = await t.call('POST', '/api/fleet/updates/apply', { json: { ...selection, dryRun: true } });
    expect(plan.status, plan.text).toBe(200);
    expect(plan.json.sites).toHaveLength(SITES);
    for (const site of plan.json.sites)
      expect(site.items).toMatchObject([
        { type: 'plugin', slug: 'sitewarden-demo', fromVersion: '1.0.0', toVersion: '1.1.0' },
        { type: 'theme', slug: 'twentytwentyone', toVersion: '99.0.0' },
      ]);

    const queued = await t.call('POST', '/api/fleet/updates/apply', { json: selection });
    expect(queued.status, queued.text).toBe(202);
    await t.services.bulkUpdates.idle();
    const run = (await t.call('GET', `/api/fleet/updates/runs/${queued.json.job.id}`)).json;
    mkdirSync(ARTIFACTS, { recursive: true });
    writeFileSync(join(ARTIFACTS, 'real-sites-run.json'), `${JSON.stringify(run, null, 2)}\n`);
    expect(run.job).toMatchObject({ state: 'failed', reason: 'sites-failed' });
    expect(run.progress).toEqual({ total: 3, done: 3, succeeded: 2, failed: 1, skipped: 0, cancelled: 0 });

    for (const [index, { site, id }] of sites.entries()) {
      const result = run.sites.find((candidate: { siteId: string }) => candidate.siteId === id);
      const plugin = (await wordpressPlugins(site))['sitewarden-demo/sitewarden-demo.php']?.Version;
      const theme = await themeVersionOnDisk(site, 'twentytwentyone');
      if (index === FAILING) {
        expect(result).toMatchObject({
          state: 'failed',
          reason: 'site-refused',
          items: [
            { slug: 'sitewarden-demo', state: 'failed', reason: 'site-refused' },
            { slug: 'twentytwentyone', state: 'failed', reason: 'site-refused' },
          ],
        });
        expect(result.message).toContain('cannot write its files');
        expect([plugin, theme === '99.0.0']).toEqual(['1.0.0', false]);
      } else {
        // What WordPress itself now holds.
        expect(result).toMatchObject({
          state: 'succeeded',
          items: [
            { slug: 'sitewarden-demo', fromVersion: '1.0.0', toVersion: '1.1.0', state: 'succeeded' },
            { slug: 'twentytwentyone', toVersion: '99.0.0', state: 'succeeded' },
          ],
        });
        expect([plugin, theme]).toEqual(['1.1.0', '99.0.0']);
      }
      // The stored view (patched from the connector's answers, or read in full after a failure) shows no applied update as pending.
      const stored = (await t.call('GET', `/api/sites/${id}`)).json;
      const pluginRow = stored.plugins.find((row: { slug: string }) => row.slug === 'sitewarden-demo');
      const themeRow = stored.themes.find((row: { slug: string }) => row.slug === 'twentytwentyone');
      if (index === FAILING) {
        expect([pluginRow, themeRow]).toMatchObject([
          { version: '1.0.0', update: { version: '1.1.0' } },
          { update: { version: '99.0.0' } },
        ]);
      } else {
        expect([pluginRow, themeRow]).toMatchObject([
          { version: '1.1.0', update: null },
          { version: '99.0.0', update: null },
        ]);
      }
    }

    const history = await t.call('GET', `/api/fleet/updates/history?limit=20`, { token: t.readToken });
    expect(history.json.items).toHaveLength(6);
    expect(
      history.json.items.filter((row: { result: string; jobId: string }) => row.jobId === queued.json.job.id),
    ).toHaveLength(6);
    const failed = await t.call('GET', `/api/sites/${sites[FAILING]!.id}/updates/history`, { token: t.readToken });
    expect(failed.json.items.map((row: { result: string; reason: string }) => [row.result, row.reason])).toEqual([
      ['failed', 'site-refused'],
      ['failed', 'site-refused'],
    ]);
    expect(t.logs.events('update.failed')).toHaveLength(2);
    expect(t.logs.events('update.applied')).toHaveLength(4);
    // The single-site failure events still come from the plugins and themes services.
    expect(t.logs.events('plugin.update_failed')).toHaveLength(1);
    expect(t.logs.events('theme.update_failed')).toHaveLength(1);
  }, 600_000);
  it('skips a plugin whose offer is not the version planned: WordPress keeps its version, the history says why', async () => {
    const { site, id } = sites[2]!;
    // Back at 1.0.0, as the mirror still offers 1.1.0; the daemon's site runs connector 1.5.0 (one request per item).
    installFixturePlugin(site, 'sitewarden-demo', '1.0.0');
    await t.services.sync.syncNow(id);
    expect((await t.call('GET', `/api/sites/${id}`)).json.versions.connector).toBe(CONNECTOR_VERSION);

    const job = await t.services.bulkUpdates.start({
      targets: [{ siteId: id, type: 'plugin', slug: 'sitewarden-demo', version: '1.0.5' }],
      trigger: { kind: 'request', id: null },
    });
    await t.services.bulkUpdates.idle();
    const run = (await t.call('GET', `/api/fleet/updates/runs/${job.id}`)).json;

    const refused = {
      slug: 'sitewarden-demo',
      state: 'skipped',
      reason: 'version-changed',
      message: 'the site now offers sitewarden-demo 1.1.0, not 1.0.5',
      fromVersion: '1.0.0',
      toVersion: '1.0.5',
    };
    expect(run.sites[0].items).toEqual([expect.objectContaining(refused)]);
    expect((await wordpressPlugins(site))['sitewarden-demo/sitewarden-demo.php']?.Version).toBe('1.0.0');
    const history = await t.call('GET', `/api/sites/${id}/updates/history?limit=1`, { token: t.readToken });
    expect(history.json.items[0]).toMatchObject({
      jobId: job.id,
      result: 'skipped',
      reason: 'version-changed',
      error: refused.message,
      fromVersion: '1.0.0',
      toVersion: '1.0.5',
    });
    // The stored offer is still the site's.
    const stored = (await t.call('GET', `/api/sites/${id}`)).json;
    expect(stored.plugins.find((row: { slug: string }) => row.slug === 'sitewarden-demo')).toMatchObject({
      version: '1.0.0',
      update: { version: '1.1.0' },
    });
  }, 600_000);
});
