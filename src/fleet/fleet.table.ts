import { integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/** The kinds of item counted (the inventory's). */
export const fleetItemTypes = ['plugin', 'theme'] as const;

/**
 * The fleet-wide plugin and theme inventory, counted per item: kept by SQLite triggers on
 * inventory_items (drizzle/0017_fleet_item_totals.sql) in the same statement as each row written,
 * so `GET /api/fleet/plugins` reads a page of items instead of every site's rows of them.
 */
export const fleetItemTotals = sqliteTable(
  'fleet_item_totals',
  {
    type: text('type', { enum: fleetItemTypes }).notNull(),
    slug: text('slug').notNull(),
    /** The name the most recently written site gave it. */
    name: text('name').notNull(),
    sites: integer('sites').notNull(),
    active: integer('active').notNull(),
    withUpdate: integer('with_update').notNull(),
  },
  (table) => [primaryKey({ columns: [table.type, table.slug] })],
);

/** How many sites run each version of each item (the same triggers). */
export const fleetItemVersions = sqliteTable(
  'fleet_item_versions',
  {
    type: text('type', { enum: fleetItemTypes }).notNull(),
    slug: text('slug').notNull(),
    version: text('version').notNull(),
    sites: integer('sites').notNull(),
  },
  (table) => [primaryKey({ columns: [table.type, table.slug, table.version] })],
);
