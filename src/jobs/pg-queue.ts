/**
 * Cluster mode (issue 34): the lower half of the job queue adapter on PostgreSQL, over pg-boss 10.x
 * (docs/design/cluster-state.md, "The queue: pg-boss"; 10.x because it runs on the Node 20 the daemon
 * supports). Independent of our `jobs` table for now: the upper half (the runner's interface, job rows)
 * is a later step.
 *
 * - pg-boss in a schema of its own (`sitewarden_queue`), on a connection URL or a pool we pass;
 * - one queue per pool of today's runner, each with its retries, delay and expiry (`expireInSeconds`, found by the
 *   maintenance pass that runs every `maintenanceIntervalSeconds` in one of the instances: every run's upper bound);
 * - a dead worker's jobs given again within seconds: every run holds a run lock on the connection it holds for its
 *   run, and a sweep in the working instances fails the active jobs whose run lock no session holds (10.x has no
 *   heartbeat; pg-queue-sweep.ts). A run whose lock connection is lost is aborted, as it would be at its expiry;
 * - a pool's concurrency as that many pg-boss workers of one job each (10.x has no `localConcurrency`; a
 *   batch of N would settle its jobs together);
 * - one exclusive job per site across every queue and process: a session advisory lock held for the
 *   job's run (pg-queue-site-lock.ts), on the run lock's connection;
 * - `singletonKey` deduplicates only on a `stately` queue (at most one queued and one running job per
 *   key; on a `standard` queue 10.x ignores a key without a throttle period);
 * - cron schedules (minute slots, one job per slot whichever instances run, time zones).
 */
import PgBoss from 'pg-boss';
import pg from 'pg';
import { holdingLock, inSiteTurn, SITE_LOCK_NAMESPACE } from './pg-queue-site-lock.js';
import { createRunSweep, runLockOf, type SweptJob } from './pg-queue-sweep.js';

/** The schema pg-boss's tables live in, apart from the daemon's own. */
export const QUEUE_SCHEMA = 'sitewarden_queue';

/** The session lock an instance holds while it makes and sets its queues, in a namespace beside the sites' locks. */
const QUEUE_SETUP_LOCK = { namespace: SITE_LOCK_NAMESPACE + 1, name: 'queue-setup' };

/** How many workers (jobs at once) one process runs for a queue at most. */
const MAX_CONCURRENCY = 64;

export interface PgQueueSpec {
  /** The runner's pool name (`backups`, `audits`, …). */
  name: string;
  /** Jobs of this queue one process runs at once. */
  concurrency: number;
  /** Further attempts after a crash, a throw or an expiry (0: one attempt only). */
  retryLimit: number;
  retryDelaySeconds: number;
  /** A running job still unfinished this long after its start is failed (and retried): the run's upper bound. */
  expireInSeconds: number;
  /** `stately`: one queued and one running job per `singletonKey`; `standard` (default): keys not enforced. */
  policy?: 'standard' | 'stately';
}

export interface PgQueueJob<T> {
  id: string;
  queue: string;
  data: T;
  /** 0 on the first attempt. */
  retryCount: number;
  /**
   * Aborted when the job's expiry passes (pg-boss has then failed it: a retry may be running elsewhere), or when the
   * connection holding its run lock is lost (the sweep gives it to another worker).
   */
  signal: AbortSignal;
}

export interface PgQueueOptions {
  /** Either a connection URL (pg-boss and the site locks get pools of their own) or a pool to share. */
  connectionString?: string;
  pool?: pg.Pool;
  schema?: string;
  queues: readonly PgQueueSpec[];
  /** How often an instance looks for expired jobs (one instance a period does): the delay added to a dead worker's expiry. */
  maintenanceIntervalSeconds?: number;
  /** How often an idle worker looks for a job. */
  pollingIntervalSeconds?: number;
  /** The pause between two sweeps for a dead worker's runs (pg-queue-sweep.ts): found in one to two of these. */
  sweepIntervalSeconds?: number;
  /** Each job of a dead worker the sweep gave again (or failed for good, past its retries). */
  onSwept?(job: SweptJob): void;
  /** Whether this instance sends the jobs of cron schedules (one instance a period does). */
  schedule?: boolean;
  /** How often an instance looks at the cron schedules (1–45 s). */
  cronMonitorIntervalSeconds?: number;
  /** pg-boss's and the pools' errors (a failed poll, a lost idle connection): logged, never thrown. */
  onError(error: Error): void;
}

