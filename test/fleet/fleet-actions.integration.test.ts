import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestSite, type TestSite } from '../support/wordpress/index.js';
import { type TestApp, createTestApp, insertConnectedSite, setSiteTags } from '../support/test-app.js';
import { activePlugins, connectSite, installConnector, wordpressPlugins } from '../support/wordpress-state.js';

/** One plugin installed, deactivated, activated and removed across two real sites, as a fleet action. */
let t: TestApp;
const sites: TestSite[] = [];
const ids: string[] = [];
beforeAll(async () => {
  t = createTestApp();
  for (let i = 0; i < 2; i++) {
    const site = await createTestSite();
    sites.push(site);
    await installConnector(site);
    ids.push(await connectSite(t, site));
  }
  for (const id of ids) setSiteTags(t, id, ['client:acme']);
});
afterAll(async () => {
  await t?.close();
  for (const site of sites) await site.stop();
});

const PLUGIN = 'sitewarden-demo/sitewarden-demo.php';
const onDisk = (site: TestSite) => existsSync(join(site.root, 'wp-content/plugins/sitewarden-demo'));

/** Starts an action (202), waits for its job, and answers it as the API reports it afterwards. */
async function act(body: Record<string, unknown>) {
  const started = await t.call('POST', '/api/fleet/actions', { json: body });
  expect(started.status, started.text).toBe(202);
  expect(started.json).toMatchObject({ state: 'queued', job: `/api/jobs/${started.json.id}` });
  await t.services.fleetActions.idle();
  const done = await t.call('GET', `/api/fleet/actions/${started.json.id}`, { token: t.readToken });
  expect(done.status).toBe(200);
  return done.json;
}

