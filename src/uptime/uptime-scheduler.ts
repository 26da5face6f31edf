import PQueue from 'p-queue';
import type { Clock } from '../shared/clock.js';
import { latestSlotAt, siteOffsetMs } from '../jobs/spread.js';
/**
 * Decides when each site is probed. Every site has a fixed offset in its interval (a hash of
 * its id), so one interval's probes are spread across it and a restart keeps the same
 * schedule: every site is probed again within one interval. A tick (every second) takes what
 * falls due before the next tick and queues each at its due time (in 100 ms slices); a bounded
 * queue runs them.
 */
export interface UptimeScheduler {
  /**
   * Adds a site or changes its interval. `from` (cluster mode: a shard taken over where its last holder's
   * claim ended, uptime-leases.ts): its first slot is the first at or after `from`, or, when that has
   * passed already, one probe now for the latest slot passed (late, once, however many were missed).
   */
  upsert(siteId: string, intervalMs: number, from?: number): void;
  remove(siteId: string): void;
  has(siteId: string): boolean;
  /** Probes the site again at `at` (a quick re-check), before its next regular slot. */
  recheck(siteId: string, at: number): void;
  nextDueAt(siteId: string): number | undefined;
  /**
   * Queues every probe due before now + horizonMs, each started at its due time. `until` (instead of
   * now + horizonMs) and `accept` (cluster mode, sharded-probes.ts): the probes due before a claimed
   * instant, of the sites whose shard is claimed; the others stay due.
   */
  tick(horizonMs?: number, options?: { until?: number; accept?: (siteId: string) => boolean }): number;
  /** Runs every probe due now and waits for them (tests drive time with a fake clock). */
  runDue(): Promise<number>;
  readonly pending: number;
  stop(): Promise<void>;
}

interface Target {
  intervalMs: number;
  offsetMs: number;
  nextDueAt: number;
  running: boolean;
  /** Changes when the site is removed or re-added, so stale timers do nothing. */
  generation: number;
}

/** Probes due within one slice start together. */
const START_SLICE_MS = 100;

/** The first slot of the site's schedule at or after `from`. */
export function nextSlot(from: number, intervalMs: number, offsetMs: number): number {
  const base = Math.floor((from - offsetMs) / intervalMs) * intervalMs + offsetMs;
  return base >= from ? base : base + intervalMs;
}

export function createUptimeScheduler({
  clock,
  concurrency,
  probe,
  onStart,
}: {
  clock: Clock;
  concurrency: number;
  probe: (siteId: string, dueAt: number) => Promise<void>;
  /** Called as each probe starts with how late it is (ms); the benchmark measures lag with it. */
  onStart?: (lagMs: number) => void;
}): UptimeScheduler {
  const queue = new PQueue({ concurrency });
  const targets = new Map<string, Target>();
  const timers = new Set<NodeJS.Timeout>();
  let generations = 0;
  /** Probes whose slice timer has not fired yet. */
  let waiting = 0;
  let stopped = false;

  function enqueue(siteId: string, target: Target, dueAt: number): Promise<void> {
    const generation = target.generation;
    return queue.add(async () => {
      const current = targets.get(siteId);
      if (stopped || current?.generation !== generation || current.running) return;
      current.running = true;
      onStart?.(clock.now().getTime() - dueAt);
      try {
        await probe(siteId, dueAt);
      } finally {
        current.running = false;
      }
    });
  }

  /**
   * Every slot due before `until` of the sites accepted. Slots passed while nothing probed them (a stalled
   * process, ticks late under load) come once, late: only the latest of them. Then every slot before
   * `until` is taken, not one a site: in cluster mode a tick's claim covers them all, and a slot left for
   * the next tick would be lost if the shard changed hands meanwhile.
   */
  function collect(
    until: number,
    accept?: (siteId: string) => boolean,
  ): { siteId: string; target: Target; dueAt: number }[] {
    const now = clock.now().getTime();
    const due: { siteId: string; target: Target; dueAt: number }[] = [];
    for (const [siteId, target] of targets) {
      if (target.nextDueAt >= until || (accept && !accept(siteId))) continue;
      const { intervalMs, offsetMs } = target;
      // (latestSlotAt's arithmetic, without a Date for each site)
      const latest = Math.floor((now - offsetMs) / intervalMs) * intervalMs + offsetMs;
      if (target.nextDueAt < latest) target.nextDueAt = latest;
      while (target.nextDueAt < until) {
        due.push({ siteId, target, dueAt: target.nextDueAt });
        target.nextDueAt = nextSlot(target.nextDueAt + 1, intervalMs, offsetMs);
      }
    }
    return due;
  }

  return {
    upsert(siteId, intervalMs, from) {
      const existing = targets.get(siteId);
      const now = clock.now().getTime();
      const firstFrom = (offsetMs: number) => {
        const first = nextSlot(from ?? now, intervalMs, offsetMs);
        return first >= now ? first : latestSlotAt(offsetMs, intervalMs, new Date(now)).getTime();
      };
      if (existing && existing.intervalMs === intervalMs) {
        // Still scheduled here (a shard taken back while its probes already queued here still run): the
        // queued ones stay, and the slots another holder took since are skipped.
        if (from !== undefined && existing.nextDueAt < from) existing.nextDueAt = firstFrom(existing.offsetMs);
        return;
      }
      const offsetMs = siteOffsetMs(siteId, intervalMs, 1);
      const nextDueAt = firstFrom(offsetMs);
      targets.set(siteId, {
        intervalMs,
        offsetMs,
        nextDueAt,
        running: existing?.running ?? false,
        generation: ++generations,
      });
    },
    remove: (siteId) => void targets.delete(siteId),
    has: (siteId) => targets.has(siteId),
    recheck(siteId, at) {
      const target = targets.get(siteId);
      if (target && at < target.nextDueAt) target.nextDueAt = at;
    },
    nextDueAt: (siteId) => targets.get(siteId)?.nextDueAt,
    tick(horizonMs = 1000, { until, accept } = {}) {
      if (stopped) return 0;
      const now = clock.now().getTime();
      const due = collect(until ?? now + horizonMs, accept);
      // Probes start in slices of START_SLICE_MS: one timer and one wake-up for each slice's
      // probes instead of one per probe, for at most a slice of lag.
      const slices = new Map<number, typeof due>();
      for (const item of due) {
        const slice = Math.max(0, Math.ceil((item.dueAt - now) / START_SLICE_MS) * START_SLICE_MS);
        if (slice === 0) {
          void enqueue(item.siteId, item.target, item.dueAt);
          continue;
        }
        const batch = slices.get(slice);
        if (batch) batch.push(item);
        else slices.set(slice, [item]);
      }
      for (const [delay, batch] of slices) {
        waiting += batch.length;
        const timer = setTimeout(() => {
          timers.delete(timer);
          waiting -= batch.length;
          for (const { siteId, target, dueAt } of batch) void enqueue(siteId, target, dueAt);
        }, delay);
        timers.add(timer);
      }
      return due.length;
    },
    async runDue() {
      const due = collect(clock.now().getTime() + 1);
      await Promise.all(due.map(({ siteId, target, dueAt }) => enqueue(siteId, target, dueAt)));
      return due.length;
    },
    get pending() {
      return queue.size + queue.pending + waiting;
    },
    async stop() {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      waiting = 0;
      queue.clear();
      await queue.onIdle();
    },
  };
}
