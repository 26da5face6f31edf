import { and, asc, countDistinct, eq, exists, gt, inArray, isNotNull, or, sql } from 'drizzle-orm';
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';
import type { Db } from '../db/database.js';
import { inventoryItems, updateOffers } from '../inventory/index.js';
import { sites } from '../sites/index.js';
import type { SiteScope } from '../shared/actor.js';
import { afterItem, inScope, type FleetFilter, type FleetRows } from './fleet.rows.js';

/**
 * The fleet's pending updates, from the inventory rows and update offers the sync keeps: by item
 * (one row per item and version offered), by site (a page of sites and their updates), and
 * WordPress core and language packs across the fleet.
 */
export function createPendingQueries({ db, rows: { scoped, itemRows } }: { db: Db; rows: FleetRows }) {
  return {
    /** Pending updates, one row per item and version offered, with the versions sites run and how many. */
    pendingByItem({ filter, limit, after }: { filter: FleetFilter; limit: number; after?: string }) {
      const conditions = [
        isNotNull(inventoryItems.updateVersion),
        filter.type ? eq(inventoryItems.type, filter.type) : undefined,
        afterItem(after, true),
        inScope(filter.scope, inventoryItems.siteId),
      ];
      const { query, onScope } = itemRows(
        {
          type: inventoryItems.type,
          slug: inventoryItems.slug,
          name: sql<string>`max(${inventoryItems.name})`,
          toVersion: sql<string>`${inventoryItems.updateVersion}`,
          fromVersions: sql<string>`group_concat(distinct ${inventoryItems.version})`,
          sites: sql<number>`count(*)`,
        },
        filter.tags,
      );
      return query
        .where(and(onScope, ...conditions))
        .groupBy(inventoryItems.type, inventoryItems.slug, inventoryItems.updateVersion)
        .orderBy(asc(inventoryItems.type), asc(inventoryItems.slug), asc(inventoryItems.updateVersion))
        .limit(limit)
        .all();
    },

    /**
     * A page of sites with pending updates (by site id), and those sites' updates: plugins and themes
     * (`filter.type` narrows them; `items: false` leaves them out), WordPress core and language packs (`offers`).
     */
    pendingBySite({
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
      const pending = (siteId: SQLiteColumn) =>
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
      const scope = filter.tags.length > 0 ? scoped(filter.tags) : undefined;
      const page = (
        scope
          ? db
              .select({ siteId: scope.siteId })
              .from(scope)
              .where(
                and(
                  pending(scope.siteId),
                  after ? gt(scope.siteId, after) : undefined,
                  inScope(filter.scope, scope.siteId),
                ),
              )
              .orderBy(asc(scope.siteId))
          : db
              .select({ siteId: sites.id })
              .from(sites)
              .where(and(pending(sites.id), after ? gt(sites.id, after) : undefined, inScope(filter.scope, sites.id)))
              .orderBy(asc(sites.id))
      )
        .limit(limit)
        .all()
        .map((row) => row.siteId);
      if (page.length === 0) return [];
      const updates = db
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
        .where(and(...conditions, inArray(inventoryItems.siteId, page), itemsToo ? undefined : sql`0`))
        .orderBy(asc(inventoryItems.siteId), asc(inventoryItems.type), asc(inventoryItems.slug))
        .all();
      const siteRows = db
        .select({ id: sites.id, url: sites.url, wordpressVersion: sites.wordpressVersion })
        .from(sites)
        .where(inArray(sites.id, page))
        .all();
      const siteOf = new Map(siteRows.map((row) => [row.id, row]));
      const offerRows =
        offers.length === 0
          ? []
          : db
              .select({ siteId: updateOffers.siteId, type: updateOffers.type, version: updateOffers.version })
              .from(updateOffers)
              .where(and(inArray(updateOffers.siteId, page), inArray(updateOffers.type, offers)))
              .orderBy(asc(updateOffers.siteId), asc(updateOffers.version))
              .all();
      return page.map((siteId) => {
        const site = siteOf.get(siteId);
        const mine = updates.filter((update) => update.siteId === siteId);
        const offered = offerRows.filter((offer) => offer.siteId === siteId);
        const packs = offered.filter((offer) => offer.type === 'translation').length;
        return {
          siteId,
          url: site?.url ?? mine[0]?.url ?? '',
          updates: [
            ...offered
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
      const scope = tags.length > 0 ? scoped(tags) : undefined;
      return db
        .select({
          toVersion: updateOffers.version,
          fromVersions: sql<string | null>`group_concat(distinct ${sites.wordpressVersion})`,
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
        .orderBy(asc(updateOffers.version))
        .all();
    },

    /** Language packs pending across the fleet: how many sites are offered one, how many packs in all. */
    pendingTranslations({ tags, scope: visible }: { tags: string[]; scope?: SiteScope }): {
      sites: number;
      packs: number;
    } {
      const scope = tags.length > 0 ? scoped(tags) : undefined;
      const row = db
        .select({ sites: countDistinct(updateOffers.siteId), packs: sql<number>`count(*)` })
        .from(updateOffers)
        .where(
          and(
            eq(updateOffers.type, 'translation'),
            inScope(visible, updateOffers.siteId),
            scope ? inArray(updateOffers.siteId, db.select({ siteId: scope.siteId }).from(scope)) : undefined,
          ),
        )
        .get();
      return { sites: row?.sites ?? 0, packs: row?.packs ?? 0 };
    },
  };
}
