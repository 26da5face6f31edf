import { bigint, boolean, index, integer, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { timestampMs as at } from '../db/pg-columns.js';
import { pgSites as sites } from '../sites/index.js';
import { backupKinds, backupStatuses, jobStatuses } from './backups.table.js';

/** Byte and row counts: past 2^31 on a large site, read as a number (exact to 2^53) as SQLite's integer gives it. */
const count = (name: string) => bigint(name, { mode: 'number' });

/**
 * The backups feature's tables of the PostgreSQL dialect (issue 34; docs/design/cluster-state.md): the
 * same columns, row types, indexes and foreign keys as backups.table.ts, the SQLite tables, whose
 * comments say what each column holds. Migrations in drizzle-pg/, generated from this file
 * (drizzle.pg.config.ts).
 */
export const backups = pgTable(
  'backups',
  {
    id: text('id').primaryKey(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    kind: text('kind', { enum: backupKinds }).notNull(),
    status: text('status', { enum: backupStatuses }).notNull(),
    reason: text('reason'),
    error: text('error'),
    manifestHash: text('manifest_hash'),
    // drizzle's `jsonb` writes the list's JSON and answers what node-postgres parsed, as SQLite's json text column gives it.
    targets: jsonb('targets').$type<string[]>(),
    retryOf: text('retry_of'),
    files: integer('files').notNull().default(0),
    filesDone: integer('files_done').notNull().default(0),
    tables: integer('tables').notNull().default(0),
    tablesDone: integer('tables_done').notNull().default(0),
    rows: count('rows').notNull().default(0),
    bytesTotal: count('bytes_total').notNull().default(0),
    bytesTransferred: count('bytes_transferred').notNull().default(0),
    bytesStored: count('bytes_stored').notNull().default(0),
    createdAt: at('created_at').notNull(),
    startedAt: at('started_at'),
    finishedAt: at('finished_at'),
  },
  (table) => [index('backups_site_idx').on(table.siteId, table.id), index('backups_status_idx').on(table.status)],
);

export const restores = pgTable(
  'restores',
  {
    id: text('id').primaryKey(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    backupId: text('backup_id').notNull(),
    sourceTarget: text('source_target'),
    preRestoreBackupId: text('pre_restore_backup_id'),
    status: text('status', { enum: jobStatuses }).notNull(),
    reason: text('reason'),
    error: text('error'),
    filesRestored: integer('files_restored').notNull().default(0),
    filesDeleted: integer('files_deleted').notNull().default(0),
    tablesRestored: integer('tables_restored').notNull().default(0),
    bytesTransferred: count('bytes_transferred').notNull().default(0),
    createdAt: at('created_at').notNull(),
    startedAt: at('started_at'),
    finishedAt: at('finished_at'),
  },
  (table) => [index('restores_site_idx').on(table.siteId, table.id), index('restores_status_idx').on(table.status)],
);

const retentionColumns = () => ({
  keepLast: integer('keep_last'),
  keepDays: integer('keep_days'),
  keepDaily: integer('keep_daily'),
  keepWeekly: integer('keep_weekly'),
  keepMonthly: integer('keep_monthly'),
  keepYearly: integer('keep_yearly'),
});

export const backupSettings = pgTable('backup_settings', {
  siteId: text('site_id')
    .primaryKey()
    .references(() => sites.id, { onDelete: 'cascade' }),
  enabled: boolean('enabled').notNull().default(true),
  intervalHours: integer('interval_hours'),
  ...retentionColumns(),
  updatedAt: at('updated_at').notNull(),
});

export const backupTagRetention = pgTable('backup_tag_retention', {
  tag: text('tag').primaryKey(),
  ...retentionColumns(),
  updatedAt: at('updated_at').notNull(),
});
