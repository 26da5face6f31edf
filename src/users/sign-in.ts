/**
 * The users service's sign-ins: the password step (throttled per account and address and per address,
 * hashed in the bounded pool), the pending sign-in between the password and the two-factor code, the
 * code step, and the session single sign-on opens. Each ends in a session (user-sessions.ts).
 *
 * The attempts' counts and the pending sign-ins are in the process's memory on one machine, and in the
 * cluster's database when several API processes serve the sign-ins (sign-in-throttle.ts,
 * sign-in-tickets.ts): a second factor may then be sent to another process than the password was, and
 * the limits count every process's attempts. The hashing pool's refusal (`sign-in-busy`) stays this
 * process's: it is about its own CPU, asked before anything is counted or read from the database.
 */
import type { AppError } from '../shared/errors.js';
import { hasControlCharacters } from '../http/plain-text.js';
import type { StateDatabase } from '../db/state-db.js';
import type { Clock } from '../shared/clock.js';
import type { Events } from '../shared/event-bus.js';
import type { PasswordHasher } from './passwords.js';
import { signInThrottleFor, type BackoffPolicy, type SignInThrottle, type ThrottleKey } from './sign-in-throttle.js';
import { signInTicketsFor } from './sign-in-tickets.js';
import { randomToken } from './two-factor.js';
import { twoFactorProblems } from './two-factor.errors.js';
import type { SecondFactor, TwoFactorService } from './two-factor.service.js';
import { MAX_PASSWORD, USERNAME } from './user-checks.js';
import type { SignedInSession, UserSessions } from './user-sessions.js';
import { usersProblems } from './users.errors.js';
import type { UsersRepository } from './users.repository.js';
import type { UserRow } from './users.table.js';

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

/** The password was right; the sign-in waits for the second factor (`completeSignIn`). Not a session. */
export interface PendingSignIn {
  twoFactor: { pendingToken: string; expiresAt: Date };
}

/** Between the password and the code: this long, then the password again. */
const PENDING_SIGN_IN_MS = 5 * 60_000;

/** What a pending sign-in keeps: whose it is, and their password's date (a change since ends it). */
type PendingEntry = { userId: string; passwordChangedAt: number };

