import { index, integer, pgTable, text } from 'drizzle-orm/pg-core';
import { timestampMs } from '../db/pg-columns.js';

/**
 * Cluster mode only (issue 34; auth-rate-limit.ts, `createSharedAuthFailureLimiter`): failed API authentications per client address in
 * its current one-minute window, counted by every API process. SQLite mode has one process and counts in its
 * memory (auth-rate-limit.ts), so no SQLite table. Pruned on write once its window has ended.
 */
export const authFailures = pgTable(
  'auth_failures',
  {
    address: text('address').primaryKey(),
    windowStartedAt: timestampMs('window_started_at').notNull(),
    failures: integer('failures').notNull(),
  },
  (table) => [index('auth_failures_window_idx').on(table.windowStartedAt)],
);
