import { index, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { timestampMs as at } from '../db/pg-columns.js';
import { roles } from '../shared/actor.js';
import { tokenScopes } from './tokens.table.js';

/**
 * The `api_tokens` table of the PostgreSQL dialect (issue 34; docs/design/cluster-state.md): the same
 * columns, row types and indexes as tokens.table.ts, the SQLite table, whose comments say what each
 * column holds. `user_id` has no foreign key there either: a token whose user is gone is refused.
 */
export const apiTokens = pgTable(
  'api_tokens',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    scope: text('scope', { enum: tokenScopes }).notNull(),
    role: text('role', { enum: roles }).notNull().default('viewer'),
    userId: text('user_id'),
    // drizzle's `jsonb` writes the list's JSON and answers what node-postgres parsed, as SQLite's json text column gives it.
    tags: jsonb('tags').$type<string[]>(),
    expiresAt: at('expires_at'),
    tokenHash: text('token_hash').notNull().unique(),
    prefix: text('prefix').notNull(),
    createdAt: at('created_at').notNull(),
    lastUsedAt: at('last_used_at'),
    revokedAt: at('revoked_at'),
  },
  (table) => [index('api_tokens_name_idx').on(table.name), index('api_tokens_user_idx').on(table.userId)],
);