export function createSignIn({
  repository,
  state,
  clock,
  events,
  hasher,
  throttle,
  twoFactor,
  findUser,
  sessions: { openSession },
}: {
  repository: UsersRepository;
  /** The state database: in a cluster (PostgreSQL) the attempts and pending sign-ins are kept in it; else in memory. */
  state: Pick<StateDatabase, 'dialect' | 'run'> | undefined;
  clock: Clock;
  events: Events;
  hasher: PasswordHasher;
  throttle: typeof SIGN_IN_THROTTLE;
  /** Checks the second step's code (throws when two-factor is not configured in this process). */
  twoFactor: () => TwoFactorService;
  /** The user with the id, else `user-not-found`. */
  findUser: (id: string) => Promise<UserRow>;
  sessions: Pick<UserSessions, 'openSession'>;
}) {
  /** Second-step attempts per (account, address) are `code`'s: their own count, which a right password does not clear. */
  const attempts: SignInThrottle = signInThrottleFor({
    state,
    policies: {
      password: throttle.perAccountAndAddress,
      address: throttle.perAddress,
      code: throttle.perAccountAndAddress,
    },
    clock,
  });
  /** Sign-ins between the password and the code, by their random token. */
  const pendingSignIns = signInTicketsFor<PendingEntry>(state, 'pending-sign-in', clock);

  /** The password was right and two-factor is on: a pending sign-in, good for one user's codes for a few minutes. */
  async function pendSignIn(user: UserRow): Promise<PendingSignIn> {
    const pendingToken = randomToken();
    const expiresAt = clock.now().getTime() + PENDING_SIGN_IN_MS;
    await pendingSignIns.put(
      pendingToken,
      { userId: user.id, passwordChangedAt: user.passwordChangedAt.getTime() },
      expiresAt,
    );
    return { twoFactor: { pendingToken, expiresAt: new Date(expiresAt) } };
  }

  return {
    /**
     * The refusal every password sign-in gets now (`sign-in-busy`: the hashing pool is full), else
     * undefined: the sign-in form refuses before reading the request's body (a burst costs the loop less).
     */
    signInBusy: (): AppError | undefined => hasher.busy(),

    /**
     * Checks the password and opens a session; the returned token goes in the cookie only.
     * Each attempt counts (SIGN_IN_THROTTLE) before its password is hashed, so a burst is refused
     * without hashing; the hash runs in the bounded pool. An unknown user name costs the same
     * hash as a wrong password, so the answer's timing does not tell which names exist.
     */
    async signIn(
      rawUsername: string,
      password: string,
      address: string,
      userAgent?: string,
    ): Promise<(SignedInSession & { token: string }) | PendingSignIn> {
      // A name with control characters matches nobody (no user has one); the event gets it escaped by the logger.
      const acceptable = !hasControlCharacters(rawUsername);
      const username = rawUsername.trim().toLowerCase().slice(0, 100);
      const account: ThrottleKey = ['password', JSON.stringify([address, username])];
      const fromAddress: ThrottleKey = ['address', address];
      // The user is looked up first (the one wait before the hash in memory): from the throttle's check to the
      // hash's turn in the pool is then one synchronous step, so that a burst's attempts are counted and queued
      // one by one. In a cluster the count is one statement per key, each attempt counted before its hash.
      const user = acceptable && USERNAME.test(username) ? await repository.findByUsername(username) : undefined;
      // Every turn of the hashing pool taken and its queue full: refused now, before it is counted or hashed.
      const busy = hasher.busy();
      if (busy) throw busy;
      // The memory's answer is taken as it is, not awaited: its count and the hash's turn stay one step.
      const taken = attempts.take([account, fromAddress]);
      const retryAfter = typeof taken === 'number' ? taken : await taken;
      if (retryAfter > 0)
        throw usersProblems.signInLimited.create(`too many failed sign-ins; try again in ${retryAfter} s`, {
          retryAfter,
        });
      // At most MAX_PASSWORD characters are hashed: a longer password is wrong, at the same cost.
      const candidate = password.slice(0, MAX_PASSWORD);
      let ok: boolean;
      try {
        ok = user
          ? (await hasher.verify(candidate, user.passwordHash)) && password.length <= MAX_PASSWORD
          : await hasher.verifyNobody(candidate);
      } catch (error) {
        // Not judged (the hashing pool is full): the attempt does not count.
        await attempts.refund([account, fromAddress]);
        throw error;
      }
      if (!user || !ok) {
        events.emit('user.sign_in_failed', { username, address });
        throw usersProblems.signInFailed.create('wrong user name or password');
      }
      await Promise.all([attempts.clear([account]), attempts.refund([fromAddress])]);
      // Two-factor on: no session yet, only the right to try a code for a few minutes (two-factor.service.ts).
      if (user.totpSecret) return await pendSignIn(user);
      return openSession(user, address, userAgent);
    },

    /**
     * The sign-in's second step: a current TOTP code or an unused recovery code for the pending
     * sign-in `signIn` answered. Counted like passwords (per account and address, per address)
     * before the code is checked; a wrong code leaves the pending sign-in for another try.
     */
    async completeSignIn(
      pendingToken: string,
      code: string,
      address: string,
      userAgent?: string,
    ): Promise<SignedInSession & { token: string; factor: SecondFactor }> {
      const expired = () =>
        twoFactorProblems.signInExpired.create('the sign-in expired or is unknown; enter your password again');
      const pending = pendingToken.length <= 100 ? await pendingSignIns.find(pendingToken) : undefined;
      const user = pending ? await repository.findById(pending.userId) : undefined;
      if (!pending || !user || !user.totpSecret || user.passwordChangedAt.getTime() !== pending.passwordChangedAt) {
        if (pending) await pendingSignIns.drop(pendingToken);
        throw expired();
      }
      const account: ThrottleKey = ['code', JSON.stringify([address, user.id])];
      const fromAddress: ThrottleKey = ['address', address];
      const retryAfter = await attempts.take([account, fromAddress]);
      if (retryAfter > 0)
        throw usersProblems.signInLimited.create(`too many wrong codes; try again in ${retryAfter} s`, { retryAfter });
      const checked = await twoFactor().check(user.id, code.slice(0, 100));
      if (!checked) {
        events.emit('user.two_factor_failed', { userId: user.id, username: user.username, address });
        throw twoFactorProblems.codeInvalid.create('the code is wrong, expired or was used already');
      }
      await Promise.all([attempts.clear([account]), attempts.refund([fromAddress])]);
      // Used once: of two right codes sent at once (to two processes), one opens a session.
      if (!(await pendingSignIns.take(pendingToken))) throw expired();
      if (checked.factor === 'recovery-code')
        events.emit('user.recovery_code_used', {
          userId: user.id,
          username: user.username,
          address,
          remaining: checked.recoveryCodesLeft ?? 0,
        });
      return { ...(await openSession(user, address, userAgent)), factor: checked.factor };
    },

    /**
     * A session for a user the identity provider vouched for (single sign-on, oidc.service.ts): no
     * password and no local second factor (the provider's own apply). The user must exist.
     */
    async openSingleSignOnSession(
      userId: string,
      address: string,
      userAgent?: string,
    ): Promise<SignedInSession & { token: string }> {
      return openSession(await findUser(userId), address, userAgent, 'oidc');
    },
  };
}
