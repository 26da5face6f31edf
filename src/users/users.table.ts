import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { roles, type Role } from '../shared/actor.js';

/** Roles a user may hold (shared/actor.ts): owner, manager, viewer, client. */
export const userRoles = roles;
export type UserRole = Role;

export const users = sqliteTable('users', {
  id: text('id').primaryKey(),
  /** Lowercase; an email address or a plain name. */
  username: text('username').notNull().unique(),
  /** scrypt hash and the parameters it was made with (`scrypt$N$r$p$salt$hash`, base64url), so they can grow. */
  passwordHash: text('password_hash').notNull(),
  role: text('role', { enum: userRoles }).notNull(),
  /** A client scope: the user sees only sites carrying this tag (null: every site). For the roles issue. */
  scopeTag: text('scope_tag'),
  createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
  passwordChangedAt: integer('password_changed_at', { mode: 'timestamp_ms' }).notNull(),
  lastSignedInAt: integer('last_signed_in_at', { mode: 'timestamp_ms' }),
});

export const sessions = sqliteTable(
  'sessions',
  {
    id: text('id').primaryKey(),
    /** SHA-256 of the cookie's token; the token itself is never stored. */
    tokenHash: text('token_hash').notNull().unique(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    csrfToken: text('csrf_token').notNull(),
    createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
    lastSeenAt: integer('last_seen_at', { mode: 'timestamp_ms' }).notNull(),
    expiresAt: integer('expires_at', { mode: 'timestamp_ms' }).notNull(),
  },
  (table) => [index('sessions_user_idx').on(table.userId), index('sessions_expires_idx').on(table.expiresAt)],
);

export type UserRow = typeof users.$inferSelect;
export type SessionRow = typeof sessions.$inferSelect;
