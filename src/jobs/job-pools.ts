import { allSettled, runsIn, stopActive, tracked, type JobDispatch, type JobDispatchParts } from './job-dispatch.js';
import type { JobKind } from './job-kind.js';
import { createSiteTaskQueue, type SiteTaskQueue } from './site-task-queue.js';

/**
 * Where the job runner's jobs run on one machine (its `JobDispatch`, job-dispatch.ts): one pool per
 * pool name its kinds declare, each a site task queue with the pool's concurrency (an exclusive job runs in its site's lane, one at a time;
 * others each in a lane of their own), and exclusive jobs of different pools taking turns on one
 * site; the jobs each pool has scheduled and not yet settled (queue depth, idle), and shutdown:
 * queued jobs left queued for the next start, running ones aborted or given their grace.
 */

interface Pool {
  queue: SiteTaskQueue;
  /** Jobs scheduled in this process and not yet settled (idle(), queue depth). */
  runs: Set<Promise<unknown>>;
  stopped: boolean;
}

export function createJobPools({ logger, kindOf, active, execute }: JobDispatchParts): JobDispatch {
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
    oneProcess: true,
    // At start nothing runs yet: every running row was left by the last process.
    unheld: async (jobs) => [...jobs],
    // Every job scheduled runs in this process.
    work: async () => undefined,
    close: async () => undefined,

    add(kind: JobKind): void {
      if (!pools.has(kind.pool.name))
        pools.set(kind.pool.name, {
          queue: createSiteTaskQueue({ concurrency: kind.pool.concurrency }),
          runs: new Set(),
          stopped: false,
        });
    },

    async schedule(kindName: string, id: string, siteId: string | null): Promise<boolean> {
      const kind = kindOf(kindName);
      const pool = pools.get(kind.pool.name)!;
      // A stopped pool leaves the job queued in the database for the next start.
      if (pool.stopped) return false;
      const exclusiveSite = kind.exclusive ? siteId : null;
      const lane = exclusiveSite ? `site:${exclusiveSite}` : `job:${id}`;
      const turn = exclusiveSite && kind.siteTurn !== false ? exclusiveSite : null;
      const run = () => execute(id, kindName, kind);
      void tracked(pool.runs, pool.queue.run(lane, turn ? () => inSiteTurn(turn, run) : run), logger, {
        id,
        kind: kindName,
      });
      return true;
    },

    queueDepth: (kindNames) => runsIn(poolsOf(kindNames)),
    idle: (kindNames) => allSettled(poolsOf(kindNames)),

    /** Queued jobs stay queued in the database for the next start; running ones are stopped (job-dispatch.ts). */
    async stop(kindNames, options): Promise<boolean> {
      for (const pool of poolsOf(kindNames)) {
        pool.stopped = true;
        void pool.queue.drain(0);
        // Jobs dropped from the queue stay queued in the database; nothing waits for them now.
        pool.runs.clear();
      }
      return stopActive(active, kindNames, options);
    },
  };
}
