import { writtenAtOnce } from '../../src/db/write-batch.js';
import { eq, sql } from 'drizzle-orm';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { rowsOf, tableFor } from '../../src/db/dialect.js';
import type { StateDatabase } from '../../src/db/state-db.js';
import type { InventoryLists, SiteExtras } from '../../src/inventory/inventory.lists.js';
import * as pg from '../../src/inventory/inventory.pg-table.js';
import { createInventoryRepository } from '../../src/inventory/inventory.repository.js';
import type { Plugin, Theme } from '../../src/inventory/inventory.schemas.js';
import * as sqlite from '../../src/inventory/inventory.table.js';
import { createUpdateStateReader } from '../../src/inventory/update-state.js';
import { createSitesRepository } from '../../src/sites/sites.repository.js';
import { dialects, stateDatabaseFor, type RowsOf } from '../support/dialects.js';

/**
 * A site's stored inventory on both dialects (issue 34, docs/design/cluster-state.md): one test body on
 * SQLite `:memory:` (the writes are statements prepared once, one better-sqlite3 transaction) and on a
 * database of the run's PostgreSQL cluster (a few statements of the common surface in one transaction).
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
const extras = (fields: Partial<SiteExtras> = {}): SiteExtras => ({
  databaseType: 'mariadb',
  databaseVersion: '10.11.6',
  timeZone: 'Europe/Berlin',
  coreOffers: ['6.6.1'],
  translations: [{ type: 'plugin', slug: 'seo', language: 'de_DE', version: '2.0' }],
  ...fields,
});

describe('the inventory tables of the two dialects', () => {
  it('give the repository the same rows', () => {
    expectTypeOf<RowsOf<typeof pg.siteInventories>>().toEqualTypeOf<RowsOf<typeof sqlite.siteInventories>>();
    expectTypeOf<RowsOf<typeof pg.inventoryItems>>().toEqualTypeOf<RowsOf<typeof sqlite.inventoryItems>>();
    expectTypeOf<RowsOf<typeof pg.updateOffers>>().toEqualTypeOf<RowsOf<typeof sqlite.updateOffers>>();
    expectTypeOf<RowsOf<typeof pg.siteEnvironments>>().toEqualTypeOf<RowsOf<typeof sqlite.siteEnvironments>>();
  });
});

describe.each(dialects)('the inventory repository on %s', (dialect) => {
  const state = stateDatabaseFor(dialect, 'inventory-repository');

  const withSites = async (...ids: string[]) => {
    const sites = createSitesRepository(state());
    for (const id of ids)
      await sites.insert({
        id,
        url: `https://${id}.example.test`,
        restUrl: `https://${id}.example.test/wp-json/`,
        state: 'connected',
        wordpressVersion: '6.5.3',
        createdAt: at(0),
        updatedAt: at(0),
      });
    return createInventoryRepository(state());
  };
  const tables = () => ({
    items: tableFor(state().dialect, { sqlite: sqlite.inventoryItems, postgres: pg.inventoryItems }),
    offers: tableFor(state().dialect, { sqlite: sqlite.updateOffers, postgres: pg.updateOffers }),
  });
  /** The site's item rows as stored, by type and slug. */
  const itemsOf = async (siteId: string) => {
    const { items } = tables();
    const rows = await state().run((db) => db.select().from(items).where(eq(items.siteId, siteId)));
    return rows
      .map(({ siteId: _site, ...row }) => row)
      .sort((a, b) => `${a.type}\t${a.slug}`.localeCompare(`${b.type}\t${b.slug}`));
  };
  /** The site's offers as `type:slug@version` → first seen (ms after `at(0)`). */
  const offersOf = async (siteId: string) => {
    const { offers } = tables();
    const rows = await state().run((db) => db.select().from(offers).where(eq(offers.siteId, siteId)));
    return Object.fromEntries(
      rows.map((row) => [`${row.type}:${row.slug}@${row.version}`, row.firstSeenAt.getTime() - at(0).getTime()]),
    );
  };
  const sync = (fields: Partial<InventoryLists> = {}): InventoryLists => ({
    plugins: [plugin('seo', '1.0', '2.0'), plugin('cache', '3.1', null, 'inactive')],
    themes: [theme('neat', '1.0', '1.1', 'active'), theme('plain', '2.0', null)],
    syncedAt: at(1_000),
    extras: extras(),
    ...fields,
  });

  it('writes a sync whole: the lists, a row per item, the offers first seen then and the environment', async () => {
    const inventories = await withSites('site_a');
    const lists = sync();
    await inventories.write('site_a', lists);

    expect(await inventories.read('site_a')).toMatchObject({
      pluginsJson: JSON.stringify(lists.plugins),
      themesJson: JSON.stringify(lists.themes),
      syncedAt: at(1_000),
    });
    expect(await itemsOf('site_a')).toEqual([
      { type: 'plugin', slug: 'cache', name: 'Plugin cache', version: '3.1', updateVersion: null, active: false },
      { type: 'plugin', slug: 'seo', name: 'Plugin seo', version: '1.0', updateVersion: '2.0', active: true },
      { type: 'theme', slug: 'neat', name: 'Theme neat', version: '1.0', updateVersion: '1.1', active: true },
      { type: 'theme', slug: 'plain', name: 'Theme plain', version: '2.0', updateVersion: null, active: false },
    ]);
    expect(await inventories.details('site_a')).toEqual({
      environment: { databaseType: 'mariadb', databaseVersion: '10.11.6', timeZone: 'Europe/Berlin' },
      offers: [
        { type: 'core', slug: 'wordpress', version: '6.6.1', firstSeenAt: at(1_000) },
        { type: 'plugin', slug: 'seo', version: '2.0', firstSeenAt: at(1_000) },
        { type: 'theme', slug: 'neat', version: '1.1', firstSeenAt: at(1_000) },
        { type: 'translation', slug: 'plugin/seo/de_DE', version: '2.0', firstSeenAt: at(1_000) },
      ],
    });
  });

  it('answers nothing for a site never synced', async () => {
    const inventories = await withSites('site_a');
    expect(await inventories.read('site_a')).toBeUndefined();
    expect(await inventories.details('site_a')).toEqual({ environment: undefined, offers: [] });
  });

  it('writes a later sync over it: items changed, added and gone; an offer keeps its first sighting while offered', async () => {
    const inventories = await withSites('site_a');
    await inventories.write('site_a', sync());
    await inventories.write(
      'site_a',
      sync({
        plugins: [plugin('seo', '1.0', '2.0'), plugin('cache', '3.1', '3.2', 'active'), plugin('forms', '4.0', null)],
        themes: [theme('neat', '1.1', null, 'active')],
        syncedAt: at(2_000),
        extras: extras({ coreOffers: ['6.6.1', '6.6.2'], translations: [], timeZone: 'UTC' }),
      }),
    );

    expect(await itemsOf('site_a')).toEqual([
      { type: 'plugin', slug: 'cache', name: 'Plugin cache', version: '3.1', updateVersion: '3.2', active: true },
      { type: 'plugin', slug: 'forms', name: 'Plugin forms', version: '4.0', updateVersion: null, active: true },
      { type: 'plugin', slug: 'seo', name: 'Plugin seo', version: '1.0', updateVersion: '2.0', active: true },
      { type: 'theme', slug: 'neat', name: 'Theme neat', version: '1.1', updateVersion: null, active: true },
    ]);
    expect(await offersOf('site_a')).toEqual({
      'core:wordpress@6.6.1': 1_000,
      'core:wordpress@6.6.2': 2_000,
      'plugin:cache@3.2': 2_000,
      'plugin:seo@2.0': 1_000,
    });
    expect((await inventories.details('site_a')).environment?.timeZone).toBe('UTC');
    expect((await inventories.read('site_a'))?.syncedAt).toEqual(at(2_000));
  });

  it('writes only the item rows that changed (the fleet totals count each row written)', async () => {
    const inventories = await withSites('site_a');
    await inventories.write('site_a', sync());
    const before = await rowVersions(state());
    await inventories.write(
      'site_a',
      sync({ plugins: [plugin('seo', '1.0', '2.1'), plugin('cache', '3.1', null, 'inactive')], syncedAt: at(2_000) }),
    );
    const after = await rowVersions(state());
    const changed = Object.keys(after).filter((key) => after[key] !== before[key]);
    expect(changed).toEqual(['plugin\tseo']);
  });

  it('keeps the first of a slug listed twice', async () => {
    const inventories = await withSites('site_a');
    await inventories.write(
      'site_a',
      sync({ plugins: [plugin('seo', '1.0', '2.0'), { ...plugin('seo', '9.0', '9.1'), file: 'seo/other.php' }] }),
    );
    expect((await itemsOf('site_a')).filter((row) => row.type === 'plugin')).toEqual([
      { type: 'plugin', slug: 'seo', name: 'Plugin seo', version: '1.0', updateVersion: '2.0', active: true },
    ]);
  });

  it('keeps the environment as stored when asked, and then the core and translation offers too unless extras say', async () => {
    const inventories = await withSites('site_a');
    await inventories.write('site_a', sync());
    const environment = (await inventories.details('site_a')).environment;

    await inventories.write(
      'site_a',
      sync({ plugins: [plugin('seo', '2.0', null)], extras: undefined, keepEnvironment: true, seenAt: at(3_000) }),
    );
    expect((await inventories.details('site_a')).environment).toEqual(environment);
    expect(await offersOf('site_a')).toEqual({
      'core:wordpress@6.6.1': 1_000,
      'theme:neat@1.1': 1_000,
      'translation:plugin/seo/de_DE@2.0': 1_000,
    });

    await inventories.write(
      'site_a',
      sync({ extras: extras({ coreOffers: [], timeZone: 'UTC' }), keepEnvironment: true, seenAt: at(4_000) }),
    );
    expect((await inventories.details('site_a')).environment).toEqual(environment);
    expect(await offersOf('site_a')).toEqual({
      'plugin:seo@2.0': 4_000,
      'theme:neat@1.1': 1_000,
      'translation:plugin/seo/de_DE@2.0': 1_000,
    });
  });

  it('patches only the items named: their rows and offers, the other list as stored, nothing else touched', async () => {
    const inventories = await withSites('site_a');
    await inventories.write(
      'site_a',
      sync({ plugins: [plugin('seo', '1.0', '2.0'), plugin('cache', '3.1', '3.2'), plugin('forms', '4.0', '4.1')] }),
    );
    const themesJson = (await inventories.read('site_a'))!.themesJson;
    const plugins = [
      plugin('seo', '2.0', '2.1', 'inactive'),
      plugin('cache', '3.2', null),
      plugin('forms', '9.9', null),
    ];
    await inventories.write('site_a', {
      plugins,
      themes: null,
      syncedAt: at(1_000),
      keepEnvironment: true,
      // forms is listed but not named: its row stays; gone is named but not listed: its row goes.
      only: new Set(['plugin\tseo', 'plugin\tcache', 'plugin\tgone']),
      seenAt: at(5_000),
    });

    expect(await inventories.read('site_a')).toMatchObject({ pluginsJson: JSON.stringify(plugins), themesJson });
    expect((await itemsOf('site_a')).filter((row) => row.type === 'plugin')).toEqual([
      { type: 'plugin', slug: 'cache', name: 'Plugin cache', version: '3.2', updateVersion: null, active: true },
      { type: 'plugin', slug: 'forms', name: 'Plugin forms', version: '4.0', updateVersion: '4.1', active: true },
      { type: 'plugin', slug: 'seo', name: 'Plugin seo', version: '2.0', updateVersion: '2.1', active: false },
    ]);
    expect(await offersOf('site_a')).toEqual({
      'core:wordpress@6.6.1': 1_000,
      'plugin:forms@4.1': 1_000,
      'plugin:seo@2.1': 5_000,
      'theme:neat@1.1': 1_000,
      'translation:plugin/seo/de_DE@2.0': 1_000,
    });
  });

  it('removes a named item that is no longer listed, with its offers', async () => {
    const inventories = await withSites('site_a');
    await inventories.write('site_a', sync());
    await inventories.write('site_a', {
      plugins: [plugin('cache', '3.1', null, 'inactive')],
      themes: null,
      syncedAt: at(1_000),
      keepEnvironment: true,
      only: new Set(['plugin\tseo']),
    });
    expect((await itemsOf('site_a')).map((row) => row.slug)).toEqual(['cache', 'neat', 'plain']);
    expect(Object.keys(await offersOf('site_a')).sort()).toEqual([
      'core:wordpress@6.6.1',
      'theme:neat@1.1',
      'translation:plugin/seo/de_DE@2.0',
    ]);
  });

  it('refuses a list left as stored outside a patch, and writes nothing for a patch of neither list', async () => {
    const inventories = await withSites('site_a');
    await expect(inventories.write('site_a', sync({ themes: null }))).rejects.toThrow(/only by a patch/);
    await inventories.write('site_a', { ...sync({ plugins: null, themes: null }), only: new Set(['plugin\tseo']) });
    expect(await inventories.read('site_a')).toBeUndefined();
    expect(await itemsOf('site_a')).toEqual([]);
  });

  it('keeps two writers of one site apart: what is stored is one sync whole', async () => {
    const inventories = await withSites('site_a');
    const first = sync({ plugins: [plugin('seo', '1.0', '2.0')], syncedAt: at(1_000) });
    const second = sync({
      plugins: [plugin('cache', '3.1', '3.2'), plugin('forms', '4.0', null)],
      syncedAt: at(2_000),
    });
    await Promise.all([inventories.write('site_a', first), inventories.write('site_a', second)]);
    const stored = await inventories.read('site_a');
    const won = stored?.syncedAt.getTime() === at(1_000).getTime() ? first : second;
    expect(stored?.pluginsJson).toBe(JSON.stringify(won.plugins));
    expect((await itemsOf('site_a')).filter((row) => row.type === 'plugin').map((row) => row.slug)).toEqual(
      won.plugins!.map((p) => p.slug).sort(),
    );
  });

  it("removes a site's inventory with the site", async () => {
    const inventories = await withSites('site_a', 'site_b');
    await inventories.write('site_a', sync());
    await inventories.write('site_b', sync());
    await createSitesRepository(state()).delete('site_a');
    expect(await inventories.read('site_a')).toBeUndefined();
    expect(await inventories.details('site_a')).toEqual({ environment: undefined, offers: [] });
    expect(await itemsOf('site_a')).toEqual([]);
    expect(await itemsOf('site_b')).toHaveLength(4);
  });

  it('reads each site’s time zone and pending updates with their first sightings, for many sites at once', async () => {
    const inventories = await withSites('site_a', 'site_b', 'site_c');
    await inventories.write('site_a', sync());
    await inventories.write('site_b', sync({ extras: extras({ timeZone: null, translations: [] }), syncedAt: at(7) }));
    const reader = createUpdateStateReader(state());

    expect(await reader.timeZones()).toEqual(new Map([['site_a', 'Europe/Berlin']]));
    const states = await reader.updateStates(['site_c', 'site_a', 'site_none', 'site_b']);
    expect(states.map((row) => row.siteId)).toEqual(['site_c', 'site_a', 'site_b']);
    expect(states[0]).toEqual({
      siteId: 'site_c',
      timeZone: null,
      items: [],
      core: { version: '6.5.3', offers: [] },
      translationsFirstSeenAt: null,
    });
    expect({ ...states[1], items: [...states[1]!.items].sort((a, b) => a.slug.localeCompare(b.slug)) }).toEqual({
      siteId: 'site_a',
      timeZone: 'Europe/Berlin',
      items: [
        { siteId: 'site_a', type: 'theme', slug: 'neat', updateVersion: '1.1', firstSeenAt: at(1_000) },
        { siteId: 'site_a', type: 'plugin', slug: 'seo', updateVersion: '2.0', firstSeenAt: at(1_000) },
      ],
      core: { version: '6.5.3', offers: [{ version: '6.6.1', firstSeenAt: at(1_000) }] },
      translationsFirstSeenAt: at(1_000),
    });
    expect(states[2]).toMatchObject({ siteId: 'site_b', timeZone: null, translationsFirstSeenAt: null });
  });

  it('writes on the transaction a write batch gives it, and is rolled back with it', async () => {
    const inventories = await withSites('site_a');
    await state().transaction(async (tx) => inventories.writeWithin('site_a', sync(), tx));
    expect(await itemsOf('site_a')).toHaveLength(4);
    await expect(
      state().transaction(async (tx) => {
        await inventories.writeWithin('site_a', sync({ plugins: [], themes: [] }), tx);
        throw new Error('the caller failed');
      }),
    ).rejects.toThrow('the caller failed');
    expect(await itemsOf('site_a')).toHaveLength(4);
  });

  if (dialect === 'sqlite')
    it('writes at once within a SQLite transaction its caller holds, and is rolled back with it', async () => {
      const inventories = await withSites('site_a');
      const sqliteDb = state().sqlite!;
      sqliteDb.transaction(() => writtenAtOnce(inventories.writeWithin('site_a', sync())))();
      expect(await itemsOf('site_a')).toHaveLength(4);
      expect(() =>
        sqliteDb.transaction(() => {
          writtenAtOnce(inventories.writeWithin('site_a', sync({ plugins: [], themes: [] })));
          throw new Error('the caller failed');
        })(),
      ).toThrow('the caller failed');
      expect(await itemsOf('site_a')).toHaveLength(4);
    });
  else
    it('has no write to make at once without a transaction', async () => {
      const inventories = await withSites('site_a');
      expect(() => inventories.writeWithin('site_a', sync())).toThrow(/on its transaction/);
    });
});

/**
 * Each item row's version of itself (`type\tslug` → a token that changes when the row is written): PostgreSQL's
 * `xmin`; on SQLite a temporary trigger counting the updates of each row.
 */
async function rowVersions(state: StateDatabase): Promise<Record<string, string>> {
  if (state.dialect === 'sqlite') {
    const sqliteDb = state.sqlite!;
    sqliteDb.exec(`create temp table if not exists item_writes (key text primary key, n integer not null);
      create temp trigger if not exists item_written after update on inventory_items begin
        insert into item_writes values (new.type || char(9) || new.slug, 1)
          on conflict (key) do update set n = n + 1;
      end;`);
  }
  const rows = await state.run((db) =>
    rowsOf<{ key: string; version: string }>(
      state,
      db,
      state.dialect === 'postgres'
        ? sql`select type || chr(9) || slug as key, xmin::text as version from inventory_items`
        : sql`select i.type || char(9) || i.slug as key, coalesce(w.n, 0) || '' as version
            from inventory_items i left join item_writes w on w.key = i.type || char(9) || i.slug`,
    ),
  );
  return Object.fromEntries(rows.map((row) => [row.key, row.version]));
}
