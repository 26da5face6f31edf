/**
 * The API's failed authentications per client address (auth.ts refuses an address past its limit): in
 * the process's memory on one machine, in the cluster's database when several API processes serve the API
 * (issue 34; docs/design/cluster-state.md, "Sign-in state"), so an address gets its limit once whichever
 * processes its requests reach.
 */
import { lte, sql } from 'drizzle-orm';
import type { StateDatabase } from '../db/state-db.js';
import type { Clock } from '../shared/clock.js';
import { authFailures } from './auth-failures.pg-table.js';

const AUTH_FAILURE_WINDOW_MS = 60_000;
/** Addresses remembered at most; beyond it the expired ones go, then the oldest. */
const MAX_TRACKED_ADDRESSES = 10_000;

export interface AuthFailureLimiter {
  /**
   * A failed authentication from the address: counted, answering 0, while the address is under its limit;
   * past it, answering the seconds until its window ends. The memory's answers at once.
   */
  countFailure(address: string): number | Promise<number>;
}

/** The memory's limiter, and what its own tests read. */
export interface MemoryAuthFailureLimiter extends AuthFailureLimiter {
  /** Seconds until the address may try again, or 0 when it is not limited. */
  retryAfterSeconds(address: string): number;
  /** Counts a failed authentication from the address. */
  fail(address: string): void;
  readonly trackedAddresses: number;
}

/** The limiter for the state database: shared in its rows in a cluster (PostgreSQL), else in memory. */
export function authFailureLimiterFor({
  state,
  limit,
  clock,
}: {
  state: Pick<StateDatabase, 'dialect' | 'run'>;
  limit: number;
  clock: Clock;
}): AuthFailureLimiter {
  return state.dialect === 'postgres'
    ? createSharedAuthFailureLimiter({ state, limit, clock })
    : createAuthFailureLimiter({ limit, clock });
}

/**
 * Failed authentications per client address in fixed one-minute windows, in memory. Once an
 * address reaches `limit` failures in a window, its requests without a valid token are refused
 * until the window ends; requests with a valid token are never refused (a flood from a shared
 * address must not lock out the valid clients behind it).
 */
export function createAuthFailureLimiter({
  limit,
  clock,
  windowMs = AUTH_FAILURE_WINDOW_MS,
  maxAddresses = MAX_TRACKED_ADDRESSES,
}: {
  limit: number;
  clock: Clock;
  windowMs?: number;
  maxAddresses?: number;
}): MemoryAuthFailureLimiter {
  const windows = new Map<string, { startedAt: number; failures: number }>();

  function current(address: string, now: number) {
    const window = windows.get(address);
    if (window && now - window.startedAt >= windowMs) {
      windows.delete(address);
      return undefined;
    }
    return window;
  }

  function makeRoom(now: number): void {
    for (const [address, window] of windows) if (now - window.startedAt >= windowMs) windows.delete(address);
    // Still full of live windows: forget the oldest (Map keeps insertion order).
    while (windows.size >= maxAddresses) windows.delete(windows.keys().next().value!);
  }

  const limiter: MemoryAuthFailureLimiter = {
    countFailure(address) {
      const retryAfter = limiter.retryAfterSeconds(address);
      if (retryAfter === 0) limiter.fail(address);
      return retryAfter;
    },
    retryAfterSeconds(address) {
      if (windows.size === 0) return 0;
      const now = clock.now().getTime();
      const window = current(address, now);
      if (!window || window.failures < limit) return 0;
      return Math.max(1, Math.ceil((window.startedAt + windowMs - now) / 1000));
    },
    fail(address) {
      const now = clock.now().getTime();
      const window = current(address, now);
      if (window) {
        window.failures++;
        return;
      }
      if (windows.size >= maxAddresses) makeRoom(now);
      windows.set(address, { startedAt: now, failures: 1 });
    },
    get trackedAddresses() {
      return windows.size;
    },
  };
  return limiter;
}

/**
 * The same windows in `auth_failures`, counted by every API process: a failure is one upsert that starts
 * the address's window afresh once a minute has passed, or counts it (up to one past the limit), and answers
 * the count, so failures sent at once to several processes are each counted. Rows of ended windows are
 * pruned on write, once a minute a process.
 */
function createSharedAuthFailureLimiter({
  state,
  limit,
  clock,
  windowMs = AUTH_FAILURE_WINDOW_MS,
}: {
  state: Pick<StateDatabase, 'run'>;
  limit: number;
  clock: Clock;
  windowMs?: number;
}): AuthFailureLimiter {
  const table = authFailures;
  let prunedAt = 0;
  return {
    async countFailure(address) {
      const now = clock.now();
      const windowEnded = new Date(now.getTime() - windowMs);
      if (now.getTime() - prunedAt >= windowMs) {
        prunedAt = now.getTime();
        await state.run((db) => db.delete(table).where(lte(table.windowStartedAt, windowEnded)));
      }
      const afresh = sql`${table.windowStartedAt} <= ${windowEnded}`;
      const rows = await state.run((db) =>
        db
          .insert(table)
          .values({ address, windowStartedAt: now, failures: 1 })
          .onConflictDoUpdate({
            target: table.address,
            set: {
              failures: sql`case when ${afresh} then 1 else least(${table.failures} + 1, ${limit + 1}) end`,
              windowStartedAt: sql`case when ${afresh} then ${now} else ${table.windowStartedAt} end`,
            },
          })
          .returning(),
      );
      const counted = rows[0]!;
      if (counted.failures <= limit) return 0;
      return Math.max(1, Math.ceil((counted.windowStartedAt.getTime() + windowMs - now.getTime()) / 1000));
    },
  };
}
