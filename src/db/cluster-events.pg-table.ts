import { bigint, index, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { timestampMs } from './pg-columns.js';

/**
 * Cluster mode only (issue 34; event-fanout.ts): each event emitted by any process, written once and
 * announced with NOTIFY, so that every process's live pages see it; kept an hour (the fan-out's catch-up
 * after a lost connection), pruned by every process in turn. SQLite mode has one process and no fan-out.
 */
export const clusterEvents = pgTable(
  'cluster_events',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    /** The emitting process (its fan-out's origin). */
    origin: text('origin').notNull(),
    event: text('event').notNull(),
    level: text('level', { enum: ['info', 'warn', 'error'] }).notNull(),
    fields: jsonb('fields').$type<Record<string, unknown>>().notNull(),
    message: text('message'),
    at: timestampMs('at').notNull(),
  },
  (table) => [index('cluster_events_at_idx').on(table.at)],
);
