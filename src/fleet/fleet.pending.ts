import { and, asc, count, countDistinct, eq, exists, gt, inArray, isNotNull, or, sql, type Column } from 'drizzle-orm';
import { commaJoined, firstRow } from '../db/dialect.js';
import type { StateDatabase, StateDb } from '../db/state-db.js';
import type { SiteScope } from '../shared/actor.js';
import { inScope, type FleetFilter, type FleetRows, type FleetTables } from './fleet.rows.js';

/**
 * The fleet's pending updates, from the inventory rows and update offers the sync keeps: by item
 * (one row per item and version offered), by site (a page of sites and their updates), and
 * WordPress core and language packs across the fleet.
 */
export function createPendingQueries({
  state,
  tables: { inventoryItems, updateOffers, sites },
  rows: { afterItem, scoped, itemRows },
}: {
  state: StateDatabase;
  tables: FleetTables;
  rows: FleetRows;
}) {
  const { dialect } = state;
  const run = state.run.bind(state);
  return {
    /** Pending updates, one row per item and version offered, with the versions sites run and how many. */
    pendingByItem({ filter, limit, after }: { filter: FleetFilter; limit: number; after?: string }) {
      const conditions = [
        isNotNull(inventoryItems.updateVersion),
        filter.type ? eq(inventoryItems.type, filter.type) : undefined,
        afterItem(after, true),
        inScope(filter.scope, inventoryItems.siteId),
      ];
      return run((db) => {
        const { query, onScope } = itemRows(
          db,
          {
            type: inventoryItems.type,
            slug: inventoryItems.slug,
            name: sql<string>`max(${inventoryItems.name})`,
            toVersion: sql<string>`${inventoryItems.updateVersion}`,
            fromVersions: sql<string>`${commaJoined(dialect, inventoryItems.version, { distinct: true })}`,
            sites: count(),
          },
          filter.tags,
        );
        return query
          .where(and(onScope, ...conditions))
          .groupBy(inventoryItems.type, inventoryItems.slug, inventoryItems.updateVersion)
          .orderBy(asc(inventoryItems.type), asc(inventoryItems.slug), asc(inventoryItems.updateVersion))
          .limit(limit);
      });
    },

    /**
     * A page of sites with pending updates (by site id), and those sites' updates: plugins and themes
     * (`filter.type` narrows them; `items: false` leaves them out), WordPress core and language packs (`offers`).
     */
    async pendingBySite({
      filter,
      limit,
      after,
      offers = filter.type ? [] : ['core', 'translation'],
      items: itemsToo = true,
    }: {
      filter: FleetFilter;
      limit: number;
      after?: string;
      /** Which of the core and translation offers count (default: both, unless `filter.type` narrows to items). */
      offers?: ('core' | 'translation')[];
      /** Whether plugin and theme updates count (default true). */
      items?: boolean;
    }) {
      const conditions = [
        isNotNull(inventoryItems.updateVersion),
        filter.type ? eq(inventoryItems.type, filter.type) : undefined,
      ];
      // Sites in id order, each kept when it has one pending update (EXISTS stops at the first):
      // a page costs its own sites, however large the fleet or the tag.
      const pending = (db: StateDb, siteId: Column) =>
        or(
          itemsToo
            ? exists(
                db
                  .select({ one: sql`1` })
                  .from(inventoryItems)
                  .where(and(eq(inventoryItems.siteId, siteId), ...conditions)),
              )
            : undefined,
          offers.length > 0
            ? exists(
                db
                  .select({ one: sql`1` })
                  .from(updateOffers)
                  .where(and(eq(updateOffers.siteId, siteId), inArray(updateOffers.type, offers))),
              )
            : undefined,
        );
      const page = (
        await run((db) => {
          const scope = filter.tags.length > 0 ? scoped(db, filter.tags) : undefined;
          return (
            scope
              ? db
                  .select({ siteId: scope.siteId })
                  .from(scope)
                  .where(
                    and(
                      pending(db, scope.siteId),
                      after ? gt(scope.siteId, after) : undefined,
                      inScope(filter.scope, scope.siteId),
                    ),
                  )
                  .orderBy(asc(scope.siteId))
              : db
                  .select({ siteId: sites.id })
                  .from(sites)
                  .where(
                    and(
                      pending(db, sites.id),
                      after ? gt(sites.id, after) : undefined,
                      inScope(filter.scope, sites.id),
                    ),
                  )
                  .orderBy(asc(sites.id))
          ).limit(limit);
        })
      ).map((row) => row.siteId);
      if (page.length === 0) return [];
      const updates = run((db) =>
        db
          .select({
            siteId: inventoryItems.siteId,
            url: sites.url,
            type: inventoryItems.type,
            slug: inventoryItems.slug,
            name: inventoryItems.name,
            version: inventoryItems.version,
            toVersion: sql<string>`${inventoryItems.updateVersion}`,
          })
          .from(inventoryItems)
          .innerJoin(sites, eq(sites.id, inventoryItems.siteId))
          .where(and(...conditions, inArray(inventoryItems.siteId, page), itemsToo ? undefined : sql`false`))
          .orderBy(asc(inventoryItems.siteId), asc(inventoryItems.type), asc(inventoryItems.slug)),
      );
      const siteRows = run((db) =>
        db
          .select({ id: sites.id, url: sites.url, wordpressVersion: sites.wordpressVersion })
          .from(sites)
          .where(inArray(sites.id, page)),
      );
      const offerRows =
        offers.length === 0
          ? []
          : run((db) =>
              db
                .select({ siteId: updateOffers.siteId, type: updateOffers.type, version: updateOffers.version })
                .from(updateOffers)
                .where(and(inArray(updateOffers.siteId, page), inArray(updateOffers.type, offers)))
                .orderBy(asc(updateOffers.siteId), asc(updateOffers.version)),
            );
      // Three reads of one page, none deciding another: at once on PostgreSQL's pool.
      const [updated, siteRead, offered] = await Promise.all([updates, siteRows, offerRows]);
      const siteOf = new Map(siteRead.map((row) => [row.id, row]));
      return page.map((siteId) => {
        const site = siteOf.get(siteId);
        const mine = updated.filter((update) => update.siteId === siteId);
        const its = offered.filter((offer) => offer.siteId === siteId);
        const packs = its.filter((offer) => offer.type === 'translation').length;
        return {
          siteId,
          url: site?.url ?? mine[0]?.url ?? '',
          updates: [
            ...its
              .filter((offer) => offer.type === 'core')
              .map((offer) => ({
                type: 'core' as const,
                slug: 'wordpress',
                name: 'WordPress',
                version: site?.wordpressVersion ?? '',
                toVersion: offer.version,
              })),
            ...mine.map(({ type, slug, name, version, toVersion }) => ({ type, slug, name, version, toVersion })),
            ...(packs > 0 ? [{ type: 'translations' as const, name: 'Translations', packs }] : []),
          ],
        };
      });
    },

    /**
     * WordPress core updates across the fleet (from each site's last sync), one row per version
     * offered: the versions the sites run, how many sites; after `afterVersion` in version order.
     */
    pendingCore({ tags, afterVersion, scope: visible }: { tags: string[]; afterVersion?: string; scope?: SiteScope }) {
      return run((db) => {
        const scope = tags.length > 0 ? scoped(db, tags) : undefined;
        return db
          .select({
            toVersion: updateOffers.version,
            fromVersions: commaJoined(dialect, sites.wordpressVersion, { distinct: true }),
            sites: countDistinct(updateOffers.siteId),
          })
          .from(updateOffers)
          .innerJoin(sites, eq(sites.id, updateOffers.siteId))
          .where(
            and(
              eq(updateOffers.type, 'core'),
              inScope(visible, updateOffers.siteId),
              scope ? inArray(updateOffers.siteId, db.select({ siteId: scope.siteId }).from(scope)) : undefined,
              afterVersion === undefined ? undefined : gt(updateOffers.version, afterVersion),
            ),
          )
          .groupBy(updateOffers.version)
          .orderBy(asc(updateOffers.version));
      });
    },

    /** Language packs pending across the fleet: how many sites are offered one, how many packs in all. */
    async pendingTranslations({ tags, scope: visible }: { tags: string[]; scope?: SiteScope }): Promise<{
      sites: number;
      packs: number;
    }> {
      const row = await run((db) => {
        const scope = tags.length > 0 ? scoped(db, tags) : undefined;
        return db
          .select({ sites: countDistinct(updateOffers.siteId), packs: count() })
          .from(updateOffers)
          .where(
            and(
              eq(updateOffers.type, 'translation'),
              inScope(visible, updateOffers.siteId),
              scope ? inArray(updateOffers.siteId, db.select({ siteId: scope.siteId }).from(scope)) : undefined,
            ),
          )
          .then(firstRow);
      });
      return { sites: row?.sites ?? 0, packs: row?.packs ?? 0 };
    },
  };
}
