import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Plugin } from '../../src/inventory/index.js';
import type { SiteExtras } from '../../src/inventory/inventory.repository.js';
import { createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';
import { signIn } from '../dashboard/signed-in.js';

/** `/api/fleet/updates` and the Updates page with WordPress core and translation offers beside plugins and themes. */
let t: TestApp;
beforeAll(() => {
  t = createTestApp();
});
afterAll(() => t.close());

const plugin = (slug: string, version: string, update: string | null): Plugin => ({
  slug,
  file: `${slug}/${slug}.php`,
  name: `The ${slug}`,
  version,
  status: 'active',
  update: update ? { version: update } : null,
});
const extras = (coreOffers: string[], languages: string[]): SiteExtras => ({
  databaseType: null,
  databaseVersion: null,
  timeZone: null,
  coreOffers,
  translations: languages.map((language) => ({ type: 'core', slug: 'default', language, version: '6.5' })),
});

async function addSite(wordpressVersion: string, plugins: Plugin[], offers: SiteExtras, tags: string[] = []) {
  const id = insertConnectedSite(t, { tags, wordpressVersion });
  await t.services.inventories.write(id, { plugins, themes: [], syncedAt: t.clock.now(), extras: offers });
  return id;
}

const get = async (path: string) => {
  const response = await t.call('GET', path, { token: t.readToken });
  expect(response.status, response.text).toBe(200);
  return response.json;
};

describe('core and translation updates across the fleet', () => {
  let a: string, b: string, c: string;
  beforeAll(async () => {
    a = await addSite('6.4.3', [plugin('seo', '1.0', '2.0')], extras(['6.4.5', '6.5'], ['de_DE', 'fr_FR']), ['acme']);
    b = await addSite('6.4.4', [], extras(['6.5'], []), ['acme']);
    c = await addSite('6.5', [plugin('seo', '1.0', '2.0')], extras([], ['nl_NL']));
  });

  it('lists core versions first, then plugins and themes, then translations, grouped by item', async () => {
    const page = await get('/api/fleet/updates');
    expect(page.items).toEqual([
      {
        type: 'core',
        slug: 'wordpress',
        name: 'WordPress',
        fromVersions: ['6.4.3'],
        toVersion: '6.4.5',
        sites: 1,
        siteList: '/api/fleet/updates?groupBy=site&type=core',
      },
      expect.objectContaining({ type: 'core', fromVersions: ['6.4.3', '6.4.4'], toVersion: '6.5', sites: 2 }),
      expect.objectContaining({ type: 'plugin', slug: 'seo', toVersion: '2.0', sites: 2 }),
      {
        type: 'translations',
        name: 'Translations',
        sites: 2,
        packs: 3,
        siteList: '/api/fleet/updates?groupBy=site&type=translations',
      },
    ]);
    // Page by page through the three kinds, each entry once.
    const seen = [];
    let cursor: string | null = null;
    do {
      const next = await get(`/api/fleet/updates?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      expect(next.items).toHaveLength(1);
      seen.push(next.items[0]);
      cursor = next.nextCursor;
    } while (cursor);
    expect(seen).toEqual(page.items);
    // By type and by tag.
    expect((await get('/api/fleet/updates?type=core')).items.map((i: { toVersion: string }) => i.toVersion)).toEqual([
      '6.4.5',
      '6.5',
    ]);
    expect((await get('/api/fleet/updates?type=translations')).items).toEqual([
      expect.objectContaining({ type: 'translations', sites: 2, packs: 3 }),
    ]);
    expect((await get('/api/fleet/updates?type=plugin')).items).toEqual([expect.objectContaining({ slug: 'seo' })]);
    expect((await get('/api/fleet/updates?tag=acme')).items).toEqual([
      expect.objectContaining({ type: 'core', toVersion: '6.4.5', sites: 1 }),
      expect.objectContaining({ type: 'core', toVersion: '6.5', sites: 2 }),
      expect.objectContaining({ type: 'plugin', slug: 'seo', sites: 1 }),
      expect.objectContaining({ type: 'translations', sites: 1, packs: 2 }),
    ]);
  });

  it('lists each site’s core, plugin, theme and translation updates, grouped by site', async () => {
    const page = await get('/api/fleet/updates?groupBy=site');
    const byId = Object.fromEntries(page.items.map((site: { siteId: string }) => [site.siteId, site]));
    expect(Object.keys(byId).sort()).toEqual([a, b, c].sort());
    expect(byId[a].updates).toEqual([
      { type: 'core', slug: 'wordpress', name: 'WordPress', version: '6.4.3', toVersion: '6.4.5' },
      { type: 'core', slug: 'wordpress', name: 'WordPress', version: '6.4.3', toVersion: '6.5' },
      { type: 'plugin', slug: 'seo', name: 'The seo', version: '1.0', toVersion: '2.0' },
      { type: 'translations', name: 'Translations', packs: 2 },
    ]);
    expect(byId[b].updates).toEqual([expect.objectContaining({ type: 'core', version: '6.4.4', toVersion: '6.5' })]);
    const core = await get('/api/fleet/updates?groupBy=site&type=core');
    expect(core.items.map((site: { siteId: string }) => site.siteId).sort()).toEqual([a, b].sort());
    expect(core.items.flatMap((site: { updates: { type: string }[] }) => site.updates.map((u) => u.type))).toEqual([
      'core',
      'core',
      'core',
    ]);
    const translations = await get('/api/fleet/updates?groupBy=site&type=translations');
    expect(translations.items.map((site: { siteId: string }) => site.siteId).sort()).toEqual([a, c].sort());
    const plugins = await get('/api/fleet/updates?groupBy=site&type=plugin');
    expect(plugins.items.map((site: { siteId: string }) => site.siteId).sort()).toEqual([a, c].sort());
  });

  it('shows core and translations on the Updates page, selectable for a bulk update', async () => {
    const user = await signIn(t);
    const html = await (await user.get('/updates')).text();
    expect(html).toContain('value="core" aria-label="Select WordPress core"');
    expect(html).toContain('value="translations" aria-label="Select translations"');
    expect(html).toMatch(/WordPress<span class="url">core<\/span>/);
    expect(html).toContain('3 packs');
    expect(html).toContain(`action="/sites/${a}/core/safe-update"`);
  });
});
