/**
 * The users service's pure rules: what a user name, a password, scope tags and a stored User-Agent
 * must be, and a user as the service shows it (`UserSummary`). No I/O.
 */
import { hasControlCharacters } from '../http/plain-text.js';
import { normaliseScopeTags } from '../shared/actor.js';
import { usersProblems } from './users.errors.js';
import type { UserRole, UserRow } from './users.table.js';

export const USERNAME = /^[a-z0-9][a-z0-9._@+-]{0,99}$/;
const MIN_PASSWORD = 12;
export const MAX_PASSWORD = 1024;
const MAX_USER_AGENT = 256;

export interface UserSummary {
  id: string;
  username: string;
  role: UserRole;
  /** Site scope tags: the user sees only sites carrying any of them (null: every site). */
  scopeTags: string[] | null;
  createdAt: Date;
  lastSignedInAt: Date | null;
  /** Whether the user signs in with a TOTP code after the password. */
  twoFactorEnabled: boolean;
}

/** A User-Agent as stored and shown: control characters dropped, at most MAX_USER_AGENT characters. */
export function cleanUserAgent(raw: string | undefined | null): string | null {
  const clean = (raw ?? '').replace(/[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu, '').trim();
  return clean ? clean.slice(0, MAX_USER_AGENT) : null;
}

export function checkUsername(raw: string): string {
  const username = raw.trim().toLowerCase();
  if (hasControlCharacters(raw) || !USERNAME.test(username))
    throw usersProblems.invalid.create('a user name is 1–100 letters, digits or . _ @ + - (lowercase)');
  return username;
}

export function checkScopeTags(raw: readonly string[]): string[] {
  const tags = normaliseScopeTags(raw);
  if (!Array.isArray(tags)) throw usersProblems.scopeInvalid.create(tags.error);
  return tags;
}

export function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD || password.length > MAX_PASSWORD)
    throw usersProblems.invalid.create(`a password has ${MIN_PASSWORD} to ${MAX_PASSWORD} characters`);
}

export function toSummary(row: UserRow): UserSummary {
  return {
    id: row.id,
    username: row.username,
    role: row.role,
    scopeTags: row.role === 'owner' ? null : row.role === 'client' ? (row.scopeTags ?? []) : row.scopeTags,
    createdAt: row.createdAt,
    lastSignedInAt: row.lastSignedInAt,
    twoFactorEnabled: row.totpSecret !== null,
  };
}
