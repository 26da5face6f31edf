import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { sites } from '../sites/index.js';

/** The plugins and themes last read from the site, kept apart so listing sites stays cheap. */
export const siteInventories = sqliteTable('site_inventories', {
  siteId: text('site_id')
    .primaryKey()
    .references(() => sites.id, { onDelete: 'cascade' }),
  pluginsJson: text('plugins_json').notNull(),
  themesJson: text('themes_json').notNull(),
  syncedAt: integer('synced_at', { mode: 'timestamp_ms' }).notNull(),
});
