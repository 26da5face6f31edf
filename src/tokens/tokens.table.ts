import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core';

export const apiTokens = sqliteTable(
  'api_tokens',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    scope: text('scope', { enum: ['read', 'write'] }).notNull(),
    /** SHA-256 of the token; the token itself is shown once and never stored. */
    tokenHash: text('token_hash').notNull().unique(),
    /** The first characters, so an operator can tell tokens apart. */
    prefix: text('prefix').notNull(),
    createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
    lastUsedAt: integer('last_used_at', { mode: 'timestamp_ms' }),
    revokedAt: integer('revoked_at', { mode: 'timestamp_ms' }),
  },
  (table) => [index('api_tokens_name_idx').on(table.name)],
);

export type ApiTokenRow = typeof apiTokens.$inferSelect;
