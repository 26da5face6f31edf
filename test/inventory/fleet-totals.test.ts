import fc from 'fast-check';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Plugin, Theme } from '../../src/inventory/index.js';
import { createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';

/**
 * The fleet's per-item totals and version counts are kept by triggers on the item rows (fleet
 * queries at 10,000 sites read them, not the rows): whatever syncs and patches write, they must
 * equal a count of the rows.
 */
let t: TestApp;
beforeAll(() => {
  t = createTestApp();
});
afterAll(() => t.close());

const slugs = ['seo', 'forms', 'cache'] as const;
const item = fc.record({
  version: fc.constantFrom('1.0', '1.1', '2.0'),
  update: fc.option(fc.constantFrom('1.1', '2.0', '3.0')),
  active: fc.boolean(),
  name: fc.constantFrom('A', 'B'),
});
/** A site's plugins (a slug present or not) and one theme. */
const listing = fc.record({
  plugins: fc.tuple(...slugs.map(() => fc.option(item))),
  theme: fc.option(item),
});
type Listing = typeof listing extends fc.Arbitrary<infer L> ? L : never;

const pluginsOf = (list: Listing): Plugin[] =>
  slugs.flatMap((slug, index) => {
    const it = list.plugins[index];
    if (!it) return [];
    const status: Plugin['status'] = it.active ? 'active' : 'inactive';
    return [
      {
        slug,
        file: `${slug}/${slug}.php`,
        name: it.name,
        version: it.version,
        status,
        update: it.update ? { version: it.update } : null,
      },
    ];
  });
const themesOf = (list: Listing): Theme[] =>
  list.theme
    ? [
        {
          slug: 'neat',
          name: list.theme.name,
          version: list.theme.version,
          status: list.theme.active ? 'active' : 'inactive',
          parent: null,
          update: list.theme.update ? { version: list.theme.update } : null,
        },
      ]
    : [];

describe('the fleet totals', () => {
  it('equal a count of the item rows after any syncs and patches', async () => {
    const sites = [0, 1, 2].map(() => insertConnectedSite(t));
    const write = fc.record({ site: fc.nat(2), list: listing, patch: fc.boolean() });
    await fc.assert(
      fc.asyncProperty(fc.array(write, { minLength: 1, maxLength: 12 }), async (writes) => {
        for (const { site, list, patch } of writes) {
          const siteId = sites[site]!;
          if (patch) {
            // A patch after updates: the plugins it names written as they are now (gone when absent), the themes as stored.
            const only = new Set(slugs.map((slug) => `plugin\t${slug}`));
            if (!(await t.services.inventories.read(siteId))) continue;
            await t.services.inventories.write(siteId, {
              plugins: pluginsOf(list),
              themes: null,
              syncedAt: t.clock.now(),
              only,
            });
          } else
            await t.services.inventories.write(siteId, {
              plugins: pluginsOf(list),
              themes: themesOf(list),
              syncedAt: t.clock.now(),
            });
        }
        const totals = t.database.db.all(
          sql`select type, slug, sites, active, with_update as withUpdate from fleet_item_totals order by type, slug`,
        );
        const counted = t.database.db.all(
          sql`select type, slug, count(*) as sites, sum(active) as active, count(update_version) as withUpdate
            from inventory_items group by type, slug order by type, slug`,
        );
        expect(totals).toEqual(counted);
        const versions = t.database.db.all(
          sql`select type, slug, version, sites from fleet_item_versions order by type, slug, version`,
        );
        const versionsCounted = t.database.db.all(
          sql`select type, slug, version, count(*) as sites from inventory_items group by type, slug, version
            order by type, slug, version`,
        );
        expect(versions).toEqual(versionsCounted);
      }),
      { numRuns: 200 },
    );
  });
});
