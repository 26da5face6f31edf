import { createHash, randomBytes } from 'node:crypto';
import type { AppError } from '../shared/errors.js';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hasControlCharacters } from '../http/plain-text.js';
import type { Clock } from '../shared/clock.js';
import type { Events } from '../shared/event-bus.js';
import { isRole, normaliseScopeTags, roles, type Actor } from '../shared/actor.js';
import { createId } from '../shared/ids.js';
import type { SecretBox } from '../shared/secret-box.js';
import { passwordHasher, randomPassword, type PasswordHasher } from './passwords.js';
import { createBackoffThrottle, type BackoffPolicy } from './sign-in-throttle.js';
import { randomToken } from './two-factor.js';
import { twoFactorProblems } from './two-factor.errors.js';
import type { TwoFactorRepository } from './two-factor.repository.js';
import { createTwoFactorService, type SecondFactor, type TwoFactorService } from './two-factor.service.js';
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
/**
 * Sign-in attempts, counted when they start: per account and address, 5 without a wait, then
 * one after 1 s, 2 s, 4 s … up to one per 15 minutes; per address over every account, looser (30,
 * then the same backoff). Never per account alone: attempts from one address cannot lock the
 * account's user out at another. A success clears its account and address.
 */
export const SIGN_IN_THROTTLE: { perAccountAndAddress: BackoffPolicy; perAddress: BackoffPolicy } = {
  perAccountAndAddress: { free: 5, baseMs: 1_000, maxMs: 15 * 60_000, forgetAfterMs: 60 * 60_000 },
  perAddress: { free: 30, baseMs: 1_000, maxMs: 15 * 60_000, forgetAfterMs: 60 * 60_000 },
};

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

export interface SignedInSession {
  user: UserSummary;
  sessionId: string;
  csrfToken: string;
  expiresAt: Date;
  /** How the session was opened: a password (and the second factor, when on), or single sign-on. */
  method: 'password' | 'oidc';
  /** The idle expiry moved on with this request: the cookie's own expiry should follow. */
  renewed?: boolean;
}

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

/** The password was right; the sign-in waits for the second factor (`completeSignIn`). Not a session. */
export interface PendingSignIn {
  twoFactor: { pendingToken: string; expiresAt: Date };
}

/** A session as its user (or an owner) sees it in the list. */
export interface SessionSummary {
  id: string;
  createdAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
  address: string | null;
  userAgent: string | null;
  /** The session asking. */
  current: boolean;
}

/** Between the password and the code: this long, then the password again. */
const PENDING_SIGN_IN_MS = 5 * 60_000;
const MAX_PENDING_SIGN_INS = 10_000;
const MAX_USER_AGENT = 256;

