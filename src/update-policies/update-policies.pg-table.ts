import { index, integer, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { timestampMs as at } from '../db/pg-columns.js';
import { pgSites as sites } from '../sites/index.js';

/**
 * The update policies' tables of the PostgreSQL dialect (issue 34; docs/design/cluster-state.md): the same
 * columns, row types, keys, indexes and foreign keys as update-policies.table.ts, the SQLite tables, whose
 * comments say what each row is. Migrations in drizzle-pg/, generated from this file (drizzle.pg.config.ts).
 *
 * A policy's settings stay `text`, as on SQLite, not `jsonb`: one document written and read whole (and
 * validated by its schema on every read), never looked inside by a query.
 */
export const updatePolicies = pgTable(
  'update_policies',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    siteId: text('site_id').references(() => sites.id, { onDelete: 'cascade' }),
    tag: text('tag'),
    priority: integer('priority').notNull(),
    settingsJson: text('settings_json').notNull(),
    createdAt: at('created_at').notNull(),
    updatedAt: at('updated_at').notNull(),
  },
  (table) => [
    uniqueIndex('update_policies_site_idx').on(table.siteId),
    uniqueIndex('update_policies_tag_idx').on(table.tag),
  ],
);

export const updatePolicyRuns = pgTable(
  'update_policy_runs',
  {
    policyId: text('policy_id')
      .notNull()
      .references(() => updatePolicies.id, { onDelete: 'cascade' }),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    windowStart: at('window_start').notNull(),
    windowEnd: at('window_end').notNull(),
    startedAt: at('started_at').notNull(),
    jobId: text('job_id'),
    targets: integer('targets').notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.policyId, table.siteId, table.windowStart] }),
    index('update_policy_runs_site_idx').on(table.siteId, table.startedAt),
  ],
);
