import { sql } from 'drizzle-orm';
import { index, pgTable, text } from 'drizzle-orm/pg-core';
import { timestampMs as at } from '../db/pg-columns.js';
import { pgSites as sites } from '../sites/index.js';
import { triggerKinds, updateItemTypes, updateResults } from './update-history.table.js';

/**
 * The `update_history` table of the PostgreSQL dialect (issue 34; docs/design/cluster-state.md): the same
 * columns, row types, indexes and foreign key as update-history.table.ts, the SQLite table, whose comments
 * say what each column holds. `restore_point` stays text (JSON written and read whole, never looked inside
 * by a query). Migrations in drizzle-pg/, generated from this file (drizzle.pg.config.ts).
 */
export const updateHistory = pgTable(
  'update_history',
  {
    id: text('id').primaryKey(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    type: text('type', { enum: updateItemTypes }).notNull(),
    slug: text('slug'),
    fromVersion: text('from_version'),
    toVersion: text('to_version'),
    startedAt: at('started_at').notNull(),
    finishedAt: at('finished_at'),
    triggerKind: text('trigger_kind', { enum: triggerKinds }).notNull(),
    triggerId: text('trigger_id'),
    jobId: text('job_id'),
    safeUpdateId: text('safe_update_id'),
    restorePoint: text('restore_point'),
    rollbackOf: text('rollback_of'),
    result: text('result', { enum: updateResults }).notNull(),
    reason: text('reason'),
    error: text('error'),
  },
  (table) => [
    index('update_history_site_idx').on(table.siteId, table.id),
    index('update_history_job_idx').on(table.jobId),
    index('update_history_safe_update_idx')
      .on(table.safeUpdateId)
      .where(sql`${table.safeUpdateId} is not null`),
    index('update_history_rollback_of_idx')
      .on(table.rollbackOf)
      .where(sql`${table.rollbackOf} is not null`),
  ],
);
