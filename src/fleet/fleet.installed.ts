import { and, asc, count, eq, gt, inArray, sql } from 'drizzle-orm';
import { commaJoined } from '../db/dialect.js';
import type { StateDatabase } from '../db/state-db.js';
import type { SiteScope } from '../shared/actor.js';
import { inScope, type FleetRows, type FleetTables, type ItemType } from './fleet.rows.js';

/**
 * What is installed across the fleet: every plugin (or theme) with how many sites run it, active
 * where, at which versions; and the sites that have one of them.
 */
export function createInstalledQueries({
  state,
  tables: { inventoryItems, sites, fleetItemTotals },
  rows: { afterItem, scoped, itemRows },
}: {
  state: StateDatabase;
  tables: FleetTables;
  rows: FleetRows;
}) {
  const { dialect } = state;
  const run = state.run.bind(state);
  return {
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
              : sql`false`;
        return run((db) =>
          db
            .select({
              type: fleetItemTotals.type,
              slug: fleetItemTotals.slug,
              name: fleetItemTotals.name,
              sites: fleetItemTotals.sites,
              active: fleetItemTotals.active,
              withUpdate: fleetItemTotals.withUpdate,
              // Spelt out: drizzle leaves a column unqualified inside sql, which would correlate nothing.
              versions: sql<string>`(select ${commaJoined(dialect, sql`v.version`)} from fleet_item_versions v
              where v.type = fleet_item_totals.type and v.slug = fleet_item_totals.slug)`,
            })
            .from(fleetItemTotals)
            .where(and(eq(fleetItemTotals.type, type), beyond))
            .orderBy(asc(fleetItemTotals.type), asc(fleetItemTotals.slug))
            .limit(limit),
        );
      }
      return run((db) => {
        const { query, onScope } = itemRows(
          db,
          {
            type: inventoryItems.type,
            slug: inventoryItems.slug,
            name: sql<string>`max(${inventoryItems.name})`,
            sites: count(),
            active: count(sql`case when ${inventoryItems.active} then 1 end`),
            withUpdate: count(inventoryItems.updateVersion),
            versions: sql<string>`${commaJoined(dialect, inventoryItems.version, { distinct: true })}`,
          },
          tags,
        );
        return query
          .where(and(onScope, visible, eq(inventoryItems.type, type), afterItem(after, false)))
          .groupBy(inventoryItems.type, inventoryItems.slug)
          .orderBy(asc(inventoryItems.type), asc(inventoryItems.slug))
          .limit(limit);
      });
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
      return run((db) => {
        const scope = tags.length > 0 ? scoped(db, tags) : undefined;
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
          .limit(limit);
      });
    },
  };
}
