import type { Clock } from '../shared/clock.js';

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

export interface BackoffThrottle {
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

/**
 * Attempts per key with exponential backoff, in memory: `free` attempts, then one after
 * `baseMs`, the next after twice that, and so on up to one per `maxMs`. Counted when an attempt
 * starts, so a burst of parallel attempts is refused before any of them does work.
 */
export function createBackoffThrottle({
  policy,
  clock,
  maxKeys = MAX_TRACKED_KEYS,
}: {
  policy: BackoffPolicy;
  clock: Clock;
  maxKeys?: number;
}): BackoffThrottle {
  const attempts = new Map<string, { count: number; lastAt: number }>();

  const waitAfter = (count: number) =>
    count < policy.free ? 0 : Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(count - policy.free, 40));

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
      const left = entry.lastAt + waitAfter(entry.count) - now;
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
