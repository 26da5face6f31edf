/**
 * Cluster mode (issue 34, docs/design/cluster-state.md "A dead worker's runs"): a dead worker's queue jobs given
 * again within seconds, not after their queue's expiry (hours for backups). pg-boss 10.x has no heartbeat: a job
 * whose process died stays `active` until `expireInSeconds` has passed. Here PostgreSQL itself says which runs have
 * no live process:
 *
 * - **every run holds its run lock** (`runLockOf`), a session advisory lock keyed by its queue job's id, from before
 *   it looks at the job (before it waits for its site's turn) until its handler ends, on the one connection it holds
 *   for its run (pg-queue.ts). A process that dies closes its connections, and PostgreSQL releases its locks at once;
 * - **a sweep** in each working process, every few seconds, one process at a time, looks at the queues' `active` jobs
 *   and tries each one's run lock (`pg_try_advisory_xact_lock`): taken, no session holds it. One found free at two
 *   sweeps in a row (a period apart) is failed (`boss.fail`, which retries it as its queue says, or fails it for good
 *   past its `retryLimit`) and made due at once (its retry delay is for a failed attempt, not a dead worker's). Both
 *   in one transaction that holds the job's row and its run lock: a worker cannot take the lock between the look and
 *   the fail, and one that takes it after finds the attempt no longer active and does not run it;
 * - **the confirmation** covers the two instants a live run's job is `active` without its lock: between pg-boss
 *   marking it active and its handler taking the lock, and between its handler's end and pg-boss completing it. A
 *   job failed there anyway does no harm: the attempt does not run (it is no longer active once it holds the lock),
 *   or the retry finds the job's row ended and leaves it;
 * - **a run that loses its lock connection** while its process lives (PostgreSQL ended the session: a restart, a
 *   terminated backend, a network reset) is aborted by that process at once (pg-queue.ts), within the confirmation,
 *   so that it stops before the sweep gives its job to another worker.
 *
 * What stays with the expiry: a run whose process lives and holds its connection but makes no progress (stopped,
 * stuck), or one cut off by a silent network partition (its session's end is seen by PostgreSQL only when TCP gives
 * up). The expiry remains every run's upper bound.
 *
 * Why not a heartbeat table: a heartbeat judges a process dead by a clock (a paused process or a slow database looks
 * dead: a second run beside a live one), writes every few seconds per process, and needs a table and a migration.
 * A session's locks are released exactly when PostgreSQL ends the session: no clock, no writes, no table.
 */
import type PgBoss from 'pg-boss';
import type pg from 'pg';
import { SITE_LOCK_NAMESPACE, type LockKey } from './pg-queue-site-lock.js';

/** The first key of every run lock, beside the sites' locks and the queue's own (`0x5357_0003`). */
const RUN_LOCK_NAMESPACE = SITE_LOCK_NAMESPACE + 2;

/** The transaction lock that lets one process sweep at a time, in the queue's namespace (pg-queue.ts's setup lock). */
const SWEEP_LOCK = { namespace: SITE_LOCK_NAMESPACE + 1, name: 'run-sweep' };

/** The lock a run of the queue job `id` holds for as long as its handler runs, whichever attempt it is. */
export const runLockOf = (id: string): LockKey => ({ namespace: RUN_LOCK_NAMESPACE, name: id });

/** What the failed attempt's output says (pg-boss keeps it on the job). */
const SWEPT = { message: 'no process held this run any more (its worker died or lost its database session)' };

export interface RunSweepOptions {
  pool: pg.Pool;
  boss: PgBoss;
  schema: string;
  /** The queues whose active jobs are looked at. */
  queues: readonly string[];
  /** How long this process waits between sweeps; a run is given again once found free at two sweeps in a row. */
  intervalMs: number;
  /** Each job failed and given again (logged by the caller). */
  onSwept(job: SweptJob): void;
  onError(error: Error): void;
}

export interface SweptJob {
  queue: string;
  id: string;
  /** The attempt failed (0: the first). */
  retryCount: number;
  data: unknown;
}

export interface RunSweep {
  /** One sweep now (the timer's; tests). The jobs it failed. */
  sweep(): Promise<SweptJob[]>;
  start(): void;
  /** Stops the timer and waits for a sweep under way. */
  stop(): Promise<void>;
}

export function createRunSweep({
  pool,
  boss,
  schema,
  queues,
  intervalMs,
  onSwept,
  onError,
}: RunSweepOptions): RunSweep {
  /** Active attempts found free, by `id:retryCount`, and when first found so. */
  let free = new Map<string, number>();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  let stopped = false;

  const active = `SELECT name, id::text AS id, retry_count, data FROM ${schema}.job
    WHERE state = 'active' AND name = ANY($1::text[]) ORDER BY started_on FOR UPDATE SKIP LOCKED`;
  const dueNow = `UPDATE ${schema}.job SET start_after = now() WHERE name = $1 AND id = $2 AND state = 'retry'`;

  async function sweep(): Promise<SweptJob[]> {
    const client = await pool.connect();
    const swept: SweptJob[] = [];
    try {
      await client.query('BEGIN');
      const { rows: turn } = await client.query<{ ours: boolean }>(
        'SELECT pg_try_advisory_xact_lock($1, hashtext($2)) AS ours',
        [SWEEP_LOCK.namespace, SWEEP_LOCK.name],
      );
      // Another process sweeps at this instant: what this one found free before is looked at afresh next time.
      if (turn[0]?.ours) swept.push(...(await failFree(client)));
      else free = new Map();
      await client.query('COMMIT');
    } catch (error) {
      swept.length = 0;
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
    for (const job of swept) onSwept(job);
    return swept;
  }

  /** In the sweep's transaction: the active jobs whose run lock is free now and was at the sweep before, failed. */
  async function failFree(client: pg.PoolClient): Promise<SweptJob[]> {
    const now = Date.now();
    const found = new Map<string, number>();
    const confirmed: SweptJob[] = [];
    const { rows } = await client.query<{ name: string; id: string; retry_count: number; data: unknown }>(active, [
      queues,
    ]);
    for (const row of rows) {
      const { namespace, name } = runLockOf(row.id);
      // Taken until the transaction ends: no run starts on this attempt meanwhile.
      const { rows: lock } = await client.query<{ free: boolean }>(
        'SELECT pg_try_advisory_xact_lock($1, hashtext($2)) AS free',
        [namespace, name],
      );
      if (!lock[0]?.free) continue;
      const key = `${row.id}:${row.retry_count}`;
      const since = free.get(key) ?? now;
      found.set(key, since);
      // Free at the sweep before this one too (a timer's period apart, give or take the sweeps' own time).
      if (now - since < intervalMs / 2) continue;
      await boss.fail(row.name, row.id, SWEPT, { db: { executeSql: (text, values) => client.query(text, values) } });
      await client.query(dueNow, [row.name, row.id]);
      confirmed.push({ queue: row.name, id: row.id, retryCount: row.retry_count, data: row.data });
    }
    free = found;
    return confirmed;
  }

  return {
    sweep,
    start() {
      if (timer || stopped) return;
      // Each sweep scheduled once the one before ended: two of one process never overlap.
      const next = () => {
        timer = setTimeout(() => {
          running = sweep()
            .catch(onError)
            .finally(() => stopped || next());
        }, intervalMs);
        timer.unref();
      };
      next();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
