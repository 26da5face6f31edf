import { pgTable, text } from 'drizzle-orm/pg-core';
import { timestampMs as at } from '../../db/pg-columns.js';

/**
 * The `removed_sites` table of the PostgreSQL dialect (issue 34; docs/design/cluster-state.md): the same
 * columns and row types as removed-sites.table.ts, the SQLite table, whose comment says what a row is
 * (no reference to `sites`: the row outlives the site).
 */
export const removedSites = pgTable('removed_sites', {
  siteId: text('site_id').primaryKey(),
  removedAt: at('removed_at').notNull(),
  keepUntil: at('keep_until').notNull(),
});
