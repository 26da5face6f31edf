import type { SessionRow, UserRow } from '../../src/users/users.table.js';

/** Rows of the users tables for the repositories' tests (users.repository.integration.test.ts and its siblings). */
export const at = (ms: number) => new Date(Date.UTC(2026, 10, 28) + ms);

export function userRow(id: string, fields: Partial<UserRow> = {}): UserRow {
  return {
    id,
    username: id.replace(/^usr_/, ''),
    passwordHash: 'scrypt$32768$8$1$salt$hash',
    role: 'owner',
    scopeTags: null,
    createdAt: at(0),
    passwordChangedAt: at(0),
    lastSignedInAt: null,
    totpSecret: null,
    totpPendingSecret: null,
    totpEnabledAt: null,
    totpLastStep: null,
    oidcIssuer: null,
    oidcSubject: null,
    ...fields,
  };
}

export function sessionRow(id: string, userId: string, fields: Partial<SessionRow> = {}): SessionRow {
  return {
    id,
    tokenHash: `hash-of-${id}`,
    userId,
    csrfToken: `csrf-of-${id}`,
    createdAt: at(0),
    lastSeenAt: at(0),
    expiresAt: at(60_000),
    address: '203.0.113.10',
    userAgent: 'Firefox',
    signInMethod: 'password',
    ...fields,
  };
}
