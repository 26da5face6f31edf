import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Plugin } from '../../src/inventory/index.js';
import { createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';
import { NO_INLINE_CODE, signIn, withoutOwnStylesheet, type SignedIn } from './signed-in.js';

const flashOf = (page: string) => /class="flash ([a-z]+)"[^>]*>\s*([^<]*?)\s*</.exec(page)?.slice(1, 3);

const plugin = (slug: string, status: Plugin['status']): Plugin => ({
  slug,
  file: `${slug}/${slug}.php`,
  name: `The ${slug}`,
  version: '1.0',
  status,
  update: null,
});

/** Fleet actions from the dashboard: install on the overview's ticked sites; activate, deactivate, remove on an item's page. */
describe('dashboard: fleet actions', () => {
  let t: TestApp;
  let user: SignedIn;
  let a: string, b: string;

  beforeEach(async () => {
    t = createTestApp();
    user = await signIn(t);
    // Sites at loopback ports nothing listens on: each site's operation fails fast, as its result says.
    a = insertConnectedSite(t, { name: 'Site A' });
    b = insertConnectedSite(t, { name: 'Site B' });
    await t.services.inventories.write(a, { plugins: [plugin('seo', 'active')], themes: [], syncedAt: t.clock.now() });
    await t.services.inventories.write(b, {
      plugins: [plugin('seo', 'inactive')],
      themes: [],
      syncedAt: t.clock.now(),
    });
  });
  afterEach(() => t.close());

  const jobs = () => t.services.jobs.list({ kind: 'fleet-action', limit: 10 });

  it('offers the actions on an item page, in the form its site checkboxes belong to', async () => {
    const page = await (await user.get('/fleet/plugins/seo')).text();
    expect(page).toMatch(/<form[^>]*id="fleet-item-form"[^>]*action="\/updates\/preview"/);
    expect(page).toContain('name="_csrf"');
    for (const verb of ['activate', 'deactivate', 'remove'])
      expect(page).toMatch(new RegExp(`formaction="/fleet/actions" name="action" value="${verb}"`));
    expect(page).toContain('Yes, remove seo');
    expect(page).toContain('Preview update of seo on these sites');
    expect(withoutOwnStylesheet(page)).not.toMatch(NO_INLINE_CODE);
    // A theme is activated or removed; WordPress has no theme deactivation.
    await t.services.inventories.write(a, {
      plugins: [plugin('seo', 'active')],
      themes: [{ slug: 'neat', name: 'Neat', version: '1.0', status: 'inactive', parent: null, update: null }],
      syncedAt: t.clock.now(),
    });
    const theme = await (await user.get('/fleet/themes/neat')).text();
    expect(theme).toContain('value="activate"');
    expect(theme).not.toContain('value="deactivate"');
  });

  it('starts an action on the ticked sites as the signed-in user, and shows each site’s result', async () => {
    const refused = await user.post(
      '/fleet/actions',
      [
        ['item', 'plugin:seo'],
        ['action', 'deactivate'],
        ['site', a],
      ],
      false,
    );
    expect(refused.status).toBe(403);
    expect(await jobs()).toHaveLength(0);

    const response = await user.post('/fleet/actions', [
      ['item', 'plugin:seo'],
      ['action', 'deactivate'],
      ['site', a],
    ]);
    expect(response.status).toBe(303);
    const location = response.headers.get('location')!;
    expect(location).toMatch(/^\/fleet\/actions\/fact_[0-9a-z]{26}$/);
    const [job] = await jobs();
    expect(JSON.parse(job!.params)).toMatchObject({
      action: 'deactivate',
      type: 'plugin',
      slug: 'seo',
      requestedBy: { kind: 'user', id: expect.any(String) },
    });
    expect(flashOf(await user.follow(response))).toEqual(['ok', 'Deactivate seo: started on 1 site.']);
    await t.services.fleetActions.idle();
    const results = await (await user.get(location)).text();
    expect(results).toContain('Deactivate seo');
    const urlOf = async (id: string) => (await t.services.sitesRepository.findById(id))!.url;
    expect(results).toContain(`<a href="/sites/${a}">${await urlOf(a)}</a>`);
    expect(results).not.toContain(`/sites/${b}`);
    expect(results).toContain('site-unreachable');
    expect(results).toMatch(/badge failed/);
    // Listed with the plugins across the fleet, linking its results.
    expect(await (await user.get('/fleet/plugins')).text()).toContain(`<a href="${location}">Deactivate seo</a>`);

    // No site ticked: every site listed that runs it.
    const everywhere = await user.post('/fleet/actions', [
      ['item', 'plugin:seo'],
      ['action', 'activate'],
    ]);
    expect(everywhere.status).toBe(303);
    expect(
      (await t.services.fleetActions.get(everywhere.headers.get('location')!.split('/').pop()!)).counts.total,
    ).toBe(2);
    await t.services.fleetActions.idle();
  });

  it('removes only once confirmed, and passes on whether to deactivate first', async () => {
    const unconfirmed = await user.post('/fleet/actions', [
      ['item', 'plugin:seo'],
      ['action', 'remove'],
      ['site', a],
    ]);
    expect(unconfirmed.headers.get('location')).toBe('/fleet/plugins/seo');
    expect(flashOf(await user.follow(unconfirmed))).toEqual(['error', expect.stringContaining('Yes, remove seo')]);
    expect(await jobs()).toHaveLength(0);

    const confirmed = await user.post('/fleet/actions', [
      ['item', 'plugin:seo'],
      ['action', 'remove'],
      ['confirm', 'yes'],
      ['deactivate', 'yes'],
      ['site', a],
      ['site', b],
    ]);
    expect(confirmed.status).toBe(303);
    expect(JSON.parse((await jobs())[0]!.params)).toMatchObject({ action: 'remove', deactivate: true });
    await t.services.fleetActions.idle();
  });

  it('installs a plugin on the overview’s ticked sites', async () => {
    const overview = await (await user.get('/')).text();
    expect(overview).toContain('value="install-plugin"');
    expect(overview).toContain('name="plugin"');

    const bad = await user.post('/sites/selection', [
      ['site', a],
      ['plugin', '../etc'],
      ['action', 'install-plugin'],
      ['back', '/'],
    ]);
    expect(bad.headers.get('location')).toBe('/');
    expect(flashOf(await user.follow(bad))).toEqual(['error', expect.stringMatching(/^Not a plugin slug: /)]);
    expect(await jobs()).toHaveLength(0);

    const started = await user.post('/sites/selection', [
      ['site', a],
      ['site', b],
      ['plugin', 'sitewarden-demo'],
      ['activate', 'yes'],
      ['action', 'install-plugin'],
      ['back', '/'],
    ]);
    expect(started.status).toBe(303);
    expect(started.headers.get('location')).toMatch(/^\/fleet\/actions\/fact_/);
    expect(flashOf(await user.follow(started))).toEqual(['ok', 'Installing sitewarden-demo on 2 sites.']);
    expect(JSON.parse((await jobs())[0]!.params)).toMatchObject({
      action: 'install',
      slug: 'sitewarden-demo',
      activate: true,
    });
    await t.services.fleetActions.idle();
    const view = await t.services.fleetActions.get((await jobs())[0]!.id);
    expect(view.counts).toMatchObject({ total: 2, done: 2, failed: 2 });
  });

  it('answers an unknown action page with the dashboard’s not-found page', async () => {
    const response = await user.get('/fleet/actions/fact_nope');
    expect(response.status).toBe(404);
  });
});
