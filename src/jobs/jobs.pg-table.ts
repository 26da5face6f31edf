import { customType, index, integer, pgTable, text } from 'drizzle-orm/pg-core';
import { timestampMs as at } from '../db/pg-columns.js';
import { jobStates } from './jobs.table.js';

/**
 * A JSON object kept as `jsonb` whose row value is its JSON text, as the SQLite table's `text` column
 * gives it: the job runner stringifies params and progress, the kinds and routes parse them, and one
 * query looks inside (a fleet action's sites, `fleet-actions.stored.ts`), which PostgreSQL answers with
 * `jsonb_array_elements` and no `json_valid` guard. PostgreSQL keeps the value, not the text: keys come
 * back in jsonb's order, without the writer's spacing.
 */
const jsonText = customType<{ data: string; driverData: unknown }>({
  dataType: () => 'jsonb',
  toDriver: (value) => value,
  // node-postgres parses jsonb itself.
  fromDriver: (value) => (typeof value === 'string' ? value : JSON.stringify(value)),
});

/**
 * The `jobs` table of the PostgreSQL dialect (issue 34; docs/design/cluster-state.md): the same
 * columns, row types and indexes as jobs.table.ts, the SQLite table, whose comment says what a job
 * row is. Migrations in drizzle-pg/, generated from this file (drizzle.pg.config.ts).
 */
export const jobs = pgTable(
  'jobs',
  {
    id: text('id').primaryKey(),
    kind: text('kind').notNull(),
    siteId: text('site_id'),
    state: text('state', { enum: jobStates }).notNull(),
    reason: text('reason'),
    message: text('message'),
    progress: jsonText('progress').notNull().default('{}'),
    params: jsonText('params').notNull().default('{}'),
    attempts: integer('attempts').notNull().default(0),
    createdAt: at('created_at').notNull(),
    startedAt: at('started_at'),
    finishedAt: at('finished_at'),
  },
  (table) => [
    index('jobs_created_idx').on(table.createdAt, table.id),
    index('jobs_site_idx').on(table.siteId, table.createdAt),
    index('jobs_state_idx').on(table.state, table.kind),
  ],
);
