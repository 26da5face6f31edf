/**
 * Cluster mode (issue 34): the job runner's queued jobs in PostgreSQL's queue (pg-queue.ts, pg-boss 10.x) instead
 * of this process's pools, so that any worker process may run them (docs/design/cluster-state.md, "The queue").
 * The runner stays the single writer of job rows: a job's row is written `queued` as on one machine, then sent to
 * its pool's queue; the process that takes it runs it through the runner's `execute`, which writes its start,
 * reports and end.
 *
 * - **One queue per pool**, with the pool's concurrency per process (capped), and retries and an expiry per pool.
 * - **A queue job's id is derived from the job's** and how often it started (`queueIdOf`): sending a job twice (a
 *   re-send of a row still queued) leaves one queue job, and a job queued again after its process died (its queue
 *   job completed or gone) is sent afresh.
 * - **Recovery at start** settles only the running rows the queue has no job for still to run or running (`unheld`:
 *   a job whose end could not be written); the others are another process's, or come back by the queue's retry.
 * - **Recovery while the processes run**: a `job-recovery` queue job on a schedule (every five minutes; one a slot
 *   whichever processes look), taken by one worker process, runs the runner's recovery over every kind with its
 *   retries (`recover.afterwards`), which recovery at start leaves out in a cluster (every process would retry).
 * - **A retry is a recovery.** Our kinds do not throw on a failure (an outcome is written, the queue job completes),
 *   so the queue retries only a job whose attempt expired or whose process died: within seconds of its death (the
 *   queue's sweep finds its run lock free, pg-queue-sweep.ts), at its pool's expiry at the latest. The retry's
 *   `execute` finds the row still `running` and settles it as start-up recovery does on one machine: queued again
 *   and run (a kind that resumes), or ended `interrupted` and its kind's retries made at once (`recover.afterwards`:
 *   an interrupted backup retried as a new one, as at a restart). A row already ended (the dead process wrote its
 *   end) is left as it is.
 * - **Locks per job run**, session advisory locks held for its run on one connection: its run lock (every run, keyed
 *   by its queue job: a retry never runs beside an earlier attempt still stopping, and the sweep finds a dead
 *   worker's run by it), and a turn (pg-queue-site-lock.ts): the site's for an exclusive kind (one exclusive job per
 *   site across every pool and process), the pool's and site's for one that takes turns within its pool only
 *   (`siteTurn: false`), none otherwise.
 */
import { createHash } from 'node:crypto';
import { allSettled, runsIn, stopActive, tracked, type JobDispatch, type JobDispatchFactory } from './job-dispatch.js';
import type { JobKind } from './job-kind.js';
import { createPgQueue, type PgQueue, type PgQueueOptions, type PgQueueSpec } from './pg-queue.js';

/** What a queue job carries: the job row it runs. */
interface QueuedJob {
  id: string;
  kind: string;
  siteId: string | null;
}

/** A pool's retries and expiry in the cluster's queue. */
export interface ClusterPoolSettings {
  /** Attempts after one that expired or whose process died: each settles the row left running, as its kind's recovery says. */
  retryLimit: number;
  retryDelaySeconds: number;
  /** A job still running this long after its start is aborted, and its next attempt settles it: the run's upper bound. */
  expireInSeconds: number;
}

const HOUR = 3_600;

