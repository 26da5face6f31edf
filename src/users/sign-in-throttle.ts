/**
 * Sign-in attempts counted per key with exponential backoff (sign-in.ts's SIGN_IN_THROTTLE): in the
 * process's memory on one machine (`createBackoffThrottle`), in the cluster's database when several API
 * processes share the counting (`signInThrottleFor`, issue 34; docs/design/cluster-state.md, "Sign-in
 * state"), so guesses spread over N processes get no more attempts than one process allows.
 */
import { and, eq, lte, sql } from 'drizzle-orm';
import type { StateDatabase } from '../db/state-db.js';
import type { Clock } from '../shared/clock.js';
import { signInAttempts } from './sign-in-state.pg-table.js';

/** Keys remembered at most; beyond it the forgotten ones go, then the oldest. */
const MAX_TRACKED_KEYS = 10_000;

export interface BackoffPolicy {
  /** Attempts without a wait. */
  free: number;
  /** The wait after the first attempt past `free`; it doubles with each further one, up to `maxMs`. */
  baseMs: number;
  maxMs: number;
  /** A key that made no attempt for this long starts afresh. */
  forgetAfterMs: number;
}

interface BackoffThrottle {
  /** Seconds until the key may try again, or 0 when it may now. */
  retryAfterSeconds(key: string): number;
  /** Counts an attempt now, before its outcome is known (so attempts running at once count too). */
  take(key: string): void;
  /** Gives back an attempt `take` counted: it was not judged (the hash pool was full) or it succeeded. */
  refund(key: string): void;
  /** Forgets the key's attempts (a successful sign-in of that account from that address). */
  clear(key: string): void;
  readonly trackedKeys: number;
}

/** The wait before the attempt after `count` of them: none for the free ones, then doubling up to `maxMs`. */
const waitAfter = (policy: BackoffPolicy, count: number) =>
  count < policy.free ? 0 : Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(count - policy.free, 40));

/**
 * Attempts per key with exponential backoff, in memory: `free` attempts, then one after
 * `baseMs`, the next after twice that, and so on up to one per `maxMs`. Counted when an attempt
 * starts, so a burst of parallel attempts is refused before any of them does work.
 */
function createBackoffThrottle({
  policy,
  clock,
  maxKeys = MAX_TRACKED_KEYS,
}: {
  policy: BackoffPolicy;
  clock: Clock;
  maxKeys?: number;
}): BackoffThrottle {
  const attempts = new Map<string, { count: number; lastAt: number }>();

  function current(key: string, now: number) {
    const entry = attempts.get(key);
    if (entry && now - entry.lastAt >= policy.forgetAfterMs) {
      attempts.delete(key);
      return undefined;
    }
    return entry;
  }

  function makeRoom(now: number): void {
    for (const [key, entry] of attempts) if (now - entry.lastAt >= policy.forgetAfterMs) attempts.delete(key);
    // Still full: forget the oldest (Map keeps insertion order).
    while (attempts.size >= maxKeys) attempts.delete(attempts.keys().next().value!);
  }

  return {
    retryAfterSeconds(key) {
      if (attempts.size === 0) return 0;
      const now = clock.now().getTime();
      const entry = current(key, now);
      if (!entry) return 0;
      const left = entry.lastAt + waitAfter(policy, entry.count) - now;
      return left > 0 ? Math.max(1, Math.ceil(left / 1000)) : 0;
    },
    take(key) {
      const now = clock.now().getTime();
      const entry = current(key, now);
      if (entry) {
        entry.count++;
        entry.lastAt = now;
        return;
      }
      if (attempts.size >= maxKeys) makeRoom(now);
      attempts.set(key, { count: 1, lastAt: now });
    },
    refund(key) {
      const entry = attempts.get(key);
      if (!entry) return;
      entry.count--;
      if (entry.count <= 0) attempts.delete(key);
    },
    clear(key) {
      attempts.delete(key);
    },
    get trackedKeys() {
      return attempts.size;
    },
  };
}

/**
 * The sign-in's throttles: `password` per account and address, `address` per address over every account,
 * `code` (the second factor's) per account and address.
 */
type ThrottleName = (typeof signInAttempts.throttle.enumValues)[number];
export type ThrottleKey = readonly [throttle: ThrottleName, key: string];
export type SignInPolicies = Readonly<Record<ThrottleName, BackoffPolicy>>;

/** An attempt counted against several throttles at once (sign-in.ts). */
export interface SignInThrottle {
  /**
   * Counts an attempt against every key and answers 0 when none of them must wait; otherwise counts
   * nothing and answers the seconds until they may all try. The memory's answers at once.
   */
  take(keys: readonly ThrottleKey[]): number | Promise<number>;
  /** Gives back an attempt `take` counted: it was not judged (the hash pool was full) or it succeeded. */
  refund(keys: readonly ThrottleKey[]): void | Promise<void>;
  /** Forgets the keys' attempts (a successful sign-in of that account from that address). */
  clear(keys: readonly ThrottleKey[]): void | Promise<void>;
}

