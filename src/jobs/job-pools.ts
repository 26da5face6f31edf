import type { Logger } from 'pino';
import type { JobKind } from './job-kind.js';
import { createSiteTaskQueue, type SiteTaskQueue } from './site-task-queue.js';

/**
 * Where the job runner's jobs run: one pool per pool name its kinds declare, each a site task
 * queue with the pool's concurrency (an exclusive job runs in its site's lane, one at a time;
 * others each in a lane of their own), and exclusive jobs of different pools taking turns on one
 * site; the jobs each pool has scheduled and not yet settled (queue depth, idle), and shutdown:
 * queued jobs left queued for the next start, running ones aborted or given their grace.
 */

interface Pool {
  queue: SiteTaskQueue;
  /** Jobs scheduled in this process and not yet settled (idle(), queue depth). */
  tracked: Set<Promise<unknown>>;
  stopped: boolean;
}

/**
 * A job taken by this process to run, from before its start is written: what cancel and shutdown reach it by.
 * Its row may still read `queued` meanwhile (its start being written, or held until its kind's first commit).
 */
export interface ActiveJob {
  kindName: string;
  kind: JobKind;
  controller: AbortController;
  done: Promise<unknown>;
}

/** Once shutdown aborts a job, how long it waits for the job to record itself before giving up on it. */
const ABORT_SETTLE_MS = 3_000;

export function createJobPools({
  logger,
  kindOf,
  active,
  execute,
}: {
  logger: Logger;
  kindOf: (name: string) => JobKind;
  active: ReadonlyMap<string, ActiveJob>;
  /** Runs the job now, in its pool's slot (and its site's turn); job-runner.ts. */
  execute: (id: string, kindName: string, kind: JobKind) => Promise<void>;
}) {
  const pools = new Map<string, Pool>();
  // Exclusive jobs of different pools (a backup, a site's updates) still take turns on one site.
  const siteTurns = new Map<string, Promise<unknown>>();

  function inSiteTurn(siteId: string, work: () => Promise<void>): Promise<void> {
    const turn = (siteTurns.get(siteId) ?? Promise.resolve()).then(work);
    const tail = turn.catch(() => undefined);
    siteTurns.set(siteId, tail);
    void tail.then(() => {
      if (siteTurns.get(siteId) === tail) siteTurns.delete(siteId);
    });
    return turn;
  }

  const poolsOf = (names: readonly string[]) => new Set(names.map((name) => pools.get(kindOf(name).pool.name)!));

  return {
    /** Makes the kind's pool, unless a kind registered before it made it. */
    add(kind: JobKind): void {
      if (!pools.has(kind.pool.name))
        pools.set(kind.pool.name, {
          queue: createSiteTaskQueue({ concurrency: kind.pool.concurrency }),
          tracked: new Set(),
          stopped: false,
        });
    },

    schedule(kindName: string, id: string, siteId: string | null): void {
      const kind = kindOf(kindName);
      const pool = pools.get(kind.pool.name)!;
      // A stopped pool leaves the job queued in the database for the next start.
      if (pool.stopped) return;
      const exclusiveSite = kind.exclusive ? siteId : null;
      const lane = exclusiveSite ? `site:${exclusiveSite}` : `job:${id}`;
      const turn = exclusiveSite && kind.siteTurn !== false ? exclusiveSite : null;
      const tracked = pool.queue
        .run(lane, () => (turn ? inSiteTurn(turn, () => execute(id, kindName, kind)) : execute(id, kindName, kind)))
        .catch((error: unknown) => logger.error({ err: error, jobId: id, kind: kindName }, 'job crashed'));
      pool.tracked.add(tracked);
      void tracked.finally(() => pool.tracked.delete(tracked));
    },

    /** Jobs of these kinds' pools scheduled and not yet settled (metrics, readiness). */
    queueDepth: (kindNames: readonly string[]): number =>
      [...poolsOf(kindNames)].reduce((sum, pool) => sum + pool.tracked.size, 0),

    /** Waits for the scheduled jobs of these kinds' pools (tests, shutdown). */
    async idle(kindNames: readonly string[]): Promise<void> {
      for (const pool of poolsOf(kindNames)) while (pool.tracked.size > 0) await Promise.all([...pool.tracked]);
    },

    /**
     * Shutdown of these kinds' pools: queued jobs stay queued for the next start; running ones of
     * `abort` kinds are aborted at once, those of `grace` kinds get `graceMs` to finish first.
     * False when a `grace` job had to be aborted or a job did not settle within `settleMs`.
     */
    async stop(
      kindNames: readonly string[],
      { graceMs, settleMs = ABORT_SETTLE_MS }: { graceMs: number; settleMs?: number },
    ): Promise<boolean> {
      for (const pool of poolsOf(kindNames)) {
        pool.stopped = true;
        void pool.queue.drain(0);
        // Jobs dropped from the queue stay queued in the database; nothing waits for them now.
        pool.tracked.clear();
      }
      const mine = [...active.values()].filter((entry) => kindNames.includes(entry.kindName));
      for (const entry of mine) if (entry.kind.atShutdown === 'abort') entry.controller.abort();
      const graceful = mine.filter((entry) => entry.kind.atShutdown === 'grace');
      const finished = await within(Promise.all(graceful.map((entry) => entry.done)), graceMs);
      for (const entry of mine) entry.controller.abort();
      const settled = await within(Promise.all(mine.map((entry) => entry.done)), settleMs);
      return finished && settled;
    },
  };
}

/** True if `work` settles within `ms` (any time at all when `ms` is infinite). */
async function within(work: Promise<unknown>, ms: number): Promise<boolean> {
  if (!Number.isFinite(ms)) return work.then(() => true);
  let timer: NodeJS.Timeout | undefined;
  const finished = await Promise.race([
    work.then(() => true),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
  ]);
  clearTimeout(timer);
  return finished;
}