/** Each pool's settings, unless given: the expiry is the longest a job of the pool may sensibly run. */
const CLUSTER_POOL_DEFAULTS: Readonly<Record<string, ClusterPoolSettings>> = {
  backups: { retryLimit: 3, retryDelaySeconds: 30, expireInSeconds: 6 * HOUR },
  'backup-checks': { retryLimit: 3, retryDelaySeconds: 30, expireInSeconds: 6 * HOUR },
  'target-prunes': { retryLimit: 3, retryDelaySeconds: 30, expireInSeconds: 6 * HOUR },
  audits: { retryLimit: 3, retryDelaySeconds: 10, expireInSeconds: HOUR / 4 },
  'safe-updates': { retryLimit: 3, retryDelaySeconds: 10, expireInSeconds: HOUR },
  'site-updates': { retryLimit: 3, retryDelaySeconds: 10, expireInSeconds: HOUR },
  'fleet-actions': { retryLimit: 3, retryDelaySeconds: 10, expireInSeconds: HOUR },
  'bulk-updates': { retryLimit: 3, retryDelaySeconds: 10, expireInSeconds: 23 * HOUR },
};
const OTHER_POOL: ClusterPoolSettings = { retryLimit: 3, retryDelaySeconds: 10, expireInSeconds: HOUR };

/** The queue of the cluster's scheduled recovery: one job a slot, one at a time in a process, never retried. */
export const RECOVERY_QUEUE: PgQueueSpec = {
  name: 'job-recovery',
  concurrency: 1,
  retryLimit: 0,
  retryDelaySeconds: 0,
  expireInSeconds: 600,
};

/** How long a running job must have run before recovery may find no process holds it (the processes' clocks NTP-close). */
const UNHELD_AFTER_MS = 60_000;

/** Jobs of one pool a process runs at once at most, whatever the pool's own concurrency (each is a polling worker in pg-boss 10.x). */
const MAX_CONCURRENCY = 16;

/**
 * The queue job's id for a job that started `attempts` times: a UUID (version 5 layout) derived from both, so that a
 * job is sent once however often, and once more when it is queued again after its process died.
 */
export function queueIdOf(jobId: string, attempts = 0): string {
  const hash = createHash('sha1')
    .update(attempts === 0 ? `sitewarden-job:${jobId}` : `sitewarden-job:${jobId}#${attempts}`)
    .digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The turn a job's run takes beside its run lock (see the file's header): none for a job that is not exclusive. */
function turnOf(kind: JobKind, job: QueuedJob): string | null {
  if (!kind.exclusive || job.siteId === null) return null;
  return kind.siteTurn === false ? `pool:${kind.pool.name}:${job.siteId}` : job.siteId;
}

/** The job a swept queue job carried, for its log line (the scheduled recovery's carries none). */
const pickJob = (data: unknown): { jobId?: string; kind?: string } => {
  const { id, kind } = (data ?? {}) as Partial<QueuedJob>;
  return { ...(id !== undefined && { jobId: id }), ...(kind !== undefined && { kind }) };
};

export interface PgJobDispatchOptions {
  /** The queue's connection and timings (pg-queue.ts); its queues are the runner's pools. */
  queue: Omit<PgQueueOptions, 'queues'>;
  /** Pools' settings over `CLUSTER_POOL_DEFAULTS`. */
  pools?: Readonly<Record<string, Partial<ClusterPoolSettings>>>;
  /** Jobs of one pool this process runs at once at most. */
  maxConcurrency?: number;
  /** When the cluster's recovery runs (cron, UTC; minute slots). */
  recoveryCron?: string;
}

interface Pool {
  name: string;
  concurrency: number;
  /** This process's runs of the pool's jobs, not yet settled. */
  runs: Set<Promise<unknown>>;
  working: boolean;
}