/** The sign-in's throttles for the state database: shared in its rows in a cluster (PostgreSQL), else in memory. */
export function signInThrottleFor({
  state,
  policies,
  clock,
}: {
  state: Pick<StateDatabase, 'dialect' | 'run'> | undefined;
  policies: SignInPolicies;
  clock: Clock;
}): SignInThrottle {
  return state?.dialect === 'postgres' ? sharedThrottle(state, policies, clock) : memoryThrottle(policies, clock);
}

/** One backoff throttle a name; a check of every key, then a count of each, in one synchronous step. */
function memoryThrottle(policies: SignInPolicies, clock: Clock): SignInThrottle {
  const throttles = {
    password: createBackoffThrottle({ policy: policies.password, clock }),
    address: createBackoffThrottle({ policy: policies.address, clock }),
    code: createBackoffThrottle({ policy: policies.code, clock }),
  };
  return {
    take(keys) {
      const retryAfter = Math.max(...keys.map(([name, key]) => throttles[name].retryAfterSeconds(key)));
      if (retryAfter > 0) return retryAfter;
      for (const [name, key] of keys) throttles[name].take(key);
      return 0;
    },
    refund(keys) {
      for (const [name, key] of keys) throttles[name].refund(key);
    },
    clear(keys) {
      for (const [name, key] of keys) throttles[name].clear(key);
    },
  };
}

/** How often a process prunes the forgotten rows of `sign_in_attempts` (on its next attempt). */
const PRUNE_EVERY_MS = 60_000;

/**
 * The attempts in `sign_in_attempts`, counted by every API process. A key's count is taken with one
 * conditional upsert (counted only where its wait is over, as the memory's check and count), so attempts
 * made at once on several processes are each counted, and those past the limit refused, before any hash.
 * The keys of one attempt are taken at once; one refused gives the others back. The processes' clocks
 * are assumed NTP-close (a second's skew moves a wait by a second).
 */
function sharedThrottle(state: Pick<StateDatabase, 'run'>, policies: SignInPolicies, clock: Clock): SignInThrottle {
  const table = signInAttempts;
  const forgetMs = Math.max(...Object.values(policies).map((policy) => policy.forgetAfterMs));
  let prunedAt = 0;
  const byKey = ([name, key]: ThrottleKey) => and(eq(table.throttle, name), eq(table.key, key));

  /** Counts the attempt when the key's wait is over: true; false (nothing counted) when it must wait. */
  async function takeOne([name, key]: ThrottleKey, now: Date): Promise<boolean> {
    const policy = policies[name];
    const forgotten = sql`${table.lastAt} <= ${new Date(now.getTime() - policy.forgetAfterMs)}`;
    const waitMs = sql`case when ${table.attempts} < ${policy.free} then 0
      else least(${policy.maxMs}::float8, ${policy.baseMs}::float8 * power(2, least(${table.attempts} - ${policy.free}, 40))) end`;
    const taken = await state.run((db) =>
      db
        .insert(table)
        .values({ throttle: name, key, attempts: 1, lastAt: now })
        .onConflictDoUpdate({
          target: [table.throttle, table.key],
          set: { attempts: sql`case when ${forgotten} then 1 else ${table.attempts} + 1 end`, lastAt: now },
          setWhere: sql`${forgotten} or ${table.lastAt} + ${waitMs} * interval '1 millisecond' <= ${now}`,
        })
        .returning({ attempts: table.attempts }),
    );
    return taken.length > 0;
  }

  /** Seconds until the key may try again (at least 1: it was just refused). */
  async function retryAfterSeconds(throttleKey: ThrottleKey, now: number): Promise<number> {
    const [row] = await state.run((db) => db.select().from(table).where(byKey(throttleKey)));
    const left = row ? row.lastAt.getTime() + waitAfter(policies[throttleKey[0]], row.attempts) - now : 0;
    return Math.max(1, Math.ceil(left / 1000));
  }

  const api: SignInThrottle = {
    async take(keys) {
      const now = clock.now();
      if (now.getTime() - prunedAt >= PRUNE_EVERY_MS) {
        prunedAt = now.getTime();
        await state.run((db) => db.delete(table).where(lte(table.lastAt, new Date(now.getTime() - forgetMs))));
      }
      const taken = await Promise.all(keys.map((key) => takeOne(key, now)));
      if (taken.every(Boolean)) return 0;
      await api.refund(keys.filter((_, i) => taken[i]));
      const waits = await Promise.all(
        keys.filter((_, i) => !taken[i]).map((key) => retryAfterSeconds(key, now.getTime())),
      );
      return Math.max(...waits);
    },
    async refund(keys) {
      await Promise.all(
        keys.map((key) =>
          state.run((db) =>
            db
              .update(table)
              .set({ attempts: sql`greatest(${table.attempts} - 1, 0)` })
              .where(byKey(key)),
          ),
        ),
      );
    },
    async clear(keys) {
      await Promise.all(keys.map((key) => state.run((db) => db.delete(table).where(byKey(key)))));
    },
  };
  return api;
}
