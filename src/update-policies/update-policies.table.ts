import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { sites } from '../sites/index.js';

/** A policy for one site or one tag; what it says is one JSON document (validated by PolicySettingsSchema). */
export const updatePolicies = sqliteTable(
  'update_policies',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    siteId: text('site_id').references(() => sites.id, { onDelete: 'cascade' }),
    tag: text('tag'),
    priority: integer('priority').notNull(),
    settingsJson: text('settings_json').notNull(),
    createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
    updatedAt: integer('updated_at', { mode: 'timestamp_ms' }).notNull(),
  },
  (table) => [
    uniqueIndex('update_policies_site_idx').on(table.siteId),
    uniqueIndex('update_policies_tag_idx').on(table.tag),
  ],
);
export type UpdatePolicyRow = typeof updatePolicies.$inferSelect;

/** One row per policy, site and window that started a run: a window never starts twice on a site. */
export const updatePolicyRuns = sqliteTable(
  'update_policy_runs',
  {
    policyId: text('policy_id')
      .notNull()
      .references(() => updatePolicies.id, { onDelete: 'cascade' }),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    windowStart: integer('window_start', { mode: 'timestamp_ms' }).notNull(),
    windowEnd: integer('window_end', { mode: 'timestamp_ms' }).notNull(),
    startedAt: integer('started_at', { mode: 'timestamp_ms' }).notNull(),
    /** The bulk-update job that carries the run. */
    jobId: text('job_id'),
    targets: integer('targets').notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.policyId, table.siteId, table.windowStart] }),
    index('update_policy_runs_site_idx').on(table.siteId, table.startedAt),
  ],
);
