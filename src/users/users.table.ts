import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { roles, type Role } from '../shared/actor.js';

/** Roles a user may hold (shared/actor.ts): owner, manager, viewer, client. */
export const userRoles = roles;
export type UserRole = Role;

/** How a session was opened: a password (then the second factor, when on) or single sign-on (the provider's). */
export const signInMethods = ['password', 'oidc'] as const;

export const users = sqliteTable(
  'users',
  {
    id: text('id').primaryKey(),
    /** Lowercase; an email address or a plain name. */
    username: text('username').notNull().unique(),
    /** scrypt hash and the parameters it was made with (`scrypt$N$r$p$salt$hash`, base64url), so they can grow. */
    passwordHash: text('password_hash').notNull(),
    role: text('role', { enum: userRoles }).notNull(),
    /**
     * Site scope (docs/design/team-access.md): the user sees only sites carrying any of these tags
     * (null: every site; a client always has a scope, an owner never). A JSON array.
     */
    scopeTags: text('scope_tags', { mode: 'json' }).$type<string[]>(),
    createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
    passwordChangedAt: integer('password_changed_at', { mode: 'timestamp_ms' }).notNull(),
    lastSignedInAt: integer('last_signed_in_at', { mode: 'timestamp_ms' }),
    /** The TOTP secret, sealed with the daemon's secret box (null: two-factor is off). two-factor.ts. */
    totpSecret: text('totp_secret'),
    /** The sealed secret of an enrolment begun but not yet confirmed with a code. */
    totpPendingSecret: text('totp_pending_secret'),
    totpEnabledAt: integer('totp_enabled_at', { mode: 'timestamp_ms' }),
    /** The last time step a code was accepted for: a code of that step or an earlier one is refused (replay). */
    totpLastStep: integer('totp_last_step'),
    /** Single sign-on (oidc.ts): the OpenID provider's issuer and subject this user signs in as; null: never used. */
    oidcIssuer: text('oidc_issuer'),
    oidcSubject: text('oidc_subject'),
  },
  (table) => [uniqueIndex('users_oidc_identity_idx').on(table.oidcIssuer, table.oidcSubject)],
);

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
    /** The client's address at sign-in (http/client-address.ts). */
    address: text('address'),
    /** The browser's User-Agent at sign-in, control characters stripped, at most 256 characters. */
    userAgent: text('user_agent'),
    signInMethod: text('sign_in_method', { enum: signInMethods }).notNull().default('password'),
  },
  (table) => [index('sessions_user_idx').on(table.userId), index('sessions_expires_idx').on(table.expiresAt)],
);

/** Single-use recovery codes (two-factor.ts), as SHA-256 hashes. */
export const recoveryCodes = sqliteTable(
  'recovery_codes',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    codeHash: text('code_hash').notNull(),
    createdAt: integer('created_at', { mode: 'timestamp_ms' }).notNull(),
    usedAt: integer('used_at', { mode: 'timestamp_ms' }),
  },
  (table) => [index('recovery_codes_user_idx').on(table.userId)],
);

/** The owners' two-factor policy: one row, id 1 (none: not required). */
export const twoFactorSettings = sqliteTable('two_factor_settings', {
  id: integer('id').primaryKey(),
  required: integer('required', { mode: 'boolean' }).notNull(),
  changedAt: integer('changed_at', { mode: 'timestamp_ms' }).notNull(),
  /** Who changed it (`user:ID` or `token:ID`). */
  changedBy: text('changed_by'),
});

export type UserRow = typeof users.$inferSelect;
export type RecoveryCodeRow = typeof recoveryCodes.$inferSelect;
export type SessionRow = typeof sessions.$inferSelect;
