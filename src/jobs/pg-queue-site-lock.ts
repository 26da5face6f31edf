/**
 * Cluster mode (issue 34, docs/design/cluster-state.md "The queue: pg-boss"): one exclusive job per
 * site at a time across every queue and every worker process, as the runner's `siteTurns` does within
 * one process. pg-boss's singleton policies work per queue only, so the queue adapter (pg-queue.ts)
 * holds a PostgreSQL **session** advisory lock per site for the job's run, on a pool client of its own:
 *
 * - `pg_advisory_lock(SITE_LOCK_NAMESPACE, hashtext(site_id))`: two int4 keys, a space apart from
 *   pg-boss's own one-bigint transaction locks. Two sites whose ids hash alike only take turns.
 * - a worker that dies closes its connection, and PostgreSQL releases its locks at once;
 * - waiting for a lock is bounded by the job's expiry (`lock_timeout`): a job still waiting when pg-boss
 *   expires it gives up (the retry waits afresh) instead of running after its expiry;
 * - released on finish or throw; a client whose unlock fails is destroyed, not returned to the pool,
 *   so a lock it might still hold dies with its connection.
 *
 * `holdingLock` is the same for any other lock a process holds for a while (the queues' setup, pg-queue.ts).
 */
import type pg from 'pg';

/** The first key of every site lock (`0x5357_0001`: "SW", 1): sites' locks never meet another use's. */
export const SITE_LOCK_NAMESPACE = 0x5357_0001;

/** PostgreSQL's SQLSTATE for a lock wait that ran past `lock_timeout`. */
const LOCK_NOT_AVAILABLE = '55P03';

/** Thrown when a site's turn did not come before the job's expiry: the queue counts an attempt. */
class SiteTurnTimeout extends Error {
  constructor(siteId: string, waitedMs: number) {
    super(`site ${siteId} stayed busy for ${waitedMs} ms, past the job's expiry`);
    this.name = 'SiteTurnTimeout';
  }
}

/**
 * Runs `work` holding the site's lock (waiting for it at most `maxWaitMs`), on a client of `pool` held
 * until `work` settles and lent to `work` for its own queries. `work`'s result or error is passed through.
 */
export function inSiteTurn<T>(
  pool: pg.Pool,
  siteId: string,
  maxWaitMs: number,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  return holdingLock(pool, { namespace: SITE_LOCK_NAMESPACE, name: siteId }, work, {
    maxWaitMs,
    timedOut: (waitMs) => new SiteTurnTimeout(siteId, waitMs),
  });
}

/**
 * Runs `work` holding the session advisory lock `(namespace, hashtext(name))`, on a client of `pool` held until
 * `work` settles and lent to `work`; waiting for the lock as long as another session holds it, or at most
 * `maxWaitMs` (then `timedOut`'s error). `work`'s result or error is passed through. A client whose session may
 * still hold the lock (its unlock failed or found no lock) is destroyed, not returned to the pool.
 */
export async function holdingLock<T>(
  pool: pg.Pool,
  { namespace, name }: { namespace: number; name: string },
  work: (client: pg.PoolClient) => Promise<T>,
  wait?: { maxWaitMs: number; timedOut: (waitMs: number) => Error },
): Promise<T> {
  const client = await pool.connect();
  // Set when the session may be in an unknown state (a lock possibly held): the client is then destroyed.
  let destroy: Error | undefined;
  try {
    const waitMs = wait && Math.max(1, Math.floor(wait.maxWaitMs));
    try {
      // SET takes no parameters; the value is an integer computed here.
      if (waitMs !== undefined) await client.query(`SET lock_timeout = ${waitMs}`);
      await client.query('SELECT pg_advisory_lock($1, hashtext($2))', [namespace, name]);
      if (waitMs !== undefined) await client.query('RESET lock_timeout');
    } catch (error) {
      if (waitMs === undefined || (error as { code?: string }).code !== LOCK_NOT_AVAILABLE) {
        destroy = error as Error;
        throw error;
      }
      await client.query('RESET lock_timeout').catch((reset: Error) => (destroy = reset));
      throw wait!.timedOut(waitMs);
    }
    try {
      return await work(client);
    } finally {
      try {
        const { rows } = await client.query<{ unlocked: boolean }>(
          'SELECT pg_advisory_unlock($1, hashtext($2)) AS unlocked',
          [namespace, name],
        );
        if (rows[0]?.unlocked !== true) destroy = new Error(`the lock ${name} was not held at its release`);
      } catch (error) {
        destroy = error as Error;
      }
    }
  } finally {
    // release(error) destroys the client: its session, and any lock it still held, end with it.
    client.release(destroy ?? false);
  }
}
