import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/**
 * Sites removed from this daemon, remembered (no reference to `sites`: the row outlives the site)
 * so that prune can tell their snapshots on a target from another daemon's: kept until `keepUntil`,
 * when the site's retention would have let its last backup go, then pruned (docs/offsite.md).
 */
export const removedSites = sqliteTable('removed_sites', {
  siteId: text('site_id').primaryKey(),
  removedAt: integer('removed_at', { mode: 'timestamp_ms' }).notNull(),
  keepUntil: integer('keep_until', { mode: 'timestamp_ms' }).notNull(),
});
