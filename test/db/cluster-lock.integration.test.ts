import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createClusterLock, type ReadWriteLock } from '../../src/db/cluster-lock.js';
import { createTestDatabase } from '../support/postgres.js';

/**
 * The readers–writer lock of a cluster's backup store (issue 34, src/backups/backup-store.ts) on the run's
 * PostgreSQL: each lock below is another process's. Backups and restores share the store; garbage collection
 * has it alone, waiting for every process's shared work to end, and shared work waits for it.
 */
describe('a lock shared by the processes of a cluster', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let processes: ReadWriteLock[];

  beforeAll(async () => {
    database = await createTestDatabase(inject('postgresUrl'), 'cluster-lock');
    processes = [0, 1, 2].map(() => createClusterLock({ url: database.url, key: 4, onError: () => undefined }));
  });
  afterAll(async () => {
    await database?.drop();
  });

  /** Waits until `count` advisory lock requests wait in PostgreSQL (not granted). */
  async function waitingRequests(count: number): Promise<void> {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      for (let poll = 0; poll < 200; poll++) {
        const { rows } = await client.query<{ n: number }>(
          "select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted",
        );
        if ((rows[0]?.n ?? 0) >= count) return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`${count} advisory lock requests never waited`);
    } finally {
      await client.end();
    }
  }

  /** Work that records when it began and ended, and ends when `release` is called. */
  function held(log: string[], name: string) {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let began!: () => void;
    const started = new Promise<void>((resolve) => (began = resolve));
    const work = async () => {
      log.push(`${name} began`);
      began();
      await released;
      log.push(`${name} ended`);
    };
    return { work, release, started };
  }

  it('runs shared work side by side, exclusive work alone, in the order asked', async () => {
    const log: string[] = [];
    const [a, b, c] = processes as [ReadWriteLock, ReadWriteLock, ReadWriteLock];
    const backup = held(log, 'backup');
    const restore = held(log, 'restore');
    const collection = held(log, 'collection');
    const later = held(log, 'later backup');

    const running = [a.shared(backup.work), b.shared(restore.work)];
    await Promise.all([backup.started, restore.started]);
    const collecting = c.exclusive(collection.work);
    // The collection's request reaches PostgreSQL (its own connection first: a loaded machine takes its time).
    await waitingRequests(1);
    // Asked after the collection: it waits behind it, though only shared work holds the lock.
    const waiting = a.shared(later.work);
    await waitingRequests(2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    // The two shared ones in either order: each took the lock on its own connection.
    expect([...log].sort()).toEqual(['backup began', 'restore began']);

    backup.release();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(log.slice(2)).toEqual(['backup ended']);
    restore.release();
    await collection.started;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(log.slice(2)).toEqual(['backup ended', 'restore ended', 'collection began']);

    collection.release();
    await later.started;
    later.release();
    await Promise.all([...running, collecting, waiting]);
    expect(log.slice(4)).toEqual(['collection began', 'collection ended', 'later backup began', 'later backup ended']);
  });
});