export interface PgQueue {
  start(): Promise<void>;
  /** Stops polling, waits up to `timeoutMs` for running jobs (the rest are failed, so retried), closes what it opened. */
  stop(timeoutMs?: number): Promise<void>;
  /** The job's id, or null when a `stately` queue refused it (its key has a job queued already). */
  send<T extends object>(
    queue: string,
    data: T,
    options?: { singletonKey?: string; id?: string },
  ): Promise<string | null>;
  /**
   * Runs the queue's jobs, `concurrency` at once, each holding its run lock; this instance sweeps for a dead
   * worker's runs from its first call on. A handler that throws fails the attempt (retried up to `retryLimit`).
   * `siteOf` names the job's site: the job then waits for the site's turn (the wait counts toward its expiry), a
   * null site does not.
   */
  work<T extends object>(
    queue: string,
    handler: (job: PgQueueJob<T>) => Promise<void>,
    options?: { siteOf?: (data: T) => string | null },
  ): Promise<void>;
  /** Of `values`, those some job still to run or running (created, waiting to retry, active) carries as `data[key]`. */
  liveData(key: string, values: readonly string[]): Promise<Set<string>>;
  /** Stops taking the queue's jobs in this instance; the jobs it is running go on to their end. */
  offWork(queue: string): Promise<void>;
  /** Sends `data` to `queue` on every `cron` slot (minute granularity), in `tz` (default UTC). One schedule per queue. */
  schedule(queue: string, cron: string, data?: object, options?: { tz?: string }): Promise<void>;
  unschedule(queue: string): Promise<void>;
}

