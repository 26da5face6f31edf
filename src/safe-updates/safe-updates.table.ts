import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { sites } from '../sites/index.js';

export const safeUpdateStatuses = ['queued', 'running', 'kept', 'rolled-back', 'rollback-failed', 'failed'] as const;
export type SafeUpdateStatus = (typeof safeUpdateStatuses)[number];

/** What a safe update updates: a plugin, a theme, or WordPress itself. */
export const safeUpdateItemTypes = ['plugin', 'theme', 'core'] as const;

/** Where a running safe update is: what start-up recovery resumes from. */
export const safeUpdatePhases = [
  'queued',
  'before-check',
  'restore-point',
  /** The backup before the update waits for one of the site's already under way (its scheduled backup). */
  'waiting-for-backup',
  'backup',
  'updating',
  'after-check',
  'rolling-back',
  'restoring-backup',
  'done',
] as const;
export type SafeUpdatePhase = (typeof safeUpdatePhases)[number];

/**
 * One safe update of one item on one site, and its report. Its job row (kind `safe-update`) is
 * the job runner's (safe-update-job-rows.ts): `kept` → succeeded, `rolled-back`, `rollback-failed`
 * and `failed` → failed (with the reason), `failed` with reason `cancelled` → cancelled.
 */
export const safeUpdates = sqliteTable(
  'safe_updates',
  {
    id: text('id').primaryKey(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    itemType: text('item_type', { enum: safeUpdateItemTypes }).notNull(),
    slug: text('slug').notNull(),
    status: text('status', { enum: safeUpdateStatuses }).notNull(),
    phase: text('phase', { enum: safeUpdatePhases }).notNull(),
    reason: text('reason'),
    message: text('message'),
    /** The policy it ran under, as JSON. */
    policy: text('policy').notNull(),
    fromVersion: text('from_version'),
    toVersion: text('to_version'),
    /** The connector's saved copy (wp-content/sitewarden-rollback/<id>) and where it goes back to. */
    restorePointId: text('restore_point_id'),
    restorePointTarget: text('restore_point_target'),
    /** The backup taken before the update: the last resort when putting the saved copy back does not heal the site. */
    backupId: text('backup_id'),
    /** Checks before and after, rollback steps, timings: JSON (see safe-updates.schemas.ts). */
    report: text('report').notNull().default('{}'),
    createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
    startedAt: integer('started_at', { mode: 'timestamp_ms' }),
    finishedAt: integer('finished_at', { mode: 'timestamp_ms' }),
  },
  (table) => [index('safe_updates_site_idx').on(table.siteId, table.createdAt)],
);

export type SafeUpdateRow = typeof safeUpdates.$inferSelect;
export type NewSafeUpdateRow = typeof safeUpdates.$inferInsert;

/** The standalone rollback path's secret per site, sealed; the site holds only its SHA-256. */
export const rollbackSecrets = sqliteTable('rollback_secrets', {
  siteId: text('site_id')
    .primaryKey()
    .references(() => sites.id, { onDelete: 'cascade' }),
  secretSealed: text('secret_sealed').notNull(),
  provisionedAt: integer('provisioned_at', { mode: 'timestamp_ms' }).notNull(),
});
