import { index, integer, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { timestampMs as at } from '../db/pg-columns.js';
import { deliveryStatuses, webhookFormats } from './webhooks.table.js';

/**
 * The webhooks tables of the PostgreSQL dialect (issue 34; docs/design/cluster-state.md): the same
 * columns, row types, indexes and foreign key as webhooks.table.ts, the SQLite tables, whose comments
 * say what the rows are. Migrations in drizzle-pg/, generated from this file (drizzle.pg.config.ts).
 */
export const webhooks = pgTable('webhooks', {
  id: text('id').primaryKey(),
  url: text('url').notNull(),
  // drizzle's `jsonb` writes the array's JSON and answers what node-postgres parsed, as SQLite's json text column gives it.
  events: jsonb('events').$type<string[]>().notNull(),
  format: text('format', { enum: webhookFormats }).notNull(),
  sealedSecret: text('sealed_secret'),
  createdAt: at('created_at').notNull(),
  updatedAt: at('updated_at').notNull(),
});

export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    webhookId: text('webhook_id')
      .notNull()
      .references(() => webhooks.id, { onDelete: 'cascade' }),
    eventId: text('event_id').notNull(),
    event: text('event').notNull(),
    body: text('body').notNull(),
    status: text('status', { enum: deliveryStatuses }).notNull(),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: at('next_attempt_at'),
    lastStatus: integer('last_status'),
    lastCause: text('last_cause'),
    lastError: text('last_error'),
    lastDurationMs: integer('last_duration_ms'),
    lastAttemptAt: at('last_attempt_at'),
    createdAt: at('created_at').notNull(),
    finishedAt: at('finished_at'),
  },
  (table) => [
    index('webhook_deliveries_webhook_idx').on(table.webhookId, table.id),
    index('webhook_deliveries_due_idx').on(table.status, table.nextAttemptAt),
    index('webhook_deliveries_finished_idx').on(table.finishedAt),
  ],
);