export function createPgQueue(options: PgQueueOptions): PgQueue {
  const schema = options.schema ?? QUEUE_SCHEMA;
  const pollingIntervalSeconds = options.pollingIntervalSeconds ?? 2;
  const specs = new Map(options.queues.map((spec) => [spec.name, checked(spec)]));
  if (!options.pool && !options.connectionString) throw new Error('the queue needs a connection URL or a pool');
  const ownPool = !options.pool;
  // The site locks' clients; pg-boss's own queries share the pool passed in, or open one of their own.
  const lockPool =
    options.pool ??
    new pg.Pool({
      connectionString: options.connectionString,
      // A connection per run (its run lock and site lock), and the sweep's.
      max: [...specs.values()].reduce((sum, spec) => sum + spec.concurrency, 1),
      application_name: 'sitewarden-site-locks',
    });
  if (ownPool) lockPool.on('error', options.onError);
  const shared = options.pool;
  const boss = new PgBoss({
    ...(shared
      ? { db: { executeSql: (text: string, values: unknown[]) => shared.query(text, values) } }
      : { connectionString: options.connectionString, application_name: 'sitewarden-queue' }),
    schema,
    maintenanceIntervalSeconds: options.maintenanceIntervalSeconds ?? 60,
    pollingIntervalSeconds,
    schedule: options.schedule ?? true,
    cronMonitorIntervalSeconds: options.cronMonitorIntervalSeconds ?? 30,
  });
  boss.on('error', (error: Error) => options.onError(error));

  const specOf = (queue: string): PgQueueSpec => {
    const spec = specs.get(queue);
    if (!spec) throw new Error(`no queue ${queue} was declared`);
    return spec;
  };
  let stopped = false;
  const stillActive = `SELECT 1 FROM ${schema}.job WHERE name = $1 AND id = $2 AND state = 'active' AND retry_count = $3`;
  const sweep = createRunSweep({
    pool: lockPool,
    boss,
    schema,
    queues: [...specs.keys()],
    intervalMs: (options.sweepIntervalSeconds ?? 5) * 1000,
    onSwept: (job) => options.onSwept?.(job),
    onError: options.onError,
  });

  return {
    async start() {
      await boss.start();
      // One instance at a time: pg-boss makes a new queue's partition and attaches it to its job table, and two
      // instances doing so at once deadlock (a cluster's processes start together).
      await holdingLock(lockPool, QUEUE_SETUP_LOCK, async () => {
        for (const spec of specs.values()) {
          const settings = {
            policy: spec.policy ?? 'standard',
            retryLimit: spec.retryLimit,
            retryDelay: spec.retryDelaySeconds,
            expireInSeconds: spec.expireInSeconds,
          };
          // createQueue leaves an existing queue as it was: updateQueue brings its settings to these.
          await boss.createQueue(spec.name, { name: spec.name, ...settings });
          await boss.updateQueue(spec.name, { name: spec.name, ...settings });
        }
      });
    },

    async stop(timeoutMs = 30_000) {
      if (stopped) return;
      stopped = true;
      await sweep.stop();
      await boss.stop({ graceful: true, timeout: timeoutMs, wait: true, close: true });
      if (ownPool) await lockPool.end();
    },

    async send(queue, data, sendOptions = {}) {
      specOf(queue);
      return boss.send(queue, data, {
        ...(sendOptions.singletonKey !== undefined && { singletonKey: sendOptions.singletonKey }),
        ...(sendOptions.id !== undefined && { id: sendOptions.id }),
      });
    },

    async work(queue, handler, workOptions = {}) {
      const spec = specOf(queue);
      sweep.start();
      const runOne = async (job: PgBoss.JobWithMetadata<never>) => {
        const data = job.data as Parameters<typeof handler>[0]['data'];
        // node-postgres reads the `EXTRACT(epoch …)` pg-boss selects as a numeric string.
        const expireInMs = Number(job.expireInSeconds) * 1000;
        const expiresAt = Date.now() + expireInMs;
        const controller = new AbortController();
        const timer = setTimeout(() => controller.abort(new Error('the job expired')), expireInMs);
        timer.unref();
        const run = () => handler({ id: job.id, queue, data, retryCount: job.retryCount, signal: controller.signal });
        const siteId = workOptions.siteOf?.(data) ?? null;
        const wait = {
          maxWaitMs: expireInMs,
          timedOut: () => new Error('an earlier attempt held the job past its expiry'),
        };
        // Its session ended: the sweep gives the job to another worker, so this run stops now.
        const onLost = (error: Error) =>
          controller.abort(new Error(`the job's lock connection was lost (${error.message})`, { cause: error }));
        try {
          // Held first, for the whole run: an earlier attempt still stopping holds it too, and the sweep finds it held.
          await holdingLock(
            lockPool,
            runLockOf(job.id),
            async (client, doubt) => {
              // Failed meanwhile (expired while it waited, or swept): this attempt is over.
              const active = async () =>
                (await client.query(stillActive, [queue, job.id, job.retryCount])).rowCount === 1;
              if (!(await active())) return;
              if (siteId === null) return await run();
              await inSiteTurn(
                client,
                siteId,
                expiresAt - Date.now(),
                async () => {
                  if (await active()) await run();
                },
                doubt,
              );
            },
            { wait, onLost },
          );
        } finally {
          clearTimeout(timer);
        }
      };
      // One pg-boss worker per slot, one job each: each job completes or fails on its own.
      for (let slot = 0; slot < spec.concurrency; slot++) {
        await boss.work<never>(
          queue,
          { batchSize: 1, includeMetadata: true, pollingIntervalSeconds },
          async ([job]) => {
            if (job) await runOne(job);
          },
        );
      }
    },

    async liveData(key, values) {
      if (values.length === 0) return new Set();
      const { rows } = await lockPool.query<{ value: string }>(
        `SELECT DISTINCT data ->> $1 AS value FROM ${schema}.job
         WHERE state IN ('created', 'retry', 'active') AND data ->> $1 = ANY($2::text[])`,
        [key, values],
      );
      return new Set(rows.map((row) => row.value));
    },

    async offWork(queue) {
      specOf(queue);
      await boss.offWork(queue);
    },

    async schedule(queue, cron, data = {}, scheduleOptions = {}) {
      specOf(queue);
      await boss.schedule(queue, cron, data, { tz: scheduleOptions.tz ?? 'UTC' });
    },

    async unschedule(queue) {
      await boss.unschedule(queue);
    },
  };
}

function checked(spec: PgQueueSpec): PgQueueSpec {
  const { name, concurrency, retryLimit, retryDelaySeconds, expireInSeconds } = spec;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > MAX_CONCURRENCY)
    throw new Error(`queue ${name}: concurrency must be an integer from 1 to ${MAX_CONCURRENCY}, not ${concurrency}`);
  if (!Number.isInteger(retryLimit) || retryLimit < 0)
    throw new Error(`queue ${name}: retryLimit must be an integer ≥ 0`);
  if (!Number.isInteger(retryDelaySeconds) || retryDelaySeconds < 0)
    throw new Error(`queue ${name}: retryDelaySeconds must be an integer ≥ 0`);
  // pg-boss 10.x: at least a second, under 24 hours.
  if (!Number.isInteger(expireInSeconds) || expireInSeconds < 1 || expireInSeconds >= 24 * 3600)
    throw new Error(`queue ${name}: expireInSeconds must be an integer from 1 to 86399`);
  return spec;
}
