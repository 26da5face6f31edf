import { sql } from 'drizzle-orm';
import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { sites } from '../sites/index.js';

export const updateItemTypes = ['plugin', 'theme', 'core', 'translations'] as const;
export type UpdateItemType = (typeof updateItemTypes)[number];
export const updateResults = ['running', 'succeeded', 'failed', 'skipped'] as const;
export type UpdateResult = (typeof updateResults)[number];
/** `request`: an API token (`triggerId` its id); `user`: a signed-in dashboard user; `policy`: an update policy's window. */
export const triggerKinds = ['request', 'policy', 'user'] as const;
export type TriggerKind = (typeof triggerKinds)[number];

/**
 * One row per attempt to update one item on one site, whoever asked (a single-site request, a
 * bulk job, a policy): what was updated, from → to, when, and how it ended. Written when the
 * attempt starts (`running`) and again when it ends, so a crash leaves a trace.
 */
export const updateHistory = sqliteTable(
  'update_history',
  {
    id: text('id').primaryKey(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    type: text('type', { enum: updateItemTypes }).notNull(),
    /** The plugin or theme slug; null for core and translations. */
    slug: text('slug'),
    fromVersion: text('from_version'),
    /** The version expected (or asked for) when it started; the version the site reports when it succeeded. */
    toVersion: text('to_version'),
    startedAt: integer('started_at', { mode: 'timestamp_ms' }).notNull(),
    finishedAt: integer('finished_at', { mode: 'timestamp_ms' }),
    triggerKind: text('trigger_kind', { enum: triggerKinds }).notNull(),
    /** Who asked: the API token of a request, the dashboard user, or the policy (for a bulk job, the bulk job's trigger). */
    triggerId: text('trigger_id'),
    /** The bulk job the attempt belonged to, if any. */
    jobId: text('job_id'),
    /** The safe update (its report) the attempt ran as, if it was one. */
    safeUpdateId: text('safe_update_id'),
    /**
     * A plain plugin or theme update's restore point, taken before it (JSON `{ id, target }`): what
     * `POST …/updates/history/{id}/rollback` puts back. Null: none was taken (a safe update has its own).
     */
    restorePoint: text('restore_point'),
    /** On the row recording a rollback: the attempt it rolled back (its restore point put back). */
    rollbackOf: text('rollback_of'),
    result: text('result', { enum: updateResults }).notNull(),
    /** A problem name (`site-operation-failed`, `no-update-available`, `version-changed`, …). */
    reason: text('reason'),
    error: text('error'),
  },
  (table) => [
    index('update_history_site_idx').on(table.siteId, table.id),
    index('update_history_job_idx').on(table.jobId),
    // Only the rows of safe updates: the others (most) cost no index entry when written.
    index('update_history_safe_update_idx')
      .on(table.safeUpdateId)
      .where(sql`${table.safeUpdateId} is not null`),
    index('update_history_rollback_of_idx')
      .on(table.rollbackOf)
      .where(sql`${table.rollbackOf} is not null`),
  ],
);

export type UpdateHistoryRow = typeof updateHistory.$inferSelect;
export type NewUpdateHistoryRow = typeof updateHistory.$inferInsert;
