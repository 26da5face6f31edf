import { sql } from 'drizzle-orm';
import { index, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { timestampMs as at } from '../db/pg-columns.js';
import { pgSites as sites } from '../sites/index.js';
import { holdItemTypes, holdOutcomes, releasedByKinds } from './update-holds.table.js';

/**
 * The `update_holds` table of the PostgreSQL dialect (issue 34; docs/design/cluster-state.md): the same
 * columns, row types, indexes and foreign key as update-holds.table.ts, the SQLite table, whose comments
 * say what a hold is. The partial unique index keeps one active hold per version on both dialects, and is
 * what a hold's upsert names. Migrations in drizzle-pg/, generated from this file (drizzle.pg.config.ts).
 */
export const updateHolds = pgTable(
  'update_holds',
  {
    id: text('id').primaryKey(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    itemType: text('item_type', { enum: holdItemTypes }).notNull(),
    slug: text('slug').notNull(),
    version: text('version').notNull(),
    outcome: text('outcome', { enum: holdOutcomes }).notNull(),
    reason: text('reason'),
    message: text('message'),
    safeUpdateId: text('safe_update_id'),
    heldAt: at('held_at').notNull(),
    releasedAt: at('released_at'),
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
