import { index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { sql } from 'drizzle-orm';
import { sites } from '../sites/index.js';

export const itemTypes = ['plugin', 'theme'] as const;
export const offerTypes = ['plugin', 'theme', 'core', 'translation'] as const;
export const databaseTypes = ['mysql', 'mariadb'] as const;

/** The plugins and themes last read from the site, kept apart so listing sites stays cheap. */
export const siteInventories = sqliteTable('site_inventories', {
  siteId: text('site_id')
    .primaryKey()
    .references(() => sites.id, { onDelete: 'cascade' }),
  pluginsJson: text('plugins_json').notNull(),
  themesJson: text('themes_json').notNull(),
  syncedAt: integer('synced_at', { mode: 'timestamp_ms' }).notNull(),
});

/**
 * The same plugins and themes one row per site and item, for questions asked across the fleet
 * ("which sites have an update of X", "who runs X at which version") without reading every blob.
 */
export const inventoryItems = sqliteTable(
  'inventory_items',
  {
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    type: text('type', { enum: itemTypes }).notNull(),
    slug: text('slug').notNull(),
    name: text('name').notNull(),
    version: text('version').notNull(),
    /** The newer version the site knows of; null when it is up to date (or nothing is known). */
    updateVersion: text('update_version'),
    active: integer('active', { mode: 'boolean' }).notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.siteId, table.type, table.slug] }),
    // Covering indexes in the fleet queries' group order: a page of items reads its groups' index entries only.
    index('inventory_items_item_idx').on(
      table.type,
      table.slug,
      table.version,
      table.active,
      table.updateVersion,
      table.name,
    ),
    index('inventory_items_pending_idx')
      .on(table.type, table.slug, table.updateVersion, table.version, table.name)
      .where(sql`${table.updateVersion} is not null`),
    // The dashboard's fleet overview counts each site's pending updates from this (one seek per site).
    index('inventory_items_site_pending_idx')
      .on(table.siteId)
      .where(sql`${table.updateVersion} is not null`),
  ],
);
export type InventoryItemRow = typeof inventoryItems.$inferSelect;

/**
 * Every update a site is offered, with when Sitewarden first saw that very version offered: the
 * release delay of update policies counts from it. A new version offered is a new row (its clock
 * starts again); versions no longer offered are dropped at the next sync.
 * `type` `core` has slug `wordpress`; `translation` has slug `<type>/<slug>/<language>`.
 */
export const updateOffers = sqliteTable(
  'update_offers',
  {
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    type: text('type', { enum: offerTypes }).notNull(),
    slug: text('slug').notNull(),
    version: text('version').notNull(),
    firstSeenAt: integer('first_seen_at', { mode: 'timestamp_ms' }).notNull(),
  },
  (table) => [primaryKey({ columns: [table.siteId, table.type, table.slug, table.version] })],
);

/** What a site runs on besides its plugins and themes, as the connector (1.4.0+) reports it; null when it does not say. */
export const siteEnvironments = sqliteTable('site_environments', {
  siteId: text('site_id')
    .primaryKey()
    .references(() => sites.id, { onDelete: 'cascade' }),
  databaseType: text('database_type', { enum: databaseTypes }),
  /** The database server's version (`8.0.36`, `10.11.6`). */
  databaseVersion: text('database_version'),
  /** WordPress's time zone: an IANA name, or `UTC±HH:MM` from `gmt_offset`. */
  timeZone: text('time_zone'),
  syncedAt: integer('synced_at', { mode: 'timestamp_ms' }).notNull(),
});
