import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

export const jobStates = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type JobState = (typeof jobStates)[number];
export const finishedJobStates: readonly JobState[] = ['succeeded', 'failed', 'cancelled'];

/**
 * One row per long piece of work (a backup, a restore, an audit, …), whatever its kind: what a
 * client follows and what start-up recovery reads. A kind with a table of its own (backups,
 * restores, performance_audits, safe_updates) shares its id with the job row. The job runner
 * writes the job row (created with the feature row in one transaction; then running, progress,
 * the outcome the kind returns; a bulk update's with its children) (docs/jobs.md).
 * No foreign key to sites: the feature row's cascade removes the job row through its delete
 * trigger (drizzle/0007, 0015), and fleet jobs have no site.
 */
export const jobs = sqliteTable(
  'jobs',
  {
    id: text('id').primaryKey(),
    kind: text('kind').notNull(),
    siteId: text('site_id'),
    state: text('state', { enum: jobStates }).notNull(),
    /** Stable reason of a failure or cancel: a problem name, `interrupted`, `cancelled`. */
    reason: text('reason'),
    message: text('message'),
    /** A small JSON object the kind reports while it runs (files done, bytes, …). */
    progress: text('progress').notNull().default('{}'),
    /** What the kind needs to know about the job, as JSON. */
    params: text('params').notNull().default('{}'),
    /** How many times the job started running. */
    attempts: integer('attempts').notNull().default(0),
    createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
    startedAt: integer('started_at', { mode: 'timestamp_ms' }),
    finishedAt: integer('finished_at', { mode: 'timestamp_ms' }),
  },
  (table) => [
    index('jobs_created_idx').on(table.createdAt, table.id),
    index('jobs_site_idx').on(table.siteId, table.createdAt),
    index('jobs_state_idx').on(table.state, table.kind),
  ],
);

export type JobRow = typeof jobs.$inferSelect;
export type NewJobRow = typeof jobs.$inferInsert;
