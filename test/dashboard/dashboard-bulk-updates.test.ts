import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { createUpdateWatch, startUpdatableSite } from '../bulk-updates/updatable-fake.js';
import { NO_INLINE_CODE, signIn, withoutOwnStylesheet } from './signed-in.js';

/** The Updates page's bulk update: tick, Preview (a dry run), Apply that plan, watch each site's state. */
const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!();
});

async function fleet(count: number, failing: number[] = []) {
  const t: TestApp = createTestApp({ config: { siteConcurrency: 8 } });
  closers.push(() => t.close());
  const watch = createUpdateWatch();
  const sites: { id: string; state: { plugin: string; theme: string } }[] = [];
  for (let index = 0; index < count; index++) {
    const { site, state } = await startUpdatableSite(watch, { failPlugins: failing.includes(index) });
    closers.push(site.close);
    const connected = await t.call('POST', '/api/sites', {
      json: { url: site.url, username: site.username, applicationPassword: site.applicationPassword },
    });
    expect(connected.status, connected.text).toBe(201);
    await t.services.sync.syncNow(connected.json.id as string);
    sites.push({ id: connected.json.id as string, state });
  }
  return { t, sites, user: await signIn(t) };
}

const stateOf = (page: string, siteId: string) =>
  new RegExp(`data-site-state="([^"]+)">\\s*<th scope="row"><a href="/sites/${siteId}"`).exec(page)?.[1];

