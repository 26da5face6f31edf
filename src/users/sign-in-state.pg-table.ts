import { index, integer, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { timestampMs } from '../db/pg-columns.js';

/**
 * Cluster mode only (issue 34; docs/design/cluster-state.md, "Sign-in state"): what a sign-in needs between
 * two requests that a round-robin proxy may send to two API processes. SQLite mode has one process and keeps
 * the same state in its memory (sign-in-tickets.ts, sign-in-throttle.ts), so no SQLite table.
 */

/**
 * A sign-in begun and not finished, used once (`delete … returning`): a single sign-on's flow (`oidc-flow`:
 * its state, nonce, PKCE verifier and where to go next) or a password sign-in waiting for its second factor
 * (`pending-sign-in`: the user and their password's date). Keyed by the SHA-256 of the random id the browser
 * holds, as sessions are; expires in minutes and is pruned on write.
 */
export const signInTickets = pgTable(
  'sign_in_tickets',
  {
    idHash: text('id_hash').primaryKey(),
    kind: text('kind', { enum: ['oidc-flow', 'pending-sign-in'] }).notNull(),
    value: jsonb('value').$type<Record<string, unknown>>().notNull(),
    expiresAt: timestampMs('expires_at').notNull(),
  },
  (table) => [index('sign_in_tickets_expires_idx').on(table.expiresAt)],
);

/**
 * Sign-in attempts per throttle and key (sign-in.ts's SIGN_IN_THROTTLE), counted by every API process: the
 * attempts since the key last started afresh and the last one's time. Forgotten after the throttle's
 * `forgetAfterMs` of quiet, pruned on write.
 */
export const signInAttempts = pgTable(
  'sign_in_attempts',
  {
    throttle: text('throttle', { enum: ['password', 'address', 'code'] }).notNull(),
    key: text('key').notNull(),
    attempts: integer('attempts').notNull(),
    lastAt: timestampMs('last_at').notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.throttle, table.key] }),
    index('sign_in_attempts_last_idx').on(table.lastAt),
  ],
);
