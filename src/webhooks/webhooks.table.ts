import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

export const webhookFormats = ['json', 'slack'] as const;
export type WebhookFormat = (typeof webhookFormats)[number];
export const deliveryStatuses = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof deliveryStatuses)[number];

export const webhooks = sqliteTable('webhooks', {
  id: text('id').primaryKey(),
  url: text('url').notNull(),
  /** JSON array of event names, or `["*"]` for every event. */
  events: text('events', { mode: 'json' }).$type<string[]>().notNull(),
  format: text('format', { enum: webhookFormats }).notNull(),
  /** The signing secret sealed with the secret box; it is never returned. */
  sealedSecret: text('sealed_secret'),
  createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
  updatedAt: integer('updated_at', { mode: 'timestamp_ms' }).notNull(),
});

/**
 * One row per event sent to a webhook. `body` is the exact request body, so every retry sends
 * the same bytes; a delivery stays `pending` (also across restarts) until it succeeds or has
 * used its attempts.
 */
export const webhookDeliveries = sqliteTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    webhookId: text('webhook_id')
      .notNull()
      .references(() => webhooks.id, { onDelete: 'cascade' }),
    /** The event's id, the same in every webhook's delivery of it (`id` in the json payload). */
    eventId: text('event_id').notNull(),
    event: text('event').notNull(),
    body: text('body').notNull(),
    status: text('status', { enum: deliveryStatuses }).notNull(),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: integer('next_attempt_at', { mode: 'timestamp_ms' }),
    /** The last answer's HTTP status, if one came. */
    lastStatus: integer('last_status'),
    /** Why the last attempt failed: a stable cause (`timeout`, `connect`, `http_status`, …). */
    lastCause: text('last_cause'),
    lastError: text('last_error'),
    lastDurationMs: integer('last_duration_ms'),
    lastAttemptAt: integer('last_attempt_at', { mode: 'timestamp_ms' }),
    createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
    finishedAt: integer('finished_at', { mode: 'timestamp_ms' }),
  },
  (table) => [
    index('webhook_deliveries_webhook_idx').on(table.webhookId, table.id),
    index('webhook_deliveries_due_idx').on(table.status, table.nextAttemptAt),
    index('webhook_deliveries_finished_idx').on(table.finishedAt),
  ],
);

export type WebhookRow = typeof webhooks.$inferSelect;
export type NewWebhookRow = typeof webhooks.$inferInsert;
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
export type NewDeliveryRow = typeof webhookDeliveries.$inferInsert;
