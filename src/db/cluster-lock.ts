import pg from 'pg';
import { ADVISORY_LOCK_NAMESPACE } from './state-db.js';

/** What a readers–writer lock offers: work that may run beside other shared work, or alone. */
export interface ReadWriteLock {
  shared<T>(work: () => Promise<T>): Promise<T>;
  exclusive<T>(work: () => Promise<T>): Promise<T>;
}

/**
 * A readers–writer lock over every process of a cluster: PostgreSQL's session advisory lock
 * `(ADVISORY_LOCK_NAMESPACE, key)`, taken shared or exclusive on a connection of its own for as long as
 * the work runs (the pool's connections are shared, and a session lock would outlive its release). A
 * process that dies lets go with its connection. PostgreSQL queues a request behind a waiting one it
 * conflicts with, so an exclusive request is not starved by a stream of shared ones.
 */
export function createClusterLock({
  url,
  key,
  onError,
}: {
  url: string;
  key: number;
  /** The lock's connection failed while held (the server restarted): the lock is gone, the work is not stopped. */
  onError: (error: Error) => void;
}): ReadWriteLock {
  async function held<T>(statement: string, work: () => Promise<T>): Promise<T> {
    const client = new pg.Client({ connectionString: url });
    client.on('error', onError);
    await client.connect();
    try {
      await client.query(statement, [ADVISORY_LOCK_NAMESPACE, key]);
      return await work();
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  return {
    shared: (work) => held('select pg_advisory_lock_shared($1, $2)', work),
    exclusive: (work) => held('select pg_advisory_lock($1, $2)', work),
  };
}
