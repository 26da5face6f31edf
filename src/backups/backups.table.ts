import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { sites } from '../sites/index.js';

export const jobStatuses = ['queued', 'running', 'completed', 'failed'] as const;
export type JobStatus = (typeof jobStatuses)[number];
/** A backup is `partial` when the local store holds it whole but an offsite target could not get its copy. */
export const backupStatuses = [...jobStatuses, 'partial'] as const;
export type BackupStatus = (typeof backupStatuses)[number];
export const backupKinds = ['manual', 'scheduled', 'pre_restore', 'pre_update'] as const;
export type BackupKind = (typeof backupKinds)[number];

/**
 * One row per backup job. `manifestHash` names the manifest object in the store; a backup is
 * `completed` only once that object and every object it references are durably written.
 */
export const backups = sqliteTable(
  'backups',
  {
    id: text('id').primaryKey(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    kind: text('kind', { enum: backupKinds }).notNull(),
    status: text('status', { enum: backupStatuses }).notNull(),
    /** Stable failure reason (`interrupted`, `site_error`, `unsafe_path`, `store_error`, …). */
    reason: text('reason'),
    error: text('error'),
    manifestHash: text('manifest_hash'),
    /** The targets holding the backup (`local`, then offsite ones); null for backups taken before targets, which only `local` holds. */
    targets: text('targets', { mode: 'json' }).$type<string[]>(),
    /** The interrupted backup this one retries (at the start after a stop), if any. */
    retryOf: text('retry_of'),
    files: integer('files').notNull().default(0),
    filesDone: integer('files_done').notNull().default(0),
    tables: integer('tables').notNull().default(0),
    tablesDone: integer('tables_done').notNull().default(0),
    rows: integer('rows').notNull().default(0),
    /** Size of the site's files and SQL, as if copied whole. */
    bytesTotal: integer('bytes_total').notNull().default(0),
    /** Bytes downloaded from the site for this backup. */
    bytesTransferred: integer('bytes_transferred').notNull().default(0),
    /** Compressed bytes of the objects this backup added to the store. */
    bytesStored: integer('bytes_stored').notNull().default(0),
    createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
    startedAt: integer('started_at', { mode: 'timestamp_ms' }),
    finishedAt: integer('finished_at', { mode: 'timestamp_ms' }),
  },
  (table) => [index('backups_site_idx').on(table.siteId, table.id), index('backups_status_idx').on(table.status)],
);

export const restores = sqliteTable(
  'restores',
  {
    id: text('id').primaryKey(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    backupId: text('backup_id').notNull(),
    /** The offsite target the restore reads, when one was named; null: the local store, else the first target holding it. */
    sourceTarget: text('source_target'),
    /** The backup of the site taken just before restoring, so the restore can be undone. */
    preRestoreBackupId: text('pre_restore_backup_id'),
    status: text('status', { enum: jobStatuses }).notNull(),
    reason: text('reason'),
    error: text('error'),
    filesRestored: integer('files_restored').notNull().default(0),
    filesDeleted: integer('files_deleted').notNull().default(0),
    tablesRestored: integer('tables_restored').notNull().default(0),
    bytesTransferred: integer('bytes_transferred').notNull().default(0),
    createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
    startedAt: integer('started_at', { mode: 'timestamp_ms' }),
    finishedAt: integer('finished_at', { mode: 'timestamp_ms' }),
  },
  (table) => [index('restores_site_idx').on(table.siteId, table.id), index('restores_status_idx').on(table.status)],
);

/** The retention values a site or a tag may set, each nullable (null: not set here). */
const retentionColumns = () => ({
  keepLast: integer('keep_last'),
  keepDays: integer('keep_days'),
  keepDaily: integer('keep_daily'),
  keepWeekly: integer('keep_weekly'),
  keepMonthly: integer('keep_monthly'),
  keepYearly: integer('keep_yearly'),
});

/** A site's own backup schedule and retention; null columns follow the SITEWARDEN_BACKUP_* defaults. */
export const backupSettings = sqliteTable('backup_settings', {
  siteId: text('site_id')
    .primaryKey()
    .references(() => sites.id, { onDelete: 'cascade' }),
  /** false: no scheduled backups of the site (manual ones still run, retention still applies). */
  enabled: integer('enabled', { mode: 'boolean' }).notNull().default(true),
  intervalHours: integer('interval_hours'),
  /** Retention (src/backups/retention.ts); null follows the site's tags, then the defaults. */
  ...retentionColumns(),
  updatedAt: integer('updated_at', { mode: 'timestamp_ms' }).notNull(),
});

/**
 * Retention for the sites with a tag, between a site's own values and the SITEWARDEN_BACKUP_KEEP_*
 * defaults; a site with several such tags keeps what any of them keeps (the largest value of each).
 */
export const backupTagRetention = sqliteTable('backup_tag_retention', {
  tag: text('tag').primaryKey(),
  ...retentionColumns(),
  updatedAt: integer('updated_at', { mode: 'timestamp_ms' }).notNull(),
});

export type BackupRow = typeof backups.$inferSelect;
export type NewBackupRow = typeof backups.$inferInsert;
export type RestoreRow = typeof restores.$inferSelect;
export type NewRestoreRow = typeof restores.$inferInsert;
export type BackupSettingsRow = typeof backupSettings.$inferSelect;
export type BackupTagRetentionRow = typeof backupTagRetention.$inferSelect;
