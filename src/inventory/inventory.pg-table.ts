import { boolean, index, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import { timestampMs as at } from '../db/pg-columns.js';
import { pgSites as sites } from '../sites/index.js';
import { databaseTypes, itemTypes, offerTypes } from './inventory.table.js';

/**
 * The inventory's tables of the PostgreSQL dialect (issue 34; docs/design/cluster-state.md): the same
 * columns, row types, keys and indexes as inventory.table.ts, the SQLite tables, whose comments say what
 * each holds. Migrations in drizzle-pg/, generated from this file (drizzle.pg.config.ts).
 *
 * The plugin and theme lists stay `text`, as on SQLite, not `jsonb`: they are the site's views' blob,
 * written and read whole and never looked inside by a query, so the text a sync wrote is read back as it
 * is, with no parse and stringify of up to 2,000 plugins on every read of a site.
 */
export const siteInventories = pgTable('site_inventories', {
  siteId: text('site_id')
    .primaryKey()
    .references(() => sites.id, { onDelete: 'cascade' }),
  pluginsJson: text('plugins_json').notNull(),
  themesJson: text('themes_json').notNull(),
  syncedAt: at('synced_at').notNull(),
});

export const inventoryItems = pgTable(
  'inventory_items',
  {
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    type: text('type', { enum: itemTypes }).notNull(),
    slug: text('slug').notNull(),
    name: text('name').notNull(),
    version: text('version').notNull(),
    updateVersion: text('update_version'),
    active: boolean('active').notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.siteId, table.type, table.slug] }),
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
    index('inventory_items_site_pending_idx')
      .on(table.siteId)
      .where(sql`${table.updateVersion} is not null`),
  ],
);

export const updateOffers = pgTable(
  'update_offers',
  {
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    type: text('type', { enum: offerTypes }).notNull(),
    slug: text('slug').notNull(),
    version: text('version').notNull(),
    firstSeenAt: at('first_seen_at').notNull(),
  },
  (table) => [primaryKey({ columns: [table.siteId, table.type, table.slug, table.version] })],
);

export const siteEnvironments = pgTable('site_environments', {
  siteId: text('site_id')
    .primaryKey()
    .references(() => sites.id, { onDelete: 'cascade' }),
  databaseType: text('database_type', { enum: databaseTypes }),
  databaseVersion: text('database_version'),
  timeZone: text('time_zone'),
  syncedAt: at('synced_at').notNull(),
});
