import { createHash, randomBytes } from 'node:crypto';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAuthFailureLimiter } from '../http/auth-rate-limit.js';
import type { Clock } from '../shared/clock.js';
import type { Events } from '../shared/event-bus.js';
import { createId } from '../shared/ids.js';
import { hashPassword, randomPassword, verifyPassword } from './passwords.js';
import { usersProblems } from './users.errors.js';
import type { UsersRepository } from './users.repository.js';
import type { SessionRow, UserRole, UserRow } from './users.table.js';

const BOOTSTRAP_PASSWORD_FILE = 'admin-password';
const USERNAME = /^[a-z0-9][a-z0-9._@+-]{0,99}$/;
const MIN_PASSWORD = 12;
const MAX_PASSWORD = 1024;
/** A session ends after this long without a request, and in any case after SESSION_MAX_MS. */
const SESSION_IDLE_MS = 12 * 3_600_000;
const SESSION_MAX_MS = 30 * 24 * 3_600_000;
/** last_seen_at is written at most this often. */
const TOUCH_RESOLUTION_MS = 60_000;
/** Failed sign-ins per minute, per user name and per address. */
const FAILURES_PER_USERNAME = 5;
const FAILURES_PER_ADDRESS = 20;

export interface UserSummary {
  id: string;
  username: string;
  role: UserRole;
  scopeTag: string | null;
  createdAt: Date;
  lastSignedInAt: Date | null;
}

export interface SignedInSession {
  user: UserSummary;
  sessionId: string;
  csrfToken: string;
  expiresAt: Date;
  /** The idle expiry moved on with this request: the cookie's own expiry should follow. */
  renewed?: boolean;
}

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

function checkUsername(raw: string): string {
  const username = raw.trim().toLowerCase();
  if (!USERNAME.test(username))
    throw usersProblems.invalid.create('a user name is 1–100 letters, digits or . _ @ + - (lowercase)');
  return username;
}

function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD || password.length > MAX_PASSWORD)
    throw usersProblems.invalid.create(`a password has ${MIN_PASSWORD} to ${MAX_PASSWORD} characters`);
}

