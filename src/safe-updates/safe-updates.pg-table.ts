import { index, pgTable, text } from 'drizzle-orm/pg-core';
import { timestampMs as at } from '../db/pg-columns.js';
import { pgSites as sites } from '../sites/index.js';
import { safeUpdateItemTypes, safeUpdatePhases, safeUpdateStatuses } from './safe-updates.table.js';

/*
 * The safe updates' tables of the PostgreSQL dialect (issue 34; docs/design/cluster-state.md): the same
 * columns, row types and indexes as safe-updates.table.ts, the SQLite tables, whose comments say what each
 * holds, and the same foreign keys (a site's safe updates and rollback secret go with it). Migrations in
 * drizzle-pg/, generated from this file (drizzle.pg.config.ts).
 *
 * The policy and the report stay `text`, as on SQLite, not `jsonb`: the report is written whole at every step
 * of a run and read whole by the run and the API, and no query looks inside either, so the text written is read
 * back as it is, with no parse and stringify on every read. The trigger on the SQLite table (the job row deleted
 * with its safe update) is not here yet: the lead writes it for PostgreSQL after the merge.
 */
export const safeUpdates = pgTable(
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
    policy: text('policy').notNull(),
    fromVersion: text('from_version'),
    toVersion: text('to_version'),
    restorePointId: text('restore_point_id'),
    restorePointTarget: text('restore_point_target'),
    backupId: text('backup_id'),
    report: text('report').notNull().default('{}'),
    createdAt: at('created_at').notNull(),
    startedAt: at('started_at'),
    finishedAt: at('finished_at'),
  },
  (table) => [index('safe_updates_site_idx').on(table.siteId, table.createdAt)],
);

export const rollbackSecrets = pgTable('rollback_secrets', {
  siteId: text('site_id')
    .primaryKey()
    .references(() => sites.id, { onDelete: 'cascade' }),
  secretSealed: text('secret_sealed').notNull(),
  provisionedAt: at('provisioned_at').notNull(),
});
