import { sql } from 'drizzle-orm';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { rowsOf } from '../../src/db/dialect.js';
import type { StateDatabase } from '../../src/db/state-db.js';
import type * as pg from '../../src/fleet/fleet.pg-table.js';
import { createFleetRepository } from '../../src/fleet/fleet.repository.js';
import type * as sqlite from '../../src/fleet/fleet.table.js';
import type { InventoryLists, SiteExtras } from '../../src/inventory/inventory.lists.js';
import { createInventoryRepository } from '../../src/inventory/inventory.repository.js';
import type { Plugin, Theme } from '../../src/inventory/inventory.schemas.js';
import type { SiteScope } from '../../src/shared/actor.js';
import { createSitesRepository } from '../../src/sites/sites.repository.js';
import { dialects, stateDatabaseFor, type RowsOf } from '../support/dialects.js';

/**
 * The fleet's questions on both dialects (issue 34, docs/design/cluster-state.md): one test body on SQLite
 * `:memory:` and on a database of the run's PostgreSQL cluster, over inventories written as a sync writes them
 * (the inventory repository), and the per-item totals their triggers keep, equal to a count of the item rows.
 */
const at = (ms: number) => new Date(Date.UTC(2026, 10, 29) + ms);

const plugin = (slug: string, version: string, update: string | null, status: Plugin['status'] = 'active'): Plugin => ({
  slug,
  file: `${slug}/${slug}.php`,
  name: `Plugin ${slug}`,
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
const extras = (coreOffers: string[], languages: string[]): SiteExtras => ({
  databaseType: 'mariadb',
  databaseVersion: '10.11.6',
  timeZone: 'UTC',
  coreOffers,
  translations: languages.map((language) => ({ type: 'plugin', slug: 'seo', language, version: '2.0' })),
});
const tagged = (...tags: string[]): SiteScope => ({ kind: 'tags', tags });
/** A comma-joined list as the routes read it: each once, sorted (neither dialect orders an aggregate's values). */
const listed = (list: string | null) => (list ? [...new Set(list.split(','))].sort() : []);

describe('the fleet tables of the two dialects', () => {
  it('give the repository the same rows', () => {
    expectTypeOf<RowsOf<typeof pg.fleetItemTotals>>().toEqualTypeOf<RowsOf<typeof sqlite.fleetItemTotals>>();
    expectTypeOf<RowsOf<typeof pg.fleetItemVersions>>().toEqualTypeOf<RowsOf<typeof sqlite.fleetItemVersions>>();
  });
});

describe.each(dialects)('the fleet repository on %s', (dialect) => {
  const state = stateDatabaseFor(dialect, 'fleet-repository');

  /** A connected site with its tags, running `wordpress`. */
  const addSite = async (id: string, tags: string[], wordpress: string) => {
    const sites = createSitesRepository(state());
    await sites.insert({
      id,
      url: `https://${id}.example.test`,
      restUrl: `https://${id}.example.test/wp-json/`,
      state: 'connected',
      wordpressVersion: wordpress,
      createdAt: at(0),
      updatedAt: at(0),
    });
    if (tags.length > 0) await sites.setTags(id, tags);
  };
  const write = (siteId: string, lists: Partial<InventoryLists>) =>
    createInventoryRepository(state()).write(siteId, { plugins: [], themes: [], syncedAt: at(1_000), ...lists });

  /**
   * Three sites: a (client, staging) and b (client) with updates pending, c (untagged) up to date.
   *   a: seo 1.0 → 2.0 active, cache 3.1 inactive; theme neat 1.0 → 1.1 active; core 6.5.3 → 6.6.1; one language pack
   *   b: seo 1.5 → 2.0 inactive, forms 4.0 → 4.1 active; theme neat 1.1 active; core 6.6.0 → 6.6.1; two language packs
   *   c: cache 3.1 active; theme plain 2.0 inactive; core 6.6.1
   */
  const fleetOfThree = async () => {
    await addSite('site_a', ['client', 'staging'], '6.5.3');
    await addSite('site_b', ['client'], '6.6.0');
    await addSite('site_c', [], '6.6.1');
    await write('site_a', {
      plugins: [plugin('cache', '3.1', null, 'inactive'), plugin('seo', '1.0', '2.0')],
      themes: [theme('neat', '1.0', '1.1', 'active')],
      extras: extras(['6.6.1'], ['de_DE']),
    });
    await write('site_b', {
      plugins: [plugin('forms', '4.0', '4.1'), plugin('seo', '1.5', '2.0', 'inactive')],
      themes: [theme('neat', '1.1', null, 'active')],
      extras: extras(['6.6.1'], ['de_DE', 'fr_FR']),
    });
    await write('site_c', {
      plugins: [plugin('cache', '3.1', null)],
      themes: [theme('plain', '2.0', null)],
      extras: extras([], []),
    });
    return createFleetRepository(state());
  };

  describe('what is installed', () => {
    it('lists the whole fleet’s items from the totals, a page after the cursor’s item', async () => {
      const fleet = await fleetOfThree();
      const page = async (type: 'plugin' | 'theme', limit: number, after?: string) =>
        (await fleet.installed({ type, tags: [], limit, ...(after && { after }) })).map(({ versions, ...row }) => ({
          ...row,
          versions: listed(versions),
        }));

      expect(await page('plugin', 2)).toEqual([
        { type: 'plugin', slug: 'cache', name: 'Plugin cache', sites: 2, active: 1, withUpdate: 0, versions: ['3.1'] },
        { type: 'plugin', slug: 'forms', name: 'Plugin forms', sites: 1, active: 1, withUpdate: 1, versions: ['4.0'] },
      ]);
      expect(await page('plugin', 2, 'plugin\tforms')).toEqual([
        {
          type: 'plugin',
          slug: 'seo',
          name: 'Plugin seo',
          sites: 2,
          active: 1,
          withUpdate: 2,
          versions: ['1.0', '1.5'],
        },
      ]);
      // A cursor of an earlier type starts the themes from the first; one of a later type answers none.
      expect((await page('theme', 10, 'plugin\tseo')).map((row) => [row.slug, row.sites, row.versions])).toEqual([
        ['neat', 2, ['1.0', '1.1']],
        ['plain', 1, ['2.0']],
      ]);
      expect(await page('plugin', 10, 'theme\tneat')).toEqual([]);
    });

    it('counts a tag’s or a scope’s items from their sites’ rows', async () => {
      const fleet = await fleetOfThree();
      const counts = async (tags: string[], scope?: SiteScope, after?: string) =>
        (
          await fleet.installed({ type: 'plugin', tags, limit: 10, ...(scope && { scope }), ...(after && { after }) })
        ).map((row) => [row.slug, row.name, row.sites, row.active, row.withUpdate, listed(row.versions)]);

      expect(await counts(['client'])).toEqual([
        ['cache', 'Plugin cache', 1, 0, 0, ['3.1']],
        ['forms', 'Plugin forms', 1, 1, 1, ['4.0']],
        ['seo', 'Plugin seo', 2, 1, 2, ['1.0', '1.5']],
      ]);
      expect(await counts(['client'], undefined, 'plugin\tforms')).toEqual([
        ['seo', 'Plugin seo', 2, 1, 2, ['1.0', '1.5']],
      ]);
      expect(await counts(['client', 'staging'])).toEqual([
        ['cache', 'Plugin cache', 1, 0, 0, ['3.1']],
        ['seo', 'Plugin seo', 1, 1, 1, ['1.0']],
      ]);
      expect(await counts([], tagged('staging'))).toEqual(await counts(['staging']));
      expect(await counts(['client'], tagged('staging'))).toEqual(await counts(['staging']));
      expect(await counts([], tagged())).toEqual([]);
      expect(await counts(['nobody'])).toEqual([]);
      // Every site's scope is no limit: the totals' answer.
      expect((await counts([], { kind: 'all' })).map((row) => [row[0], row[2]])).toEqual([
        ['cache', 2],
        ['forms', 1],
        ['seo', 2],
      ]);
    });

    it('lists the sites that have one item, by site id, narrowed by tag, scope and cursor', async () => {
      const fleet = await fleetOfThree();
      const sites = (fields: { tags?: string[]; scope?: SiteScope; after?: string; limit?: number } = {}) =>
        fleet.sitesWith({ type: 'plugin', slug: 'seo', tags: [], limit: 10, ...fields });

      expect(await sites()).toEqual([
        {
          siteId: 'site_a',
          url: 'https://site_a.example.test',
          version: '1.0',
          active: true,
          updateVersion: '2.0',
        },
        {
          siteId: 'site_b',
          url: 'https://site_b.example.test',
          version: '1.5',
          active: false,
          updateVersion: '2.0',
        },
      ]);
      const ids = async (fields: Parameters<typeof sites>[0]) => (await sites(fields)).map((row) => row.siteId);
      expect(await ids({ limit: 1 })).toEqual(['site_a']);
      expect(await ids({ after: 'site_a' })).toEqual(['site_b']);
      expect(await ids({ tags: ['staging'] })).toEqual(['site_a']);
      expect(await ids({ tags: ['client', 'staging'] })).toEqual(['site_a']);
      expect(await ids({ scope: tagged('client') })).toEqual(['site_a', 'site_b']);
      expect(await ids({ scope: tagged() })).toEqual([]);
      expect(
        (await fleet.sitesWith({ type: 'theme', slug: 'seo', tags: [], limit: 10 })).map((row) => row.siteId),
      ).toEqual([]);
    });
  });

  describe('the pending updates', () => {
    it('by item: one row per item and version offered, with the versions sites run and how many', async () => {
      const fleet = await fleetOfThree();
      const items = async (filter: { tags?: string[]; type?: 'plugin' | 'theme'; scope?: SiteScope }, after?: string) =>
        (await fleet.pendingByItem({ filter: { tags: [], ...filter }, limit: 10, ...(after && { after }) })).map(
          (row) => [`${row.type}:${row.slug}`, row.name, row.toVersion, listed(row.fromVersions), row.sites],
        );

      expect(await items({})).toEqual([
        ['plugin:forms', 'Plugin forms', '4.1', ['4.0'], 1],
        ['plugin:seo', 'Plugin seo', '2.0', ['1.0', '1.5'], 2],
        ['theme:neat', 'Theme neat', '1.1', ['1.0'], 1],
      ]);
      expect(await items({}, 'plugin\tseo\t2.0')).toEqual([['theme:neat', 'Theme neat', '1.1', ['1.0'], 1]]);
      expect(await items({}, 'plugin\tseo\t1.9')).toEqual([
        ['plugin:seo', 'Plugin seo', '2.0', ['1.0', '1.5'], 2],
        ['theme:neat', 'Theme neat', '1.1', ['1.0'], 1],
      ]);
      expect(await items({ type: 'theme' })).toEqual([['theme:neat', 'Theme neat', '1.1', ['1.0'], 1]]);
      expect(await items({ tags: ['staging'] })).toEqual([
        ['plugin:seo', 'Plugin seo', '2.0', ['1.0'], 1],
        ['theme:neat', 'Theme neat', '1.1', ['1.0'], 1],
      ]);
      expect(await items({ scope: tagged('client') })).toEqual(await items({}));
      expect(await items({ scope: tagged('nobody') })).toEqual([]);
      expect(await fleet.pendingByItem({ filter: { tags: [] }, limit: 1 })).toHaveLength(1);
    });

    it('by site: a page of sites with an update, each with its core, plugin, theme and language pack updates', async () => {
      const fleet = await fleetOfThree();
      expect(await fleet.pendingBySite({ filter: { tags: [] }, limit: 10 })).toEqual([
        {
          siteId: 'site_a',
          url: 'https://site_a.example.test',
          updates: [
            { type: 'core', slug: 'wordpress', name: 'WordPress', version: '6.5.3', toVersion: '6.6.1' },
            { type: 'plugin', slug: 'seo', name: 'Plugin seo', version: '1.0', toVersion: '2.0' },
            { type: 'theme', slug: 'neat', name: 'Theme neat', version: '1.0', toVersion: '1.1' },
            { type: 'translations', name: 'Translations', packs: 1 },
          ],
        },
        {
          siteId: 'site_b',
          url: 'https://site_b.example.test',
          updates: [
            { type: 'core', slug: 'wordpress', name: 'WordPress', version: '6.6.0', toVersion: '6.6.1' },
            { type: 'plugin', slug: 'forms', name: 'Plugin forms', version: '4.0', toVersion: '4.1' },
            { type: 'plugin', slug: 'seo', name: 'Plugin seo', version: '1.5', toVersion: '2.0' },
            { type: 'translations', name: 'Translations', packs: 2 },
          ],
        },
      ]);
      const pages = async (fields: Partial<Parameters<typeof fleet.pendingBySite>[0]>) =>
        (await fleet.pendingBySite({ filter: { tags: [] }, limit: 10, ...fields })).map((site) => [
          site.siteId,
          site.updates.map((update) => ('slug' in update ? `${update.type}:${update.slug}` : update.type)),
        ]);

      expect(await pages({ limit: 1 })).toHaveLength(1);
      expect((await pages({ after: 'site_a' })).map(([id]) => id)).toEqual(['site_b']);
      expect(await pages({ filter: { tags: [], type: 'plugin' } })).toEqual([
        ['site_a', ['plugin:seo']],
        ['site_b', ['plugin:forms', 'plugin:seo']],
      ]);
      expect(await pages({ filter: { tags: [], type: 'theme' } })).toEqual([['site_a', ['theme:neat']]]);
      expect(await pages({ offers: ['core'], items: false })).toEqual([
        ['site_a', ['core:wordpress']],
        ['site_b', ['core:wordpress']],
      ]);
      expect(await pages({ offers: ['translation'], items: false })).toEqual([
        ['site_a', ['translations']],
        ['site_b', ['translations']],
      ]);
      expect(await pages({ filter: { tags: ['staging'] } })).toEqual([
        ['site_a', ['core:wordpress', 'plugin:seo', 'theme:neat', 'translations']],
      ]);
      expect((await pages({ filter: { tags: ['client'] }, after: 'site_a' })).map(([id]) => id)).toEqual(['site_b']);
      expect((await pages({ filter: { tags: [], scope: tagged('staging') } })).map(([id]) => id)).toEqual(['site_a']);
      expect(await pages({ filter: { tags: [], scope: tagged() } })).toEqual([]);
    });

    it('WordPress core: one row per version offered, the versions sites run and how many', async () => {
      const fleet = await fleetOfThree();
      const core = async (fields: { tags?: string[]; afterVersion?: string; scope?: SiteScope } = {}) =>
        (await fleet.pendingCore({ tags: [], ...fields })).map((row) => ({
          ...row,
          fromVersions: listed(row.fromVersions),
        }));

      expect(await core()).toEqual([{ toVersion: '6.6.1', fromVersions: ['6.5.3', '6.6.0'], sites: 2 }]);
      expect(await core({ afterVersion: '6.6.1' })).toEqual([]);
      expect(await core({ afterVersion: '6.6.0' })).toHaveLength(1);
      expect(await core({ tags: ['staging'] })).toEqual([{ toVersion: '6.6.1', fromVersions: ['6.5.3'], sites: 1 }]);
      expect(await core({ scope: tagged('nobody') })).toEqual([]);
    });

    it('language packs: how many sites are offered one, how many packs in all', async () => {
      const fleet = await fleetOfThree();
      expect(await fleet.pendingTranslations({ tags: [] })).toEqual({ sites: 2, packs: 3 });
      expect(await fleet.pendingTranslations({ tags: ['staging'] })).toEqual({ sites: 1, packs: 1 });
      expect(await fleet.pendingTranslations({ tags: [], scope: tagged('client') })).toEqual({ sites: 2, packs: 3 });
      expect(await fleet.pendingTranslations({ tags: [], scope: tagged() })).toEqual({ sites: 0, packs: 0 });
    });
  });

  describe('the per-item totals the triggers keep', () => {
    /**
     * The totals and version counts as held, and as counted from the item rows now (the name is the one the last
     * site written gave, which a count cannot tell).
     */
    const totals = async (db: StateDatabase) => {
      const read = <Row extends Record<string, unknown>>(query: ReturnType<typeof sql>) =>
        db.run((tx) => rowsOf<Row>(db, tx, query));
      return {
        held: await read(sql`select type, slug, sites, active, with_update as "withUpdate"
          from fleet_item_totals order by type, slug`),
        counted: await read(sql`select type, slug, cast(count(*) as integer) as sites,
          cast(sum(case when active then 1 else 0 end) as integer) as active,
          cast(count(update_version) as integer) as "withUpdate"
          from inventory_items group by type, slug order by type, slug`),
        versions: await read(sql`select type, slug, version, sites from fleet_item_versions
          order by type, slug, version`),
        versionsCounted: await read(sql`select type, slug, version, cast(count(*) as integer) as sites
          from inventory_items group by type, slug, version order by type, slug, version`),
      };
    };
    const expectCounted = async () => {
      const { held, counted, versions, versionsCounted } = await totals(state());
      expect(held).toEqual(counted);
      expect(versions).toEqual(versionsCounted);
      return { held, versions };
    };

    it('count every row of a site’s writes: written, written again with changes, patched, and its site deleted', async () => {
      await fleetOfThree();
      const first = await expectCounted();
      expect(first.held).toContainEqual({ type: 'plugin', slug: 'seo', sites: 2, active: 1, withUpdate: 2 });

      // site_a again: seo updated and renamed, cache activated and offered one, forms added, neat gone, plain added.
      await write('site_a', {
        plugins: [
          plugin('cache', '3.1', '3.2'),
          plugin('forms', '4.1', null),
          { ...plugin('seo', '2.0', null), name: 'SEO' },
        ],
        themes: [theme('plain', '2.0', null, 'active')],
        syncedAt: at(2_000),
      });
      const rewritten = await expectCounted();
      expect(rewritten.held).toContainEqual({ type: 'plugin', slug: 'seo', sites: 2, active: 1, withUpdate: 1 });
      // The name is the one the site written last gave.
      const installed = await createFleetRepository(state()).installed({ type: 'plugin', tags: [], limit: 10 });
      expect(installed.map((row) => row.name)).toEqual(['Plugin cache', 'Plugin forms', 'SEO']);
      expect(rewritten.versions.filter((row) => row.slug === 'seo')).toEqual([
        { type: 'plugin', slug: 'seo', version: '1.5', sites: 1 },
        { type: 'plugin', slug: 'seo', version: '2.0', sites: 1 },
      ]);

      // The same lists again write no row, and leave the totals as they were.
      await write('site_a', {
        plugins: [
          plugin('cache', '3.1', '3.2'),
          plugin('forms', '4.1', null),
          { ...plugin('seo', '2.0', null), name: 'SEO' },
        ],
        themes: [theme('plain', '2.0', null, 'active')],
        syncedAt: at(3_000),
      });
      expect(await expectCounted()).toEqual(rewritten);

      // A patch after updates: the items it names written as they are now (cache updated, forms gone).
      await write('site_b', {
        plugins: [plugin('cache', '3.2', null)],
        themes: null,
        only: new Set(['plugin\tcache', 'plugin\tforms']),
        syncedAt: at(4_000),
      });
      await expectCounted();

      await createSitesRepository(state()).delete('site_a');
      const deleted = await expectCounted();
      expect(deleted.held.map((row) => `${String(row.type)}:${String(row.slug)}:${String(row.sites)}`)).toEqual([
        'plugin:cache:2',
        'plugin:seo:1',
        'theme:neat:1',
        'theme:plain:1',
      ]);

      await createSitesRepository(state()).delete('site_b');
      await createSitesRepository(state()).delete('site_c');
      expect(await expectCounted()).toEqual({ held: [], versions: [] });
    });

    it('count right when many sites sharing items are written at once', async () => {
      const ids = Array.from({ length: 8 }, (_, n) => `site_${n}`);
      for (const id of ids) await addSite(id, [], '6.6.1');
      const listFor = (n: number, round: number) => ({
        plugins: ['cache', 'forms', 'seo', 'shop', 'stats']
          .filter((_, i) => (n + i + round) % 3 !== 0)
          .map((slug, i) =>
            plugin(slug, `${(n + round) % 2}.${i}`, (n + i) % 2 ? '9.0' : null, i % 2 ? 'active' : 'inactive'),
          ),
        themes: [theme(round % 2 ? 'neat' : 'plain', '1.0', null, 'active')],
        syncedAt: at(1_000 + round),
      });
      for (const round of [0, 1, 2]) {
        await Promise.all(ids.map((id, n) => write(id, listFor(n, round))));
        await expectCounted();
      }
      await Promise.all(ids.map((id) => createSitesRepository(state()).delete(id)));
      expect(await expectCounted()).toEqual({ held: [], versions: [] });
    });
  });
});
