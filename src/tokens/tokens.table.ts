import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core';
import { roles } from '../shared/actor.js';

/** A token's deprecated `scope` (the alias of its role the API still reports). */
export const tokenScopes = ['read', 'write'] as const;

export const apiTokens = sqliteTable(
  'api_tokens',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    /** Deprecated alias of `role`, kept for the API's `scope` field: `write` for owner and manager, else `read`. */
    scope: text('scope', { enum: tokenScopes }).notNull(),
    /** The token's own role; at each request it is lowered to its user's (docs/design/team-access.md). */
    role: text('role', { enum: roles }).notNull().default('viewer'),
    /**
     * Whose token it is (a `users` id); null for an operator token (the CLI without --user, the
     * bootstrap token). No foreign key (users/ is another feature): a token whose user is gone is refused.
     */
    userId: text('user_id'),
    /** The token's own site scope tags, a JSON array (null: its user's scope); at a request intersected with its user's. */
    tags: text('tags', { mode: 'json' }).$type<string[]>(),
    /** Past it the token is refused like a revoked one; null: it does not expire. */
    expiresAt: integer('expires_at', { mode: 'timestamp_ms' }),
    /** SHA-256 of the token; the token itself is shown once and never stored. */
    tokenHash: text('token_hash').notNull().unique(),
    /** The first characters, so an operator can tell tokens apart. */
    prefix: text('prefix').notNull(),
    createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
    lastUsedAt: integer('last_used_at', { mode: 'timestamp_ms' }),
    revokedAt: integer('revoked_at', { mode: 'timestamp_ms' }),
  },
  (table) => [index('api_tokens_name_idx').on(table.name), index('api_tokens_user_idx').on(table.userId)],
);

export type ApiTokenRow = typeof apiTokens.$inferSelect;
