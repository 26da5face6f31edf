import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import type { Plugin, Theme } from '../../src/inventory/index.js';
import { startFakeWordPress, type FakeWordPress } from '../support/fake-wordpress/index.js';
import { createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';

/** The fleet's pending updates and installed items, answered from the rows each site's sync writes. */
let t: TestApp;
let fake: FakeWordPress;
beforeAll(async () => {
  t = createTestApp();
  fake = await startFakeWordPress();
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

async function addSite(plugins: Plugin[], themes: Theme[] = [], tags: string[] = []) {
  const id = insertConnectedSite(t, { tags });
  await t.services.inventories.write(id, { plugins, themes, syncedAt: t.clock.now() });
  return id;
}

const plugin = (slug: string, version: string, update: string | null, status: Plugin['status'] = 'active'): Plugin => ({
  slug,
  file: `${slug}/${slug}.php`,
  name: `The ${slug}`,
  version,
  status,
  update: update ? { version: update } : null,
});
const theme = (slug: string, version: string, update: string | null, status: Theme['status'] = 'inactive'): Theme => ({
  slug,
  name: `Theme ${slug}`,
  version,
  status,
  parent: null,
  update: update ? { version: update } : null,
});

const get = async (path: string) => {
  const response = await t.call('GET', path, { token: t.readToken });
  expect(response.status, response.text).toBe(200);
  return response.json;
};

describe('the fleet', () => {
  let a: string, b: string, c: string;
  beforeAll(async () => {
    a = await addSite(
      [plugin('seo', '1.0', '2.0'), plugin('cache', '3.1', null)],
      [theme('neat', '1.0', '1.1', 'active')],
      ['client:acme'],
    );
    b = await addSite(
      [plugin('seo', '1.5', '2.0', 'inactive'), plugin('cache', '3.0', '3.1')],
      [],
      ['client:acme', 'shop'],
    );
    c = await addSite([plugin('seo', '1.0', '2.1')], [theme('neat', '1.1', null)], ['client:other']);
  });

  it('groups pending updates by item and version offered: names, from-versions, site counts, where the sites are', async () => {
    const page = await get('/api/fleet/updates');
    expect(page.groupBy).toBe('item');
    expect(page.items).toEqual([
      {
        type: 'plugin',
        slug: 'cache',
        name: 'The cache',
        fromVersions: ['3.0'],
        toVersion: '3.1',
        sites: 1,
        siteList: '/api/fleet/plugins/cache',
      },
      expect.objectContaining({ slug: 'seo', fromVersions: ['1.0', '1.5'], toVersion: '2.0', sites: 2 }),
      expect.objectContaining({ slug: 'seo', fromVersions: ['1.0'], toVersion: '2.1', sites: 1 }),
      expect.objectContaining({ type: 'theme', slug: 'neat', fromVersions: ['1.0'], toVersion: '1.1', sites: 1 }),
    ]);
    // Narrowed by tag and type; page by page with a cursor.
    const acme = await get('/api/fleet/updates?tag=client:acme&type=plugin&limit=1');
    expect(acme.items).toEqual([expect.objectContaining({ slug: 'cache', sites: 1 })]);
    const next = await get(`/api/fleet/updates?tag=client:acme&type=plugin&limit=1&cursor=${acme.nextCursor}`);
    expect(next.items).toEqual([expect.objectContaining({ slug: 'seo', toVersion: '2.0', sites: 2 })]);
    expect(next.nextCursor).toBeNull();
    expect((await get('/api/fleet/updates?tag=client:acme&tag=shop')).items).toHaveLength(2);
  });

  it('groups pending updates by site', async () => {
    const page = await get('/api/fleet/updates?groupBy=site');
    expect(page.items.map((site: { siteId: string }) => site.siteId)).toEqual([a, b, c]);
    expect(page.items[1]).toEqual({
      siteId: b,
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      updates: [
        { type: 'plugin', slug: 'cache', name: 'The cache', version: '3.0', toVersion: '3.1' },
        { type: 'plugin', slug: 'seo', name: 'The seo', version: '1.5', toVersion: '2.0' },
      ],
    });
    const first = await get('/api/fleet/updates?groupBy=site&type=theme');
    expect(first.items).toEqual([
      expect.objectContaining({ siteId: a, updates: [expect.objectContaining({ slug: 'neat' })] }),
    ]);
  });

  it('lists what is installed across the fleet, and which sites have one item at which version', async () => {
    const plugins = await get('/api/fleet/plugins');
    expect(plugins.items).toEqual([
      expect.objectContaining({ slug: 'cache', sites: 2, active: 2, withUpdate: 1, versions: ['3.0', '3.1'] }),
      expect.objectContaining({ slug: 'seo', sites: 3, active: 2, withUpdate: 3, versions: ['1.0', '1.5'] }),
    ]);
    const themes = await get('/api/fleet/themes?tag=client:other');
    expect(themes.items).toEqual([expect.objectContaining({ slug: 'neat', sites: 1, active: 0, versions: ['1.1'] })]);
    const seo = await get('/api/fleet/plugins/seo');
    expect(seo.items).toEqual([
      expect.objectContaining({ siteId: a, version: '1.0', active: true, update: { version: '2.0' } }),
      expect.objectContaining({ siteId: b, version: '1.5', active: false, update: { version: '2.0' } }),
      expect.objectContaining({ siteId: c, version: '1.0', active: true, update: { version: '2.1' } }),
    ]);
    expect((await get('/api/fleet/plugins/seo?tag=shop')).items).toEqual([expect.objectContaining({ siteId: b })]);
    expect((await get('/api/fleet/plugins/nothing-like-it')).items).toEqual([]);
  });

  it('follows each sync: a connected site’s updates appear, a site read again replaces its rows, a removed site leaves', async () => {
    const connected = await t.call('POST', '/api/sites', {
      json: { url: fake.url, username: fake.username, applicationPassword: fake.applicationPassword, tags: ['fake'] },
    });
    expect(connected.status, connected.text).toBe(201);
    const id = connected.json.id as string;
    const bySite = await get('/api/fleet/updates?groupBy=site&tag=fake');
    const synced = connected.json.plugins
      .filter((p: Plugin) => p.update)
      .map((p: Plugin) => ({ slug: p.slug, version: p.version, toVersion: p.update!.version }));
    expect(synced.length).toBeGreaterThan(0);
    expect(bySite.items).toEqual([
      expect.objectContaining({
        siteId: id,
        updates: expect.arrayContaining(synced.map((update: object) => expect.objectContaining(update))),
      }),
    ]);
    expect((await t.call('DELETE', `/api/sites/${id}`)).status).toBe(204);
    expect((await get('/api/fleet/updates?groupBy=site&tag=fake')).items).toEqual([]);

    const other = await addSite([plugin('seo', '1.0', '2.0')], [], ['resync']);
    await t.services.inventories.write(other, {
      plugins: [plugin('seo', '2.0', null)],
      themes: [],
      syncedAt: t.clock.now(),
    });
    expect((await get('/api/fleet/updates?tag=resync')).items).toEqual([]);
    expect((await get('/api/fleet/plugins?tag=resync')).items).toEqual([
      expect.objectContaining({ slug: 'seo', versions: ['2.0'], withUpdate: 0 }),
    ]);
  });

  it('keeps the fleet-wide installed counts equal to the sites’ rows through syncs, updates and removals', async () => {
    // Counted the slow way, from every site's rows, as the per-item totals must say.
    const counted = () =>
      t.database.db.all(
        sql`select type, slug, count(*) as sites, sum(active) as active, count(update_version) as withUpdate,
          group_concat(distinct version) as versions from (select * from inventory_items order by version)
          group by type, slug order by type, slug`,
      ) as { type: string; slug: string; sites: number; active: number; withUpdate: number; versions: string }[];
    const listed = async () => [
      ...(await get('/api/fleet/plugins?limit=100')).items,
      ...(await get('/api/fleet/themes?limit=100')).items,
    ];
    const expectAgreement = async () =>
      expect(
        (await listed()).map(({ type, slug, sites, active, withUpdate, versions }) => ({
          type,
          slug,
          sites,
          active,
          withUpdate,
          versions: versions.join(','),
        })),
      ).toEqual(counted());
    await expectAgreement();
    const d = await addSite(
      [plugin('seo', '1.0', '2.1'), plugin('forms', '4.0', null, 'inactive')],
      [theme('neat', '1.0', '1.1')],
    );
    await expectAgreement();
    await t.services.inventories.write(d, {
      plugins: [plugin('forms', '4.1', null)],
      themes: [],
      syncedAt: t.clock.now(),
    });
    await expectAgreement();
    expect((await t.call('DELETE', `/api/sites/${d}`)).status).toBe(204);
    await expectAgreement();
    expect((await get('/api/fleet/plugins')).items.map((item: { slug: string }) => item.slug)).not.toContain('forms');
    // A page after a cursor goes on from the last item.
    const first = await get('/api/fleet/plugins?limit=1');
    const rest = await get(`/api/fleet/plugins?limit=100&cursor=${encodeURIComponent(first.nextCursor)}`);
    expect([...first.items, ...rest.items]).toEqual((await get('/api/fleet/plugins?limit=100')).items);
  });

  it('refuses malformed queries with problems', async () => {
    for (const path of [
      '/api/fleet/updates?groupBy=tag',
      '/api/fleet/updates?type=widget',
      '/api/fleet/updates?cursor=bm9wZQ',
      '/api/fleet/updates?tag=Not%20A%20Tag',
      '/api/fleet/plugins/..%2Fetc',
      '/api/fleet/themes?limit=0',
    ]) {
      const response = await t.call('GET', path, { token: t.readToken });
      expect(response.status, path).toBe(400);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
    }
  });
});

describe('refreshing the fleet’s inventory on demand', () => {
  const lastAttempt = async (id: string) =>
    (await t.services.sitesRepository.findById(id))?.lastSyncAttemptAt?.getTime() ?? 0;
  async function until(check: () => Promise<boolean>) {
    for (let i = 0; i < 200 && !(await check()); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    return check();
  }

  it('queues a sync of the sites selected by tag, by id, or all, and says how many', async () => {
    const connected = await t.call('POST', '/api/sites', {
      json: { url: fake.url, username: fake.username, applicationPassword: fake.applicationPassword, tags: ['again'] },
    });
    expect(connected.status, connected.text).toBe(201);
    const id = connected.json.id as string;
    const before = await lastAttempt(id);
    await new Promise((resolve) => setTimeout(resolve, 5));

    const byTag = await t.call('POST', '/api/fleet/refresh', { json: { tag: ['again'] } });
    expect(byTag.status, byTag.text).toBe(202);
    expect(byTag.json).toEqual({ selected: 1, queued: 1 });
    expect(await until(async () => (await lastAttempt(id)) > before)).toBe(true);

    const byId = await t.call('POST', '/api/fleet/refresh', { json: { sites: [id] } });
    expect(byId.json).toEqual({ selected: 1, queued: 1 });
    const all = await t.call('POST', '/api/fleet/refresh', { json: { all: true } });
    expect(all.status).toBe(202);
    expect(all.json.selected).toBeGreaterThanOrEqual(1);
    expect((await t.call('POST', '/api/fleet/refresh', { json: { tag: ['nobody-has-this'] } })).json).toEqual({
      selected: 0,
      queued: 0,
    });
    await t.call('DELETE', `/api/sites/${id}`);
  });

  it('refuses an unclear selection, unknown sites and read tokens', async () => {
    for (const json of [{}, { all: true, tag: ['a'] }, { sites: [] }, { all: false }]) {
      const response = await t.call('POST', '/api/fleet/refresh', { json });
      expect(response.status, JSON.stringify(json)).toBe(400);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
    }
    const unknown = await t.call('POST', '/api/fleet/refresh', { json: { sites: ['site_nope'] } });
    expect(unknown.status).toBe(404);
    expect(unknown.json.siteIds).toEqual(['site_nope']);
    const read = await t.call('POST', '/api/fleet/refresh', { json: { all: true }, token: t.readToken });
    expect(read.status).toBe(403);
  });
});
