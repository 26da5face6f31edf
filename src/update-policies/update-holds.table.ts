import { sql } from 'drizzle-orm';
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { sites } from '../sites/index.js';

export const holdItemTypes = ['plugin', 'theme', 'core'] as const;
/** The safe update's outcome: `rolled-back`, or `rollback-failed` (the site stayed broken). */
export const holdOutcomes = ['rolled-back', 'rollback-failed'] as const;
export const releasedByKinds = ['token', 'user'] as const;

/**
 * A version a safe update rolled back on a site: policies skip that very (site, type, slug,
 * version) until a user releases the hold. A newer version is not held. One active hold per
 * version; a released one stays as the record of who released it.
 */
export const updateHolds = sqliteTable(
  'update_holds',
  {
    id: text('id').primaryKey(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    itemType: text('item_type', { enum: holdItemTypes }).notNull(),
    slug: text('slug').notNull(),
    version: text('version').notNull(),
    /** The safe update's outcome: `rolled-back`, or `rollback-failed` (the site stayed broken). */
    outcome: text('outcome', { enum: holdOutcomes }).notNull(),
    /** The safe update's reason and message: why the site was judged broken. */
    reason: text('reason'),
    message: text('message'),
    safeUpdateId: text('safe_update_id'),
    heldAt: integer('held_at', { mode: 'timestamp_ms' }).notNull(),
    releasedAt: integer('released_at', { mode: 'timestamp_ms' }),
    releasedByKind: text('released_by_kind', { enum: releasedByKinds }),
    releasedById: text('released_by_id'),
  },
  (table) => [
    uniqueIndex('update_holds_active_idx')
      .on(table.siteId, table.itemType, table.slug, table.version)
      .where(sql`released_at is null`),
    index('update_holds_site_idx').on(table.siteId, table.id),
  ],
);
export type UpdateHoldRow = typeof updateHolds.$inferSelect;
