import { pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { timestampMs } from '../db/pg-columns.js';

/**
 * Cluster mode only (issue 34; tick-claims.ts): which process ran each scheduled tick of each minute. A tick
 * fires in every process that runs its feature; the first to write its row for the minute runs it, the others
 * pass. SQLite mode has one process, so no SQLite table.
 */
export const scheduledTickClaims = pgTable(
  'scheduled_tick_claims',
  {
    name: text('name').notNull(),
    /** The minute the tick fired in (UTC, seconds cut). */
    slot: timestampMs('slot').notNull(),
    claimedBy: text('claimed_by').notNull(),
    claimedAt: timestampMs('claimed_at').notNull(),
  },
  (table) => [primaryKey({ columns: [table.name, table.slot] })],
);
