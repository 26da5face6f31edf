import type { Clock } from '../shared/clock.js';

const AUTH_FAILURE_WINDOW_MS = 60_000;
/** Addresses remembered at most; beyond it the expired ones go, then the oldest. */
const MAX_TRACKED_ADDRESSES = 10_000;

export interface AuthFailureLimiter {
  /** Seconds until the address may try again, or 0 when it is not limited. */
  retryAfterSeconds(address: string): number;
  /** Counts a failed authentication from the address. */
  fail(address: string): void;
  readonly trackedAddresses: number;
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
}): AuthFailureLimiter {
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

  return {
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
}
