import { boolean, index, integer, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { timestampMs as at } from '../db/pg-columns.js';
import { signInMethods, userRoles } from './users.table.js';

/**
 * The users feature's tables of the PostgreSQL dialect (issue 34; docs/design/cluster-state.md): the
 * same columns, row types, indexes and foreign keys as users.table.ts, the SQLite tables, whose comments
 * say what each column holds. Migrations in drizzle-pg/, generated from this file (drizzle.pg.config.ts).
 */
export const users = pgTable(
  'users',
  {
    id: text('id').primaryKey(),
    username: text('username').notNull().unique(),
    passwordHash: text('password_hash').notNull(),
    role: text('role', { enum: userRoles }).notNull(),
    /**
     * A JSON array, its row value the parsed array as the SQLite table's `json` text column gives it:
     * drizzle's `jsonb` writes the value's JSON and answers what node-postgres parsed.
     */
    scopeTags: jsonb('scope_tags').$type<string[]>(),
    createdAt: at('created_at').notNull(),
    passwordChangedAt: at('password_changed_at').notNull(),
    lastSignedInAt: at('last_signed_in_at'),
    totpSecret: text('totp_secret'),
    totpPendingSecret: text('totp_pending_secret'),
    totpEnabledAt: at('totp_enabled_at'),
    totpLastStep: integer('totp_last_step'),
    oidcIssuer: text('oidc_issuer'),
    oidcSubject: text('oidc_subject'),
  },
  (table) => [uniqueIndex('users_oidc_identity_idx').on(table.oidcIssuer, table.oidcSubject)],
);

export const sessions = pgTable(
  'sessions',
  {
    id: text('id').primaryKey(),
    tokenHash: text('token_hash').notNull().unique(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    csrfToken: text('csrf_token').notNull(),
    createdAt: at('created_at').notNull(),
    lastSeenAt: at('last_seen_at').notNull(),
    expiresAt: at('expires_at').notNull(),
    address: text('address'),
    userAgent: text('user_agent'),
    signInMethod: text('sign_in_method', { enum: signInMethods }).notNull().default('password'),
  },
  (table) => [index('sessions_user_idx').on(table.userId), index('sessions_expires_idx').on(table.expiresAt)],
);

export const recoveryCodes = pgTable(
  'recovery_codes',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    codeHash: text('code_hash').notNull(),
    createdAt: at('created_at').notNull(),
    usedAt: at('used_at'),
  },
  (table) => [index('recovery_codes_user_idx').on(table.userId)],
);

export const twoFactorSettings = pgTable('two_factor_settings', {
  // SQLite's `integer primary key` is its rowid, given when an insert leaves it out: an identity here.
  id: integer('id').primaryKey().generatedByDefaultAsIdentity(),
  required: boolean('required').notNull(),
  changedAt: at('changed_at').notNull(),
  changedBy: text('changed_by'),
});
