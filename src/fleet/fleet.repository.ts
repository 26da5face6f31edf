import { and, asc, countDistinct, eq, exists, gt, inArray, isNotNull, or, sql, type SQL } from 'drizzle-orm';
import type { SelectedFields, SQLiteColumn } from 'drizzle-orm/sqlite-core';
import type { Db } from '../db/database.js';
import { inventoryItems, updateOffers } from '../inventory/index.js';
import { fleetItemTotals } from './fleet.table.js';
import { sites, siteTags, visibleSites } from '../sites/index.js';
import type { SiteScope } from '../shared/actor.js';

export type ItemType = 'plugin' | 'theme';

export interface FleetFilter {
  /** Only sites carrying every one of these tags. */
  tags: string[];
  type?: ItemType;
  /** Only the sites a request may see (issue 33; absent: every site). */
  scope?: SiteScope;
}

/** The request's site scope as a condition on a site id column: none for every site (the unscoped queries stay as they were). */
const inScope = (scope: SiteScope | undefined, siteId: SQLiteColumn | SQL) =>
  scope ? visibleSites(scope, siteId) : undefined;

/** Item keys in cursors: `type`, `slug` and (for pending updates) the version offered, tab-separated. */
export const ITEM_KEY = /^(core|plugin|theme|translations)\t[^\t]{1,200}(\t[^\t]{1,100})?$/;

/**
 * The fleet's questions answered from the inventory rows the sync keeps (never from the sites):
 * every query walks an index of inventory_items and reads one page.
 */
export function createFleetRepository({ db }: { db: Db }) {
  /**
   * Sites carrying every tag, as a table the item queries join: SQLite then reads only those
   * sites' rows (by the primary key's site_id prefix) instead of walking every site's.
   */
  const scoped = (tags: string[]) => {
    const unique = [...new Set(tags)];
    return db
      .select({ siteId: siteTags.siteId })
      .from(siteTags)
      .where(inArray(siteTags.tag, unique.length > 0 ? unique : ['']))
      .groupBy(siteTags.siteId)
      .having(sql`count(distinct ${siteTags.tag}) = ${unique.length}`)
      .as('scope');
  };
  /**
   * The inventory rows to read, narrowed to the tagged sites when tags are given. With tags, the
   * tagged sites are the outer loop (CROSS JOIN fixes SQLite's join order), so a small tag reads
   * its own sites' rows instead of walking the whole fleet's index in group order.
   */
  const itemRows = <T extends SelectedFields>(columns: T, tags: string[]) => {
    const untagged = db.select(columns).from(inventoryItems).$dynamic();
    if (tags.length === 0) return { query: untagged, onScope: undefined };
    const scope = scoped(tags);
    const tagged = db.select(columns).from(scope).$dynamic().crossJoin(inventoryItems);
    // The selection is explicit, so the join changes no row's shape.
    return { query: tagged as unknown as typeof untagged, onScope: eq(inventoryItems.siteId, scope.siteId) };
  };

  const afterItem = (after: string | undefined, withVersion: boolean): SQL | undefined => {
    if (!after) return undefined;
    const [type, slug, version] = after.split('\t') as [ItemType, string, string | undefined];
    const beyond = or(gt(inventoryItems.type, type), and(eq(inventoryItems.type, type), gt(inventoryItems.slug, slug)));
    if (!withVersion || version === undefined) return beyond;
    return or(
      beyond,
      and(eq(inventoryItems.type, type), eq(inventoryItems.slug, slug), gt(inventoryItems.updateVersion, version)),
    );
  };

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

    /**
     * Every plugin (or theme) installed across the fleet: how many sites, active where, at which
     * versions. The whole fleet's from the per-item totals the triggers keep (a page reads its own
     * items); a tag's, or a request's limited to tags (`scope`: the totals count every site), counted
     * from its sites' rows.
     */
    installed({
      type,
      tags,
      limit,
      after,
      scope,
    }: {
      type: ItemType;
      tags: string[];
      limit: number;
      after?: string;
      scope?: SiteScope;
    }) {
      const visible = inScope(scope, inventoryItems.siteId);
      if (tags.length === 0 && visible === undefined) {
        // The cursor is the last item of the page before: its type and slug (an earlier type: from the start).
        const [afterType, afterSlug] = after ? (after.split('\t') as [ItemType, string]) : [];
        const beyond =
          afterType === undefined || afterType < type
            ? undefined
            : afterType === type
              ? gt(fleetItemTotals.slug, afterSlug!)
              : sql`0`;
        return db
          .select({
            type: fleetItemTotals.type,
            slug: fleetItemTotals.slug,
            name: fleetItemTotals.name,
            sites: fleetItemTotals.sites,
            active: fleetItemTotals.active,
            withUpdate: fleetItemTotals.withUpdate,
            // Spelt out: drizzle leaves a column unqualified inside sql, which would correlate nothing.
            versions: sql<string>`(select group_concat(v.version) from fleet_item_versions v
              where v.type = fleet_item_totals.type and v.slug = fleet_item_totals.slug)`,
          })
          .from(fleetItemTotals)
          .where(and(eq(fleetItemTotals.type, type), beyond))
          .orderBy(asc(fleetItemTotals.type), asc(fleetItemTotals.slug))
          .limit(limit)
          .all();
      }
      const { query, onScope } = itemRows(
        {
          type: inventoryItems.type,
          slug: inventoryItems.slug,
          name: sql<string>`max(${inventoryItems.name})`,
          sites: sql<number>`count(*)`,
          active: sql<number>`sum(${inventoryItems.active})`,
          withUpdate: sql<number>`count(${inventoryItems.updateVersion})`,
          versions: sql<string>`group_concat(distinct ${inventoryItems.version})`,
        },
        tags,
      );
      return query
        .where(and(onScope, visible, eq(inventoryItems.type, type), afterItem(after, false)))
        .groupBy(inventoryItems.type, inventoryItems.slug)
        .orderBy(asc(inventoryItems.type), asc(inventoryItems.slug))
        .limit(limit)
        .all();
    },

    /** The sites that have one plugin (or theme), by site id: version, active, the update offered. */
    sitesWith({
      type,
      slug,
      tags,
      limit,
      after,
      scope: visible,
    }: {
      type: ItemType;
      slug: string;
      tags: string[];
      limit: number;
      after?: string;
      scope?: SiteScope;
    }) {
      // One item's rows come from its index entries; the tag narrows them (a subquery SQLite runs once).
      const scope = tags.length > 0 ? scoped(tags) : undefined;
      return db
        .select({
          siteId: inventoryItems.siteId,
          url: sites.url,
          version: inventoryItems.version,
          active: inventoryItems.active,
          updateVersion: inventoryItems.updateVersion,
        })
        .from(inventoryItems)
        .innerJoin(sites, eq(sites.id, inventoryItems.siteId))
        .where(
          and(
            scope ? inArray(inventoryItems.siteId, db.select({ siteId: scope.siteId }).from(scope)) : undefined,
            eq(inventoryItems.type, type),
            eq(inventoryItems.slug, slug),
            inScope(visible, inventoryItems.siteId),
            after ? gt(inventoryItems.siteId, after) : undefined,
          ),
        )
        .orderBy(asc(inventoryItems.siteId))
        .limit(limit)
        .all();
    },
  };
}

export type FleetRepository = ReturnType<typeof createFleetRepository>;