/** The runner's dispatch onto the cluster's queue: `createJobRunner({ dispatch: pgJobDispatch(options), … })`. */
export function pgJobDispatch(options: PgJobDispatchOptions): JobDispatchFactory {
  return ({ logger, kindOf, active, execute, kindNames, recover }): JobDispatch => {
    const pools = new Map<string, Pool>();
    const maxConcurrency = options.maxConcurrency ?? MAX_CONCURRENCY;
    let opening: Promise<PgQueue> | undefined;
    let closed = false;
    let recovering = false;

    /** The queue, started with a queue per pool registered so far; kinds register before the first job is sent. */
    function open(): Promise<PgQueue> {
      if (closed) return Promise.reject(new Error('the job queue is closed'));
      opening ??= (async () => {
        const queue = createPgQueue({
          onSwept: ({ data, queue: pool, retryCount }) =>
            logger.warn(
              { ...pickJob(data), pool, attempt: retryCount + 1 },
              'a job whose worker is gone (its run lock free) is given to another',
            ),
          ...options.queue,
          queues: [
            ...[...pools.values()].map(({ name, concurrency }) => ({
              name,
              concurrency,
              ...OTHER_POOL,
              ...CLUSTER_POOL_DEFAULTS[name],
              ...options.pools?.[name],
            })),
            RECOVERY_QUEUE,
          ],
        });
        try {
          await queue.start();
        } catch (error) {
          opening = undefined;
          await queue.stop(0).catch(() => undefined);
          throw error;
        }
        return queue;
      })();
      return opening;
    }

    const poolOf = (kindName: string): Pool => pools.get(kindOf(kindName).pool.name)!;
    const poolsOf = (kindNames: readonly string[]) => new Set(kindNames.map(poolOf));

    return {
      oneProcess: false,

      async unheld(jobs) {
        const queue = await open();
        const now = Date.now();
        const live = await queue.liveData(
          'id',
          jobs.map((job) => job.id),
        );
        // A job started only just now may have been sent after the queue was read.
        const startedBefore = now - UNHELD_AFTER_MS;
        return jobs.filter((job) => !live.has(job.id) && (job.startedAt?.getTime() ?? 0) < startedBefore);
      },

      add(kind) {
        if (pools.has(kind.pool.name)) return;
        if (opening) throw new Error(`pool ${kind.pool.name} was registered after the job queue opened`);
        pools.set(kind.pool.name, {
          name: kind.pool.name,
          concurrency: Math.max(1, Math.min(kind.pool.concurrency, maxConcurrency)),
          runs: new Set(),
          working: false,
        });
      },

      async schedule(kindName, id, siteId, attempts = 0) {
        const pool = poolOf(kindName);
        const job: QueuedJob = { id, kind: kindName, siteId };
        try {
          const queue = await open();
          // Null: the queue holds this job already (sent before, by this process or another).
          return (await queue.send(pool.name, job, { id: queueIdOf(id, attempts) })) !== null;
        } catch (error) {
          logger.error(
            { err: error, jobId: id, kind: kindName },
            'a job was not sent to the queue; its row stays queued',
          );
          return false;
        }
      },

      async work(workKinds) {
        const queue = await open();
        if (!recovering) {
          recovering = true;
          await queue.schedule(RECOVERY_QUEUE.name, options.recoveryCron ?? '*/5 * * * *');
          await queue.work(RECOVERY_QUEUE.name, async () => {
            await recover(kindNames(), { retries: true });
          });
        }
        for (const pool of poolsOf(workKinds)) {
          if (pool.working) continue;
          pool.working = true;
          await queue.work<QueuedJob>(
            pool.name,
            ({ data, signal, retryCount }) =>
              tracked(
                pool.runs,
                execute(data.id, data.kind, kindOf(data.kind), { signal, retried: retryCount > 0 }),
                logger,
                data,
              ),
            { siteOf: (data) => turnOf(kindOf(data.kind), data) },
          );
        }
      },

      queueDepth: (kindNames) => runsIn(poolsOf(kindNames)),
      idle: (kindNames) => allSettled(poolsOf(kindNames)),

      /** This process takes no more of these pools' jobs; queued ones wait in the queue for another process. */
      async stop(kindNames, stopOptions) {
        const queue = opening && (await opening.catch(() => undefined));
        for (const pool of poolsOf(kindNames))
          if (pool.working) {
            pool.working = false;
            await queue?.offWork(pool.name);
          }
        return stopActive(active, kindNames, stopOptions);
      },

      async close() {
        closed = true;
        const queue = opening && (await opening.catch(() => undefined));
        await queue?.stop();
      },
    };
  };
}