describe('bulk updates from the dashboard', () => {
  it('previews the ticked items on the ticked sites, applies exactly that plan and shows each site’s outcome', async () => {
    const { t, sites, user } = await fleet(3, [1]);
    const updates = await (await user.get('/updates')).text();
    expect(updates).toContain('form="bulk" name="item" value="plugin:akismet"');
    expect(updates).toContain(`form="bulk" name="site" value="${sites[0]!.id}"`);
    expect(updates).toContain('No bulk update yet');

    // Preview: akismet only, on sites 0 and 1 (CSRF still required).
    const selection: [string, string][] = [
      ['item', 'plugin:akismet'],
      ['site', sites[0]!.id],
      ['site', sites[1]!.id],
    ];
    expect((await user.post('/updates/preview', selection, false)).status).toBe(403);
    const previewed = await user.post('/updates/preview', selection);
    expect(previewed.status).toBe(303);
    const previewPath = previewed.headers.get('location')!;
    expect(previewPath).toMatch(/^\/updates\/runs\/bulk_/);
    const preview = await user.follow(previewed);
    expect(withoutOwnStylesheet(preview)).not.toMatch(NO_INLINE_CODE);
    expect(preview).toContain('Preview of a bulk update');
    expect(preview).toContain('2 updates on 2 sites would run');
    expect(preview).toMatch(/akismet \(plugin\) 1\.0\.0 → <strong>1\.1\.0<\/strong>/);
    expect(preview).not.toContain('twentytwentythree');
    expect(preview).not.toContain(`/sites/${sites[2]!.id}"`);
    expect(preview).toMatch(/name="safe" value="1" checked/);
    expect(sites.map((site) => site.state.plugin)).toEqual(['1.0.0', '1.0.0', '1.0.0']);

    // Apply (safe unticked: the fake sites cannot be screenshotted): a run page, live while it runs.
    const applied = await user.post(`${previewPath}/apply`, {});
    expect(applied.status).toBe(303);
    const runPath = applied.headers.get('location')!;
    expect(runPath).not.toBe(previewPath);
    expect(await user.follow(applied)).toContain('Bulk update started on 2 sites.');
    await t.services.bulkUpdates.idle();
    const run = await (await user.get(runPath)).text();
    expect(withoutOwnStylesheet(run)).not.toMatch(NO_INLINE_CODE);
    expect(run).toContain('2 of 2 sites done');
    expect(stateOf(run, sites[0]!.id)).toBe('updated');
    expect(stateOf(run, sites[1]!.id)).toBe('failed');
    expect(run).toContain('site-refused');
    // The run and each site's update history name the signed-in user who started it.
    const runId = runPath.split('/').at(-1)!;
    const runView = await t.call('GET', `/api/fleet/updates/runs/${runId}`);
    expect(runView.json.trigger).toEqual({ kind: 'user', id: expect.stringMatching(/^usr_/) });
    // Failed sites are listed first.
    expect(run.indexOf(`/sites/${sites[1]!.id}"`)).toBeLessThan(run.indexOf(`/sites/${sites[0]!.id}"`));
    expect(run).not.toContain('/assets/live.js');
    expect(sites.map((site) => site.state)).toEqual([
      expect.objectContaining({ plugin: '1.1.0', theme: '1.0.0' }),
      expect.objectContaining({ plugin: '1.0.0', theme: '1.0.0' }),
      expect.objectContaining({ plugin: '1.0.0', theme: '1.0.0' }),
    ]);

    // Each site's page has the attempt in its update history, linked to the run.
    const history1 = await (await user.get(`/sites/${sites[1]!.id}`)).text();
    expect(history1).toMatch(/<th scope="row">akismet \(plugin\)<\/th>\s*<td>1\.0\.0 → 1\.1\.0<\/td>/);
    expect(history1).toContain('site-refused');
    expect(history1).toContain(`href="${runPath}">alice</a>`);

    // The fleet's history, filtered: by result, by item, by user, by site; by date.
    const failed = await (await user.get('/updates/history?result=failed')).text();
    expect(failed).toContain(`/sites/${sites[1]!.id}"`);
    expect(failed).not.toContain(`/sites/${sites[0]!.id}"`);
    const bySite = await (await user.get(`/updates/history?site=${sites[0]!.id}`)).text();
    expect(bySite).toMatch(/akismet \(plugin\)/);
    expect(bySite).not.toContain(`/sites/${sites[1]!.id}"`);
    const aliceId = (await t.services.users.list()).find((u) => u.username === 'alice')!.id;
    expect(await (await user.get(`/updates/history?user=${aliceId}&item=akismet`)).text()).toContain('alice</a>');
    expect(await (await user.get('/updates/history?user=usr_nobody')).text()).toContain('No update attempt matches');
    expect(await (await user.get('/updates/history?until=2000-01-01')).text()).toContain('No update attempt matches');
    // Hand-edited nonsense falls back to no filter, never a 500.
    expect((await user.get('/updates/history?result=exploded&since=yesterday&type=x')).status).toBe(200);
    const api = await t.call('GET', `/api/fleet/updates/history?triggerKind=user&triggerId=${aliceId}&result=failed`);
    expect(api.json.items.map((row: { siteId: string }) => row.siteId)).toEqual([sites[1]!.id]);

    // A run is applied once: applying it again, or a finished run, is refused with a message.
    const again = await user.post(`${runPath}/apply`, {});
    expect(await user.follow(again)).toContain('is not a preview; preview again to apply it');
    // The preview itself once: a second Apply (a double click, a second tab) starts nothing and names the run.
    const twice = await user.post(`${previewPath}/apply`, {});
    expect(twice.headers.get('location')).toBe(previewPath);
    expect(await user.follow(twice)).toContain(`was already applied as bulk update ${runPath.split('/').at(-1)}`);
    const appliedPreview = await (await user.get(previewPath)).text();
    expect(appliedPreview).toContain(`Applied: <a href="${runPath}">`);
    expect(appliedPreview).not.toMatch(/<button type="submit"[^>]*>\s*Apply to/);

    // The history lists the preview and the run.
    const history = await (await user.get('/updates')).text();
    expect(history).toMatch(new RegExp(`href="${previewPath}"\\s*>Preview</a`));
    expect(history).toMatch(new RegExp(`href="${runPath}"\\s*>Update</a`));
    expect(history).toContain('2 of 2 (1 ok, 1 failed)');
  });

  it('lists plugins across the fleet, the sites that run one, and previews its update on the ticked sites', async () => {
    const { sites, user } = await fleet(2);
    const plugins = await (await user.get('/fleet/plugins')).text();
    expect(withoutOwnStylesheet(plugins)).not.toMatch(NO_INLINE_CODE);
    expect(plugins).toMatch(/href="\/fleet\/plugins\/akismet"[\s\S]*?<td class="num">2<\/td>/);
    const akismet = await (await user.get('/fleet/plugins/akismet')).text();
    for (const site of sites)
      expect(akismet).toMatch(new RegExp(`form="fleet-item-form"\\s+name="site"\\s+value="${site.id}"`));
    expect(akismet).toContain('→ 1.1.0');
    expect(akismet).toContain('name="item" value="plugin:akismet"');
    // The page's form is the Updates page's preview: akismet on the one ticked site.
    const previewed = await user.post('/updates/preview', [
      ['item', 'plugin:akismet'],
      ['site', sites[1]!.id],
    ]);
    const preview = await user.follow(previewed);
    expect(preview).toContain('1 update on 1 site would run');
    expect(preview).toContain(`/sites/${sites[1]!.id}"`);
    expect(preview).not.toContain(`/sites/${sites[0]!.id}"`);
    expect((await user.get('/fleet/widgets')).status).toBe(404);
    expect(await (await user.get('/fleet/themes/not-installed-anywhere')).text()).toContain('No site runs');
  });

  it('turns a selection with nothing to update, or an unknown run, into a message or a 404, never a 500', async () => {
    const { user } = await fleet(1);
    const nothing = await user.post('/updates/preview', [
      ['item', 'plugin:not-installed'],
      ['item', 'evil:thing'],
    ]);
    expect(nothing.status).toBe(303);
    expect(nothing.headers.get('location')).toBe('/updates');
    expect(await user.follow(nothing)).toMatch(/class="flash error"/);
    expect((await user.get('/updates/runs/bulk_nope')).status).toBe(404);
    expect((await user.post('/updates/runs/bulk_nope/apply', {})).status).toBe(404);
  });
});