/** A User-Agent as stored and shown: control characters dropped, at most MAX_USER_AGENT characters. */
function cleanUserAgent(raw: string | undefined | null): string | null {
  const clean = (raw ?? '').replace(/[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu, '').trim();
  return clean ? clean.slice(0, MAX_USER_AGENT) : null;
}

function checkUsername(raw: string): string {
  const username = raw.trim().toLowerCase();
  if (hasControlCharacters(raw) || !USERNAME.test(username))
    throw usersProblems.invalid.create('a user name is 1–100 letters, digits or . _ @ + - (lowercase)');
  return username;
}

function checkScopeTags(raw: readonly string[]): string[] {
  const tags = normaliseScopeTags(raw);
  if (!Array.isArray(tags)) throw usersProblems.scopeInvalid.create(tags.error);
  return tags;
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
  hasher = passwordHasher,
  throttle = SIGN_IN_THROTTLE,
  twoFactorRepository,
  secrets,
}: {
  repository: UsersRepository;
  clock: Clock;
  events: Events;
  /** The process's bounded hashing pool unless a test brings its own. */
  hasher?: PasswordHasher;
  throttle?: typeof SIGN_IN_THROTTLE;
  /** Two-factor sign-in (the daemon brings both; the CLI neither). */
  twoFactorRepository?: TwoFactorRepository;
  secrets?: SecretBox;
}) {
  const byAccountAndAddress = createBackoffThrottle({ policy: throttle.perAccountAndAddress, clock });
  const byAddress = createBackoffThrottle({ policy: throttle.perAddress, clock });
  /** Second-step attempts per (account, address): its own count, which a right password does not clear. */
  const codesByAccountAndAddress = createBackoffThrottle({ policy: throttle.perAccountAndAddress, clock });
  const twoFactorService: TwoFactorService | null = twoFactorRepository
    ? createTwoFactorService({ repository: twoFactorRepository, users: repository, secrets, clock, events, hasher })
    : null;
  /** Sign-ins between the password and the code, by their random token (in this process's memory only). */
  const pendingSignIns = new Map<string, { userId: string; passwordChangedAt: number; expiresAt: number }>();
  /** What to stop when a session ends (its open event streams), by session id. */
  const sessionWatchers = new Map<string, Set<() => void>>();

  function sessionsEnded(sessionIds: readonly string[]): void {
    for (const id of sessionIds) {
      const watchers = sessionWatchers.get(id);
      sessionWatchers.delete(id);
      for (const onEnd of watchers ?? []) onEnd();
    }
  }

  /** Ends every session of the user and what watches them (their open event streams). */
  function endSessionsOf(userId: string): void {
    const ended = repository.sessionIdsOf(userId);
    repository.deleteSessionsOf(userId);
    sessionsEnded(ended);
  }

  function findUser(id: string): UserRow {
    const user = repository.findById(id);
    if (!user) throw usersProblems.notFound.create(`no user has the id ${id}`);
    return user;
  }

  function twoFactor(): TwoFactorService {
    if (!twoFactorService) throw new Error('two-factor is not configured in this process');
    return twoFactorService;
  }

  function twoFactorRepo(): TwoFactorRepository {
    if (!twoFactorRepository) throw new Error('two-factor is not configured in this process');
    return twoFactorRepository;
  }

  /** A new session for the user; its token goes in the cookie only. */
  function openSession(
    user: UserRow,
    address: string,
    userAgent?: string,
    method: 'password' | 'oidc' = 'password',
  ): SignedInSession & { token: string } {
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
      address: address.slice(0, 64),
      userAgent: cleanUserAgent(userAgent),
      signInMethod: method,
    };
    repository.insertSession(session);
    repository.markSignedIn(user.id, now);
    events.emit('user.signed_in', { userId: user.id, username: user.username, address, method });
    return {
      token,
      user: toSummary(user),
      sessionId: session.id,
      csrfToken: session.csrfToken,
      expiresAt: session.expiresAt,
      method,
    };
  }

  /** The password was right and two-factor is on: a pending sign-in, good for one user's codes for a few minutes. */
  function pendSignIn(user: UserRow): PendingSignIn {
    const now = clock.now().getTime();
    if (pendingSignIns.size >= MAX_PENDING_SIGN_INS) {
      for (const [key, entry] of pendingSignIns) if (entry.expiresAt <= now) pendingSignIns.delete(key);
      while (pendingSignIns.size >= MAX_PENDING_SIGN_INS) pendingSignIns.delete(pendingSignIns.keys().next().value!);
    }
    const pendingToken = randomToken();
    const expiresAt = now + PENDING_SIGN_IN_MS;
    pendingSignIns.set(pendingToken, {
      userId: user.id,
      passwordChangedAt: user.passwordChangedAt.getTime(),
      expiresAt,
    });
    return { twoFactor: { pendingToken, expiresAt: new Date(expiresAt) } };
  }

  /** Whether taking the owner role from `user` would leave no owner. */
  const isLastOwner = (user: UserRow) => user.role === 'owner' && repository.countOwners() <= 1;

  /** A new user; `owner` unless another role is given (the CLI and the first user; the dashboard asks). */
  async function create(rawUsername: string, password: string, role: UserRole = 'owner'): Promise<UserSummary> {
    if (!isRole(role)) throw usersProblems.roleInvalid.create(`a role is one of ${roles.join(', ')}`);
    const username = checkUsername(rawUsername);
    checkPassword(password);
    if (repository.findByUsername(username)) throw usersProblems.exists.create(`the user ${username} exists`);
    const now = clock.now();
    const row: UserRow = {
      id: createId('usr', now),
      username,
      passwordHash: await hasher.hash(password),
      role,
      scopeTags: null,
      createdAt: now,
      passwordChangedAt: now,
      lastSignedInAt: null,
      totpSecret: null,
      totpPendingSecret: null,
      totpEnabledAt: null,
      totpLastStep: null,
      oidcIssuer: null,
      oidcSubject: null,
    };
    repository.insertUser(row);
    events.emit('user.created', { userId: row.id, username, role });
    return toSummary(row);
  }

  return {
    create,

    list: (): UserSummary[] => repository.listUsers().map(toSummary),

    find: (id: string): UserSummary | undefined => {
      const row = repository.findById(id);
      return row && toSummary(row);
    },

    /**
     * Gives the user another role and ends their sessions and open event streams (they sign in
     * again under the new role; their tokens follow at once, tokens.service.ts). The last owner
     * keeps the owner role (`last-owner`).
     */
    setRole(id: string, role: UserRole, by?: Actor): UserSummary {
      if (!isRole(role)) throw usersProblems.roleInvalid.create(`a role is one of ${roles.join(', ')}`);
      const user = findUser(id);
      if (user.role === role) return toSummary(user);
      if (isLastOwner(user))
        throw usersProblems.lastOwner.create(`${user.username} is the only owner; make another user an owner first`);
      repository.setRole(user.id, role);
      endSessionsOf(user.id);
      events.emit('user.role_changed', {
        userId: user.id,
        username: user.username,
        from: user.role,
        to: role,
        by: by ?? null,
      });
      return toSummary({ ...user, role });
    },

    /**
     * Limits the user to the sites carrying any of `tags` (null: every site), ends their sessions and
     * open event streams (their tokens follow at once, tokens.service.ts). An owner always sees every
     * site; a client's scope names at least one tag (docs/design/team-access.md).
     */
    setScope(id: string, rawTags: readonly string[] | null, by?: Actor): UserSummary {
      const user = findUser(id);
      const tags = rawTags === null ? null : checkScopeTags(rawTags);
      if (user.role === 'owner' && tags !== null)
        throw usersProblems.scopeInvalid.create(`${user.username} is an owner: an owner sees every site`);
      if (user.role === 'client' && (tags === null || tags.length === 0))
        throw usersProblems.scopeInvalid.create(
          `${user.username} is a client: a client's scope names at least one tag`,
        );
      repository.setScopeTags(user.id, tags);
      endSessionsOf(user.id);
      events.emit('user.scope_changed', { userId: user.id, username: user.username, tags, by: by ?? null });
      return toSummary({ ...user, scopeTags: tags });
    },

    /** Deletes the user, their sessions and streams; their tokens are refused from now on. Never the last owner. */
    delete(id: string, by?: Actor): UserSummary {
      const user = findUser(id);
      if (isLastOwner(user))
        throw usersProblems.lastOwner.create(`${user.username} is the only owner; make another user an owner first`);
      const ended = repository.sessionIdsOf(user.id);
      repository.deleteUser(user.id);
      sessionsEnded(ended);
      events.emit('user.deleted', { userId: user.id, username: user.username, by: by ?? null });
      return toSummary(user);
    },

    /**
     * A user changes their own password: the current one is checked first; every other session of
     * theirs ends (and its streams), the one asking stays signed in.
     */
    async changeOwnPassword(
      userId: string,
      currentSessionId: string,
      currentPassword: string,
      newPassword: string,
    ): Promise<void> {
      const user = findUser(userId);
      checkPassword(newPassword);
      const candidate = currentPassword.slice(0, MAX_PASSWORD);
      if (!(await hasher.verify(candidate, user.passwordHash)) || currentPassword.length > MAX_PASSWORD)
        throw usersProblems.currentPasswordWrong.create('the current password is not right; nothing changed');
      repository.setPassword(user.id, await hasher.hash(newPassword), clock.now());
      sessionsEnded(repository.deleteOtherSessionsOf(user.id, currentSessionId));
      events.emit('user.password_changed', { userId: user.id, username: user.username });
    },

    /** Sets a new password (a random one when none is given, returned once) and ends the user's sessions. */
    async resetPassword(rawUsername: string, password = randomPassword()): Promise<string> {
      const user = repository.findByUsername(checkUsername(rawUsername));
      if (!user) throw usersProblems.notFound.create(`no user is named ${rawUsername}`);
      checkPassword(password);
      repository.setPassword(user.id, await hasher.hash(password), clock.now());
      endSessionsOf(user.id);
      events.emit('user.password_reset', { userId: user.id, username: user.username });
      return password;
    },

    /**
     * Checks the password and opens a session; the returned token goes in the cookie only.
     * Each attempt counts (SIGN_IN_THROTTLE) before its password is hashed, so a burst is refused
     * without hashing; the hash runs in the bounded pool. An unknown user name costs the same
     * hash as a wrong password, so the answer's timing does not tell which names exist.
     */
    /**
     * The refusal every password sign-in gets now (`sign-in-busy`: the hashing pool is full), else
     * undefined: the sign-in form refuses before reading the request's body (a burst costs the loop less).
     */
    signInBusy: (): AppError | undefined => hasher.busy(),

    async signIn(
      rawUsername: string,
      password: string,
      address: string,
      userAgent?: string,
    ): Promise<(SignedInSession & { token: string }) | PendingSignIn> {
      // A name with control characters matches nobody (no user has one); the event gets it escaped by the logger.
      const acceptable = !hasControlCharacters(rawUsername);
      const username = rawUsername.trim().toLowerCase().slice(0, 100);
      const accountKey = JSON.stringify([address, username]);
      const retryAfter = Math.max(
        byAccountAndAddress.retryAfterSeconds(accountKey),
        byAddress.retryAfterSeconds(address),
      );
      if (retryAfter > 0)
        throw usersProblems.signInLimited.create(`too many failed sign-ins; try again in ${retryAfter} s`, {
          retryAfter,
        });
      // Every turn of the hashing pool taken and its queue full: refused now, before the user is looked up (not counted).
      const busy = hasher.busy();
      if (busy) throw busy;
      byAccountAndAddress.take(accountKey);
      byAddress.take(address);
      const user = acceptable && USERNAME.test(username) ? repository.findByUsername(username) : undefined;
      // At most MAX_PASSWORD characters are hashed: a longer password is wrong, at the same cost.
      const candidate = password.slice(0, MAX_PASSWORD);
      let ok: boolean;
      try {
        ok = user
          ? (await hasher.verify(candidate, user.passwordHash)) && password.length <= MAX_PASSWORD
          : await hasher.verifyNobody(candidate);
      } catch (error) {
        // Not judged (the hashing pool is full): the attempt does not count.
        byAccountAndAddress.refund(accountKey);
        byAddress.refund(address);
        throw error;
      }
      if (!user || !ok) {
        events.emit('user.sign_in_failed', { username, address });
        throw usersProblems.signInFailed.create('wrong user name or password');
      }
      byAccountAndAddress.clear(accountKey);
      byAddress.refund(address);
      // Two-factor on: no session yet, only the right to try a code for a few minutes (two-factor.service.ts).
      if (user.totpSecret) return pendSignIn(user);
      return openSession(user, address, userAgent);
    },

    /**
     * The sign-in's second step: a current TOTP code or an unused recovery code for the pending
     * sign-in `signIn` answered. Counted like passwords (per account and address, per address)
     * before the code is checked; a wrong code leaves the pending sign-in for another try.
     */
    completeSignIn(
      pendingToken: string,
      code: string,
      address: string,
      userAgent?: string,
    ): SignedInSession & { token: string; factor: SecondFactor } {
      const pending = pendingToken.length <= 100 ? pendingSignIns.get(pendingToken) : undefined;
      const now = clock.now().getTime();
      const user = pending && now < pending.expiresAt ? repository.findById(pending.userId) : undefined;
      if (!pending || !user || !user.totpSecret || user.passwordChangedAt.getTime() !== pending.passwordChangedAt) {
        if (pending) pendingSignIns.delete(pendingToken);
        throw twoFactorProblems.signInExpired.create('the sign-in expired or is unknown; enter your password again');
      }
      const accountKey = JSON.stringify([address, user.id]);
      const retryAfter = Math.max(
        codesByAccountAndAddress.retryAfterSeconds(accountKey),
        byAddress.retryAfterSeconds(address),
      );
      if (retryAfter > 0)
        throw usersProblems.signInLimited.create(`too many wrong codes; try again in ${retryAfter} s`, { retryAfter });
      codesByAccountAndAddress.take(accountKey);
      byAddress.take(address);
      const checked = twoFactor().check(user.id, code.slice(0, 100));
      if (!checked) {
        events.emit('user.two_factor_failed', { userId: user.id, username: user.username, address });
        throw twoFactorProblems.codeInvalid.create('the code is wrong, expired or was used already');
      }
      codesByAccountAndAddress.clear(accountKey);
      byAddress.refund(address);
      pendingSignIns.delete(pendingToken);
      if (checked.factor === 'recovery-code')
        events.emit('user.recovery_code_used', {
          userId: user.id,
          username: user.username,
          address,
          remaining: checked.recoveryCodesLeft ?? 0,
        });
      return { ...openSession(user, address, userAgent), factor: checked.factor };
    },

    /**
     * A session for a user the identity provider vouched for (single sign-on, oidc.service.ts): no
     * password and no local second factor (the provider's own apply). The user must exist.
     */
    openSingleSignOnSession(userId: string, address: string, userAgent?: string): SignedInSession & { token: string } {
      return openSession(findUser(userId), address, userAgent, 'oidc');
    },

    /** Two-factor: enrolment, recovery codes, the owners' policy (two-factor.service.ts). */
    get twoFactor(): TwoFactorService {
      return twoFactor();
    },

    /** The user's live sessions, most recently seen first; `currentSessionId` is marked `current`. */
    listSessions(userId: string, currentSessionId?: string): SessionSummary[] {
      findUser(userId);
      return twoFactorRepo()
        .sessionsOf(userId, clock.now())
        .map((row) => ({ ...row, current: row.id === currentSessionId }));
    },

    /** Ends one session of the user (and its open event streams). */
    revokeSession(userId: string, sessionId: string, by: Actor | null): void {
      const user = findUser(userId);
      if (!twoFactorRepo().deleteSessionOf(user.id, sessionId))
        throw twoFactorProblems.sessionNotFound.create(`${user.username} has no session ${sessionId}`);
      sessionsEnded([sessionId]);
      events.emit('user.sessions_revoked', { userId: user.id, username: user.username, count: 1, by });
    },

    /** Ends every session of the user but `keep` (the one asking; null: every one). Returns how many ended. */
    revokeOtherSessions(userId: string, keep: string | null, by: Actor | null): number {
      const user = findUser(userId);
      let ended: string[];
      if (keep) ended = repository.deleteOtherSessionsOf(user.id, keep);
      else {
        ended = repository.sessionIdsOf(user.id);
        repository.deleteSessionsOf(user.id);
      }
      sessionsEnded(ended);
      if (ended.length > 0)
        events.emit('user.sessions_revoked', { userId: user.id, username: user.username, count: ended.length, by });
      return ended.length;
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
      return {
        user: toSummary(user),
        sessionId: session.id,
        csrfToken: session.csrfToken,
        expiresAt,
        method: session.signInMethod,
        renewed,
      };
    },

    /** Ends the session, and whatever watches it (its open event streams). */
    signOut(sessionId: string): void {
      repository.deleteSession(sessionId);
      sessionsEnded([sessionId]);
    },

    /**
     * Calls `onEnd` once when the session ends in this process (sign-out, a password reset);
     * returns how to stop watching. A live event stream closes with its session this way.
     */
    /**
     * Whether the session is still live in the database, whoever ended it (the CLI's `users set-role` and
     * `users reset-password` are another process): an open event stream asks on its heartbeat. Does not extend it.
     */
    isSessionLive: (sessionId: string): boolean => repository.isSessionLive(sessionId, clock.now()),

    watchSession(sessionId: string, onEnd: () => void): () => void {
      let watchers = sessionWatchers.get(sessionId);
      if (!watchers) sessionWatchers.set(sessionId, (watchers = new Set()));
      watchers.add(onEnd);
      return () => {
        watchers.delete(onEnd);
        if (watchers.size === 0 && sessionWatchers.get(sessionId) === watchers) sessionWatchers.delete(sessionId);
      };
    },

    pruneSessions: (): number => repository.deleteExpiredSessions(clock.now()),

    /**
     * On a first start nobody can sign in: an `admin` user is created with a random password,
     * written once to a 0600 file in the data directory. Its path is logged, never the password.
     */
    async ensureBootstrapAdmin(dataDir: string): Promise<{ path: string } | null> {
      if (repository.countUsers() > 0) return null;
      const password = randomPassword();
      const user = await create('admin', password, 'owner');
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
    scopeTags: row.role === 'owner' ? null : row.role === 'client' ? (row.scopeTags ?? []) : row.scopeTags,
    createdAt: row.createdAt,
    lastSignedInAt: row.lastSignedInAt,
    twoFactorEnabled: row.totpSecret !== null,
  };
}

export type UsersService = ReturnType<typeof createUsersService>;