describe('fleet actions on real sites', () => {
  it('installs and activates a plugin from the directory on every selected site, recording who asked', async () => {
    const run = await act({ action: 'install', slug: 'sitewarden-demo', activate: true, sites: ids });
    expect(run).toMatchObject({
      state: 'succeeded',
      action: 'install',
      type: 'plugin',
      slug: 'sitewarden-demo',
      requestedBy: { kind: 'token', id: expect.any(String) },
      counts: { total: 2, done: 2, succeeded: 2, failed: 0, skipped: 0 },
    });
    for (const entry of run.sites)
      expect(entry).toMatchObject({ state: 'succeeded', version: '1.1.0', status: 'active', reason: null });
    for (const site of sites) {
      expect((await wordpressPlugins(site))[PLUGIN]?.Version).toBe('1.1.0');
      expect(await activePlugins(site)).toContain(PLUGIN);
    }
    // The same run as a job, and the inventory read again after each site's change.
    const job = await t.call('GET', `/api/jobs/${run.id}`);
    expect(job.json).toMatchObject({ kind: 'fleet-action', state: 'succeeded' });
    const fleet = await t.call('GET', '/api/fleet/plugins/sitewarden-demo');
    expect(fleet.json.items).toHaveLength(2);
    expect(fleet.json.items.every((item: { active: boolean }) => item.active)).toBe(true);

    // Installed already: nothing to do on either site.
    const again = await act({ action: 'install', slug: 'sitewarden-demo', sites: ids });
    expect(again.state).toBe('succeeded');
    expect(again.sites.map((entry: { state: string; reason: string }) => [entry.state, entry.reason])).toEqual([
      ['skipped', 'plugin-already-installed'],
      ['skipped', 'plugin-already-installed'],
    ]);
  });

  it('deactivates by tag and activates on every site that has it, as WordPress records it', async () => {
    const off = await act({ action: 'deactivate', slug: 'sitewarden-demo', tag: ['client:acme'] });
    expect(off).toMatchObject({ state: 'succeeded', counts: { total: 2, succeeded: 2 } });
    for (const site of sites) expect(await activePlugins(site)).not.toContain(PLUGIN);

    const on = await act({ action: 'activate', slug: 'sitewarden-demo', all: true });
    expect(on).toMatchObject({ state: 'succeeded', counts: { total: 2, succeeded: 2 } });
    for (const entry of on.sites) expect(entry.status).toBe('active');
    for (const site of sites) expect(await activePlugins(site)).toContain(PLUGIN);
  });

  it('never removes an active plugin unless asked to deactivate it first', async () => {
    const refused = await act({ action: 'remove', slug: 'sitewarden-demo', sites: ids });
    expect(refused).toMatchObject({ state: 'failed', reason: 'sites-failed', counts: { failed: 2 } });
    for (const entry of refused.sites) expect(entry).toMatchObject({ state: 'failed', reason: 'plugin-active' });
    for (const site of sites) expect(onDisk(site)).toBe(true);

    const removed = await act({ action: 'remove', slug: 'sitewarden-demo', deactivate: true, sites: ids });
    expect(removed).toMatchObject({ state: 'succeeded', counts: { succeeded: 2 } });
    for (const site of sites) {
      expect(onDisk(site)).toBe(false);
      expect((await wordpressPlugins(site))[PLUGIN]).toBeUndefined();
      expect(await activePlugins(site)).not.toContain(PLUGIN);
    }
    // Gone already: skipped, not failed.
    const gone = await act({ action: 'remove', slug: 'sitewarden-demo', sites: [ids[0]] });
    expect(gone.sites[0]).toMatchObject({ state: 'skipped', reason: 'plugin-not-found' });
  });

  it('installs and activates a theme from the directory on every selected site (connector 1.8.0), recording who asked', async () => {
    const THEME = 'sitewarden-demo-theme';
    const run = await act({ action: 'install', type: 'theme', slug: THEME, activate: true, sites: ids });
    expect(run).toMatchObject({
      state: 'succeeded',
      action: 'install',
      type: 'theme',
      slug: THEME,
      requestedBy: { kind: 'token', id: expect.any(String) },
      counts: { total: 2, done: 2, succeeded: 2, failed: 0, skipped: 0 },
    });
    for (const entry of run.sites)
      expect(entry).toMatchObject({ state: 'succeeded', version: '1.1.0', status: 'active', reason: null });
    for (const site of sites) {
      expect(existsSync(join(site.root, 'wp-content/themes', THEME, 'style.css'))).toBe(true);
      expect(
        await site.php(
          `wp_clean_themes_cache(); $t = wp_get_themes(); echo isset( $t['${THEME}'] ) ? $t['${THEME}']->get( 'Version' ) : 'none';`,
        ),
      ).toBe('1.1.0');
      expect(await site.option('stylesheet')).toBe(THEME);
    }
    expect(t.logs.events('theme.installed')).toHaveLength(2);
    const fleet = await t.call('GET', `/api/fleet/themes/${THEME}`);
    expect(fleet.json.items).toHaveLength(2);

    // Installed already: nothing to do on either site.
    const again = await act({ action: 'install', type: 'theme', slug: THEME, sites: ids });
    expect(again.sites.map((entry: { state: string; reason: string }) => [entry.state, entry.reason])).toEqual([
      ['skipped', 'theme-already-installed'],
      ['skipped', 'theme-already-installed'],
    ]);
    // Unknown to the directory: each site's own failure.
    const unknown = await act({ action: 'install', type: 'theme', slug: 'no-such-theme-anywhere', sites: ids });
    expect(unknown).toMatchObject({ state: 'failed', counts: { failed: 2 } });
    for (const entry of unknown.sites) expect(entry).toMatchObject({ reason: 'theme-not-in-directory' });
    // Back to a bundled theme; the demo theme removed, as the other tests found the sites.
    await act({ action: 'activate', type: 'theme', slug: 'twentytwentythree', sites: ids });
    const removed = await act({ action: 'remove', type: 'theme', slug: THEME, sites: ids });
    expect(removed).toMatchObject({ state: 'succeeded', counts: { succeeded: 2 } });
  });

  it('gives a site that is not connected, or refuses, its own result without stopping the others', async () => {
    const pending = insertConnectedSite(t, { state: 'pending' });
    const run = await act({ action: 'install', slug: 'no-such-plugin-anywhere', sites: [ids[0], pending] });
    const byId = Object.fromEntries(run.sites.map((entry: { siteId: string }) => [entry.siteId, entry]));
    expect(byId[pending]).toMatchObject({ state: 'skipped', reason: 'site-not-connected' });
    expect(byId[ids[0]!]).toMatchObject({ state: 'failed', reason: 'plugin-not-in-directory' });
    expect(existsSync(join(sites[0]!.root, 'wp-content/plugins/no-such-plugin-anywhere'))).toBe(false);
  });

  it('answers problems for what cannot be asked', async () => {
    const cases: [Record<string, unknown>, number, string][] = [
      [{ action: 'install', slug: '../etc', sites: ids }, 400, 'validation-failed'],
      [{ action: 'install', slug: 'akismet' }, 400, 'invalid-selection'],
      [{ action: 'install', slug: 'akismet', sites: ids, all: true }, 400, 'invalid-selection'],
      [{ action: 'install', slug: 'akismet', sites: ['site_nope'] }, 404, 'site-not-found'],
      [{ action: 'deactivate', type: 'theme', slug: 'twentytwentyfour', sites: ids }, 422, 'fleet-action-unsupported'],
      [{ action: 'activate', slug: 'nowhere-installed', all: true }, 422, 'no-sites-selected'],
      [{ action: 'explode', slug: 'akismet', sites: ids }, 400, 'validation-failed'],
    ];
    for (const [json, status, type] of cases) {
      const response = await t.call('POST', '/api/fleet/actions', { json });
      expect([response.status, response.json?.type], JSON.stringify(json)).toEqual([status, `/problems/${type}`]);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
    }
    const read = await t.call('POST', '/api/fleet/actions', {
      json: { action: 'install', slug: 'akismet', sites: ids },
      token: t.readToken,
    });
    expect(read.status).toBe(403);
    expect((await t.call('GET', '/api/fleet/actions/fact_nope')).json.type).toBe('/problems/fleet-action-not-found');
    const list = await t.call('GET', '/api/fleet/actions?limit=2');
    expect(list.json.items).toHaveLength(2);
  });
});
