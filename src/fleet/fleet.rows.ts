import { and, eq, gt, inArray, or, sql, type Column, type SQL } from 'drizzle-orm';
import type { SelectedFields } from 'drizzle-orm/pg-core';
import { tableFor } from '../db/dialect.js';
import type { StateDatabase, StateDb } from '../db/state-db.js';
import { inventoryItems, pgInventoryItems, pgUpdateOffers, updateOffers } from '../inventory/index.js';
import { pgSites, pgSiteTags, sites, siteTags, visibleSites } from '../sites/index.js';
import type { SiteScope } from '../shared/actor.js';
import { fleetItemTotals } from './fleet.table.js';
import { fleetItemTotals as pgFleetItemTotals } from './fleet.pg-table.js';

/**
 * Which inventory rows a fleet query reads, shared by its queries (fleet.pending.ts,
 * fleet.installed.ts): the tables of the dialect in use; the sites carrying every tag asked for, as a
 * table to join or a subquery; the request's site scope as a condition; and the item cursor (`type`,
 * `slug`, for pending updates the version offered) a page continues after.
 */

export type ItemType = 'plugin' | 'theme';

export interface FleetFilter {
  /** Only sites carrying every one of these tags. */
  tags: string[];
  type?: ItemType;
  /** Only the sites a request may see (issue 33; absent: every site). */
  scope?: SiteScope;
}

/** The request's site scope as a condition on a site id column: none for every site (the unscoped queries stay as they were). */
export const inScope = (scope: SiteScope | undefined, siteId: Column | SQL) =>
  scope ? visibleSites(scope, siteId) : undefined;

/** Item keys in cursors: `type`, `slug` and (for pending updates) the version offered, tab-separated. */
export const ITEM_KEY = /^(core|plugin|theme|translations)\t[^\t]{1,200}(\t[^\t]{1,100})?$/;

/** The tables the fleet's queries read, of the dialect in use. */
export function fleetTablesOf(state: Pick<StateDatabase, 'dialect'>) {
  const { dialect } = state;
  return {
    inventoryItems: tableFor(dialect, { sqlite: inventoryItems, postgres: pgInventoryItems }),
    updateOffers: tableFor(dialect, { sqlite: updateOffers, postgres: pgUpdateOffers }),
    sites: tableFor(dialect, { sqlite: sites, postgres: pgSites }),
    siteTags: tableFor(dialect, { sqlite: siteTags, postgres: pgSiteTags }),
    fleetItemTotals: tableFor(dialect, { sqlite: fleetItemTotals, postgres: pgFleetItemTotals }),
  };
}

export type FleetTables = ReturnType<typeof fleetTablesOf>;

export function createFleetRows({ inventoryItems, siteTags }: FleetTables) {
  /** The rows after a cursor's item (with `withVersion`, also the same item's later versions offered). */
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

  /**
   * Sites carrying every tag, as a table the item queries join: SQLite then reads only those
   * sites' rows (by the primary key's site_id prefix) instead of walking every site's.
   */
  const scoped = (db: StateDb, tags: string[]) => {
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
  const itemRows = <T extends SelectedFields>(db: StateDb, columns: T, tags: string[]) => {
    const untagged = db.select(columns).from(inventoryItems).$dynamic();
    if (tags.length === 0) return { query: untagged, onScope: undefined };
    const scope = scoped(db, tags);
    const tagged = db.select(columns).from(scope).$dynamic().crossJoin(inventoryItems);
    // The selection is explicit, so the join changes no row's shape.
    return { query: tagged as unknown as typeof untagged, onScope: eq(inventoryItems.siteId, scope.siteId) };
  };

  return { afterItem, scoped, itemRows };
}

export type FleetRows = ReturnType<typeof createFleetRows>;
