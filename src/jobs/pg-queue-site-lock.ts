/**
 * Cluster mode (issue 34, docs/design/cluster-state.md "The queue: pg-boss"): one exclusive job per
 * site at a time across every queue and every worker process, as the runner's `siteTurns` does within
 * one process. pg-boss's singleton policies work per queue only, so the queue adapter (pg-queue.ts)
 * holds a PostgreSQL **session** advisory lock per site for the job's run, on the client that holds the run's
 * own lock (pg-queue-sweep.ts `runLockOf`) for the whole run:
 *
 * - `pg_advisory_lock(SITE_LOCK_NAMESPACE, hashtext(site_id))`: two int4 keys, a space apart from
 *   pg-boss's own one-bigint transaction locks. Two sites whose ids hash alike only take turns.
 * - a worker that dies closes its connection, and PostgreSQL releases its locks at once;
 * - waiting for a lock is bounded by the job's expiry (`lock_timeout`): a job still waiting when pg-boss
 *   expires it gives up (the retry waits afresh) instead of running after its expiry;
 * - released on finish or throw; a client whose unlock fails is destroyed, not returned to the pool,
 *   so a lock it might still hold dies with its connection;
 * - a connection lost while held (PostgreSQL ended the session, and with it the locks) is told to the holder
 *   (`onLost`: the queue aborts the run), never left to crash the process as an unhandled `error` event.
 *
 * `holdingLock` is the same for any other lock a process holds for a while (a run's lock, the queues' setup).
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

/** A session advisory lock: `(namespace, hashtext(name))`. */
export interface LockKey {
  namespace: number;
  name: string;
}

/** How long a lock is waited for at most, and the error thrown when the wait ran out. */
interface LockWait {
  maxWaitMs: number;
  timedOut: (waitMs: number) => Error;
}

/**
 * Runs `work` holding the site's lock on `client`, a session that may hold other locks already (a job's run lock),
 * waiting for it at most `maxWaitMs`. `doubt` is told when the session may still hold the lock (its unlock failed or
 * found none): the client's owner then destroys it. `work`'s result or error is passed through.
 */
export function inSiteTurn<T>(
  client: pg.ClientBase,
  siteId: string,
  maxWaitMs: number,
  work: () => Promise<T>,
  doubt: (error: Error) => void,
): Promise<T> {
  return lockedOn(client, { namespace: SITE_LOCK_NAMESPACE, name: siteId }, work, doubt, {
    maxWaitMs,
    timedOut: (waitMs) => new SiteTurnTimeout(siteId, waitMs),
  });
}

/**
 * Runs `work` holding the session advisory lock `key`, on a client of `pool` held until `work` settles and lent to
 * `work` (with `doubt`, for the locks it takes on it: `inSiteTurn`); waiting for the lock as long as another session
 * holds it, or at most `wait.maxWaitMs` (then its error). `work`'s result or error is passed through. A client whose
 * session may still hold a lock (an unlock failed or found no lock) is destroyed, not returned to the pool. A
 * connection lost meanwhile (PostgreSQL ended the session, and released its locks) is told to `onLost` at once,
 * never thrown as an unhandled `error` event.
 */
export async function holdingLock<T>(
  pool: pg.Pool,
  key: LockKey,
  work: (client: pg.PoolClient, doubt: (error: Error) => void) => Promise<T>,
  { wait, onLost }: { wait?: LockWait; onLost?: (error: Error) => void } = {},
): Promise<T> {
  const client = await pool.connect();
  // Set when the session may be in an unknown state (a lock possibly held): the client is then destroyed.
  let destroy: Error | undefined;
  const doubt = (error: Error) => (destroy ??= error);
  const lost = (error: Error) => {
    destroy = error;
    onLost?.(error);
  };
  client.on('error', lost);
  try {
    return await lockedOn(client, key, () => work(client, doubt), doubt, wait);
  } finally {
    client.off('error', lost);
    // release(error) destroys the client: its session, and any lock it still held, end with it.
    client.release(destroy ?? false);
  }
}

/** Runs `work` holding `key` on `client`'s session, then releases it; `doubt` is told when the session may still hold it. */
async function lockedOn<T>(
  client: pg.ClientBase,
  { namespace, name }: LockKey,
  work: () => Promise<T>,
  doubt: (error: Error) => void,
  wait?: LockWait,
): Promise<T> {
  const waitMs = wait && Math.max(1, Math.floor(wait.maxWaitMs));
  try {
    // SET takes no parameters; the value is an integer computed here.
    if (waitMs !== undefined) await client.query(`SET lock_timeout = ${waitMs}`);
    await client.query('SELECT pg_advisory_lock($1, hashtext($2))', [namespace, name]);
    if (waitMs !== undefined) await client.query('RESET lock_timeout');
  } catch (error) {
    if (waitMs === undefined || (error as { code?: string }).code !== LOCK_NOT_AVAILABLE) {
      doubt(error as Error);
      throw error;
    }
    await client.query('RESET lock_timeout').catch(doubt);
    throw wait!.timedOut(waitMs);
  }
  try {
    return await work();
  } finally {
    try {
      const { rows } = await client.query<{ unlocked: boolean }>(
        'SELECT pg_advisory_unlock($1, hashtext($2)) AS unlocked',
        [namespace, name],
      );
      if (rows[0]?.unlocked !== true) doubt(new Error(`the lock ${name} was not held at its release`));
    } catch (error) {
      doubt(error as Error);
    }
  }
}
