import { index, integer, pgTable, text } from 'drizzle-orm/pg-core';
import { timestampMs } from '../db/pg-columns.js';

/**
 * Cluster mode only (issue 34; uptime-leases.ts): which uptime worker probes which shard of the sites.
 * A row per shard (made on first use), held by one worker until `expires_at`, which its holder moves on
 * while it lives; `claimed_until` is how far its holder has taken the shard's slots (every site's probe
 * due before it is its holder's to make), where the next holder goes on. SQLite mode has one process and
 * no shards, so no SQLite table.
 */
export const uptimeShardLeases = pgTable('uptime_shard_leases', {
  shard: integer('shard').primaryKey(),
  holder: text('holder'),
  expiresAt: timestampMs('expires_at'),
  claimedUntil: timestampMs('claimed_until'),
});

/** The uptime workers alive (each renews its row with its leases): how many share the shards. */
export const uptimeWorkers = pgTable(
  'uptime_workers',
  {
    id: text('id').primaryKey(),
    expiresAt: timestampMs('expires_at').notNull(),
  },
  (table) => [index('uptime_workers_expires_idx').on(table.expiresAt)],
);
