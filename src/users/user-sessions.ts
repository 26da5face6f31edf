/**
 * The users service's sessions: opening one (its token goes in the cookie only, its SHA-256 hash in the
 * database), the cookie's lookup with its idle and absolute expiry, listing and revoking a user's
 * sessions, and ending the open event streams that watch a session when it ends.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Actor } from '../shared/actor.js';
import type { Clock } from '../shared/clock.js';
import type { Events } from '../shared/event-bus.js';
import { createId } from '../shared/ids.js';
import { twoFactorProblems } from './two-factor.errors.js';
import type { TwoFactorRepository } from './two-factor.repository.js';
import { cleanUserAgent, toSummary, type UserSummary } from './user-checks.js';
import type { UsersRepository } from './users.repository.js';
import type { SessionRow, UserRow } from './users.table.js';

/** A session ends after this long without a request, and in any case after SESSION_MAX_MS. */
const SESSION_IDLE_MS = 12 * 3_600_000;
const SESSION_MAX_MS = 30 * 24 * 3_600_000;
/** last_seen_at is written at most this often. */
const TOUCH_RESOLUTION_MS = 60_000;

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

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

export function createUserSessions({
  repository,
  clock,
  events,
  findUser,
  twoFactorRepository,
}: {
  repository: UsersRepository;
  clock: Clock;
  events: Events;
  /** The user with the id, else `user-not-found`. */
  findUser: (id: string) => Promise<UserRow>;
  /** The sessions' list and single revocation (the daemon brings it; the CLI does not). */
  twoFactorRepository?: TwoFactorRepository;
}) {
  /** What to stop when a session ends (its open event streams), by session id. */
  const sessionWatchers = new Map<string, Set<() => void>>();

  function sessionsEnded(sessionIds: readonly string[]): void {
    for (const id of sessionIds) {
      const watchers = sessionWatchers.get(id);
      sessionWatchers.delete(id);
      for (const onEnd of watchers ?? []) onEnd();
    }
  }

  function twoFactorRepo(): TwoFactorRepository {
    if (!twoFactorRepository) throw new Error('two-factor is not configured in this process');
    return twoFactorRepository;
  }

  return {
    sessionsEnded,

    /** Ends every session of the user and what watches them (their open event streams). */
    async endSessionsOf(userId: string): Promise<void> {
      sessionsEnded(await repository.deleteSessionsOf(userId));
    },

    /** A new session for the user; its token goes in the cookie only. */
    async openSession(
      user: UserRow,
      address: string,
      userAgent?: string,
      method: 'password' | 'oidc' = 'password',
    ): Promise<SignedInSession & { token: string }> {
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
      await repository.insertSession(session);
      await repository.markSignedIn(user.id, now);
      events.emit('user.signed_in', { userId: user.id, username: user.username, address, method });
      return {
        token,
        user: toSummary(user),
        sessionId: session.id,
        csrfToken: session.csrfToken,
        expiresAt: session.expiresAt,
        method,
      };
    },

    /** The user's live sessions, most recently seen first; `currentSessionId` is marked `current`. */
    async listSessions(userId: string, currentSessionId?: string): Promise<SessionSummary[]> {
      await findUser(userId);
      const rows = await twoFactorRepo().sessionsOf(userId, clock.now());
      return rows.map((row) => ({ ...row, current: row.id === currentSessionId }));
    },

    /** Ends one session of the user (and its open event streams). */
    async revokeSession(userId: string, sessionId: string, by: Actor | null): Promise<void> {
      const user = await findUser(userId);
      if (!(await twoFactorRepo().deleteSessionOf(user.id, sessionId)))
        throw twoFactorProblems.sessionNotFound.create(`${user.username} has no session ${sessionId}`);
      sessionsEnded([sessionId]);
      events.emit('user.sessions_revoked', { userId: user.id, username: user.username, count: 1, by });
    },

    /** Ends every session of the user but `keep` (the one asking; null: every one). Returns how many ended. */
    async revokeOtherSessions(userId: string, keep: string | null, by: Actor | null): Promise<number> {
      const user = await findUser(userId);
      const ended = keep
        ? await repository.deleteOtherSessionsOf(user.id, keep)
        : await repository.deleteSessionsOf(user.id);
      sessionsEnded(ended);
      if (ended.length > 0)
        events.emit('user.sessions_revoked', { userId: user.id, username: user.username, count: ended.length, by });
      return ended.length;
    },

    /** The session a cookie's token opens, or null when it is unknown or expired; extends its idle time. */
    async authenticate(token: string): Promise<SignedInSession | null> {
      if (token.length === 0 || token.length > 100) return null;
      const now = clock.now();
      const found = await repository.findSession(sha256(token), now);
      if (!found) return null;
      const { session, user } = found;
      if (now.getTime() - session.createdAt.getTime() >= SESSION_MAX_MS) {
        await repository.deleteSession(session.id);
        return null;
      }
      let expiresAt = session.expiresAt;
      const renewed = now.getTime() - session.lastSeenAt.getTime() >= TOUCH_RESOLUTION_MS;
      if (renewed) {
        expiresAt = new Date(Math.min(now.getTime() + SESSION_IDLE_MS, session.createdAt.getTime() + SESSION_MAX_MS));
        await repository.touchSession(session.id, now, expiresAt);
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
    async signOut(sessionId: string): Promise<void> {
      await repository.deleteSession(sessionId);
      sessionsEnded([sessionId]);
    },

    /**
     * Whether the session is still live in the database, whoever ended it (the CLI's `users set-role` and
     * `users reset-password` are another process): an open event stream asks on its heartbeat. Does not extend it.
     */
    isSessionLive: (sessionId: string): Promise<boolean> => repository.isSessionLive(sessionId, clock.now()),

    /**
     * Calls `onEnd` once when the session ends in this process (sign-out, a password reset);
     * returns how to stop watching. A live event stream closes with its session this way.
     */
    watchSession(sessionId: string, onEnd: () => void): () => void {
      let watchers = sessionWatchers.get(sessionId);
      if (!watchers) sessionWatchers.set(sessionId, (watchers = new Set()));
      watchers.add(onEnd);
      return () => {
        watchers.delete(onEnd);
        if (watchers.size === 0 && sessionWatchers.get(sessionId) === watchers) sessionWatchers.delete(sessionId);
      };
    },

    pruneSessions: (): Promise<number> => repository.deleteExpiredSessions(clock.now()),
  };
}

export type UserSessions = ReturnType<typeof createUserSessions>;