/** Dashboard users and their sessions. Passwords are scrypt hashes; session cookies are stored as SHA-256 hashes. */
export function createUsersService({
  repository,
  clock,
  events,
}: {
  repository: UsersRepository;
  clock: Clock;
  events: Events;
}) {
  const failuresByUsername = createAuthFailureLimiter({ limit: FAILURES_PER_USERNAME, clock });
  const failuresByAddress = createAuthFailureLimiter({ limit: FAILURES_PER_ADDRESS, clock });

  async function create(rawUsername: string, password: string, role: UserRole = 'admin'): Promise<UserSummary> {
    const username = checkUsername(rawUsername);
    checkPassword(password);
    if (repository.findByUsername(username)) throw usersProblems.exists.create(`the user ${username} exists`);
    const now = clock.now();
    const row: UserRow = {
      id: createId('usr', now),
      username,
      passwordHash: await hashPassword(password),
      role,
      scopeTag: null,
      createdAt: now,
      passwordChangedAt: now,
      lastSignedInAt: null,
    };
    repository.insertUser(row);
    events.emit('user.created', { userId: row.id, username, role });
    return toSummary(row);
  }

  return {
    create,

    list: (): UserSummary[] => repository.listUsers().map(toSummary),

    /** Sets a new password (a random one when none is given, returned once) and ends the user's sessions. */
    async resetPassword(rawUsername: string, password = randomPassword()): Promise<string> {
      const user = repository.findByUsername(checkUsername(rawUsername));
      if (!user) throw usersProblems.notFound.create(`no user is named ${rawUsername}`);
      checkPassword(password);
      repository.setPassword(user.id, await hashPassword(password), clock.now());
      repository.deleteSessionsOf(user.id);
      events.emit('user.password_reset', { userId: user.id, username: user.username });
      return password;
    },

    /**
     * Checks the password and opens a session; the returned token goes in the cookie only.
     * Failures count per user name and per address; past the limit every attempt is refused.
     */
    async signIn(rawUsername: string, password: string, address: string): Promise<SignedInSession & { token: string }> {
      const username = rawUsername.trim().toLowerCase().slice(0, 100);
      const retryAfter = Math.max(
        failuresByUsername.retryAfterSeconds(username),
        failuresByAddress.retryAfterSeconds(address),
      );
      if (retryAfter > 0)
        throw usersProblems.signInLimited.create(`too many failed sign-ins; try again in ${retryAfter} s`, {
          retryAfter,
        });
      const user = repository.findByUsername(username);
      const ok =
        user !== undefined && password.length <= MAX_PASSWORD && (await verifyPassword(password, user.passwordHash));
      if (!user || !ok) {
        failuresByUsername.fail(username);
        failuresByAddress.fail(address);
        events.emit('user.sign_in_failed', { username, address });
        throw usersProblems.signInFailed.create('wrong user name or password');
      }
      const now = clock.now();
      const token = randomBytes(32).toString('base64url');
      const session: SessionRow = {
        id: createId('ses', now),
        tokenHash: sha256(token),
        userId: user.id,
        csrfToken: randomBytes(24).toString('base64url'),
        createdAt: now,
        lastSeenAt: now,
        expiresAt: new Date(now.getTime() + SESSION_IDLE_MS),
      };
      repository.insertSession(session);
      repository.markSignedIn(user.id, now);
      events.emit('user.signed_in', { userId: user.id, username, address });
      return {
        token,
        user: toSummary(user),
        sessionId: session.id,
        csrfToken: session.csrfToken,
        expiresAt: session.expiresAt,
      };
    },

    /** The session a cookie's token opens, or null when it is unknown or expired; extends its idle time. */
    authenticate(token: string): SignedInSession | null {
      if (token.length === 0 || token.length > 100) return null;
      const now = clock.now();
      const found = repository.findSession(sha256(token), now);
      if (!found) return null;
      const { session, user } = found;
      if (now.getTime() - session.createdAt.getTime() >= SESSION_MAX_MS) {
        repository.deleteSession(session.id);
        return null;
      }
      let expiresAt = session.expiresAt;
      const renewed = now.getTime() - session.lastSeenAt.getTime() >= TOUCH_RESOLUTION_MS;
      if (renewed) {
        expiresAt = new Date(Math.min(now.getTime() + SESSION_IDLE_MS, session.createdAt.getTime() + SESSION_MAX_MS));
        repository.touchSession(session.id, now, expiresAt);
      }
      return { user: toSummary(user), sessionId: session.id, csrfToken: session.csrfToken, expiresAt, renewed };
    },

    signOut(sessionId: string): void {
      repository.deleteSession(sessionId);
    },

    pruneSessions: (): number => repository.deleteExpiredSessions(clock.now()),

    /**
     * On a first start nobody can sign in: an `admin` user is created with a random password,
     * written once to a 0600 file in the data directory. Its path is logged, never the password.
     */
    async ensureBootstrapAdmin(dataDir: string): Promise<{ path: string } | null> {
      if (repository.countUsers() > 0) return null;
      const password = randomPassword();
      const user = await create('admin', password, 'admin');
      const path = join(dataDir, BOOTSTRAP_PASSWORD_FILE);
      const temporary = `${path}.tmp-${process.pid}`;
      writeFileSync(temporary, `username: admin\npassword: ${password}\n`, { mode: 0o600 });
      renameSync(temporary, path);
      events.emit(
        'user.bootstrap_created',
        { userId: user.id, path },
        `no dashboard user existed: user "admin" was created; its password is in ${path}`,
      );
      return { path };
    },
  };
}

function toSummary(row: UserRow): UserSummary {
  return {
    id: row.id,
    username: row.username,
    role: row.role,
    scopeTag: row.scopeTag,
    createdAt: row.createdAt,
    lastSignedInAt: row.lastSignedInAt,
  };
}

export type UsersService = ReturnType<typeof createUsersService>;
