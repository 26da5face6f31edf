import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { holdingLock, inSiteTurn, SITE_LOCK_NAMESPACE } from '../../src/jobs/pg-queue-site-lock.js';
import { jobRow, overlaps, runs, send, sleep, spec, useQueueHarness, waitFor } from './fixtures/pg-queue-harness.js';
import { recordingHandler, siteOf } from './fixtures/pg-queue-runs.js';

/**
 * One exclusive job per site across the cluster-mode queues and worker processes
 * (src/jobs/pg-queue-site-lock.ts): a session advisory lock per site, read back in `pg_locks`, released
 * at once when its process is killed, its wait bounded by the job's expiry.
 */
const { freshDatabase, startQueue, startWorker } = useQueueHarness();

/** The site locks held or awaited in the test's own database (pg_locks is the whole server's: other files run beside). */
const SITE_LOCKS_HERE = `SELECT granted FROM pg_locks
  WHERE locktype = 'advisory' AND classid = $1::oid
    AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`;

describe('one exclusive job per site across queues and processes (the advisory lock)', () => {
  it(
    'never runs two jobs of one site at once on different queues, and runs other sites’ jobs meanwhile',
    { timeout: 90_000 },
    async () => {
      const { url, pool } = await freshDatabase('queue-site-turns');
      const specs = [spec('backups', { concurrency: 2 }), spec('site-updates', { concurrency: 2 })];
      const queue = await startQueue(url, specs);
      const ids = [
        await send(queue, 'backups', { label: 'backup-s1', siteId: 's1', sleepMs: 1_500 }),
        await send(queue, 'site-updates', { label: 'update-s1', siteId: 's1', sleepMs: 1_500 }),
        await send(queue, 'site-updates', { label: 'update-s2', siteId: 's2', sleepMs: 1_500 }),
      ];
      for (const name of ['backups', 'site-updates']) await queue.work(name, recordingHandler(pool), { siteOf });
      await waitFor(
        async () => (await runs(pool)).filter((row) => row.finished_at).length === 3,
        60_000,
        () => 'three runs',
      );
      const byLabel = new Map((await runs(pool)).map((row) => [row.label, row]));
      expect(overlaps(byLabel.get('backup-s1')!, byLabel.get('update-s1')!)).toBe(false);
      const s2 = byLabel.get('update-s2')!;
      expect(overlaps(s2, byLabel.get('backup-s1')!) || overlaps(s2, byLabel.get('update-s1')!)).toBe(true);
      await waitFor(
        async () =>
          (await Promise.all(ids.map((id) => jobRow(pool, id === ids[0] ? 'backups' : 'site-updates', id!)))).every(
            (job) => job?.state === 'completed',
          ),
        30_000,
        () => 'three completed jobs',
      );
      // Every lock released and its client back in the pool (none left held).
      const { rows } = await pool.query(`${SITE_LOCKS_HERE}`, [SITE_LOCK_NAMESPACE]);
      expect(rows).toEqual([]);
    },
  );

  it(
    'releases a killed process’s site lock at once, so the site’s next job starts long before any expiry',
    { timeout: 90_000 },
    async () => {
      const { url, pool } = await freshDatabase('queue-lock-kill');
      const specs = [spec('backups', { expireInSeconds: 60 }), spec('site-updates', { expireInSeconds: 60 })];
      const queue = await startQueue(url, specs);
      const holder = await startWorker({ url, queues: specs, work: ['backups'], exclusive: true });
      await send(queue, 'backups', { label: 'backup-s1', siteId: 's1', sleepMs: 50_000 });
      await waitFor(
        async () => (await runs(pool)).length === 1,
        30_000,
        () => 'the backup to start in the worker process',
      );

      await queue.work('site-updates', recordingHandler(pool), { siteOf });
      const update = (await send(queue, 'site-updates', { label: 'update-s1', siteId: 's1', sleepMs: 0 }))!;
      // Taken by this process's worker, which waits for the site's turn.
      await waitFor(
        async () => (await jobRow(pool, 'site-updates', update))?.state === 'active',
        30_000,
        () => 'the update taken',
      );
      await sleep(1_500);
      expect((await runs(pool)).map((row) => row.label)).toEqual(['backup-s1']);
      const waiting = await pool.query(`${SITE_LOCKS_HERE} ORDER BY granted`, [SITE_LOCK_NAMESPACE]);
      expect(waiting.rows).toEqual([{ granted: false }, { granted: true }]);

      process.kill(holder.pid, 'SIGKILL');
      await holder.exited;
      const killedAt = Date.now();
      await waitFor(
        async () => (await jobRow(pool, 'site-updates', update))?.state === 'completed',
        30_000,
        () => 'the update completed',
      );
      const started = (await runs(pool)).find((row) => row.label === 'update-s1')!;
      // At once: the dead session's lock went with its connection, not after the backup's 60 s expiry.
      expect(started.started_at.getTime() - killedAt).toBeLessThan(5_000);
    },
  );
  it(
    'gives up waiting for a busy site once the job expires, and never runs that attempt',
    { timeout: 90_000 },
    async () => {
      const { url, pool } = await freshDatabase('queue-lock-expiry');
      const specs = [spec('backups', { expireInSeconds: 60 }), spec('site-updates', { expireInSeconds: 2 })];
      const queue = await startQueue(url, specs);
      for (const name of ['backups', 'site-updates']) await queue.work(name, recordingHandler(pool), { siteOf });
      await send(queue, 'backups', { label: 'backup-s1', siteId: 's1', sleepMs: 6_000 });
      await waitFor(
        async () => (await runs(pool)).length === 1,
        30_000,
        () => 'the backup to start',
      );
      const update = (await send(queue, 'site-updates', { label: 'update-s1', siteId: 's1' }))!;
      await waitFor(
        async () => (await jobRow(pool, 'site-updates', update))?.state === 'failed',
        30_000,
        () => 'the update failed',
      );
      const backup = (await runs(pool))[0]!;
      // Failed while the backup still held the site, without running.
      expect(backup.finished_at).toBeNull();
      expect((await runs(pool)).map((row) => row.label)).toEqual(['backup-s1']);
      await waitFor(
        async () => (await runs(pool))[0]!.finished_at !== null,
        30_000,
        () => 'the backup to finish',
      );
      expect((await runs(pool)).map((row) => row.label)).toEqual(['backup-s1']);
    },
  );

  it('destroys a lock client whose unlock fails instead of returning it to the pool', async () => {
    const released: Array<Error | boolean | undefined> = [];
    type Answer = { rows: Array<{ unlocked: boolean }>; rowCount: number };
    const failing = (key: string) => async (text: string, values?: unknown[]) => {
      if (text.includes('pg_advisory_unlock') && values?.[1] === key) throw new Error('connection lost');
      return { rows: text.includes('unlock') ? [{ unlocked: true }] : [], rowCount: 1 };
    };
    const client = {
      query: failing('s1') as (text: string, values?: unknown[]) => Promise<Answer>,
      on: () => undefined,
      off: () => undefined,
      release: (error?: Error | boolean) => released.push(error),
    };
    const fakePool = { connect: async () => client } as unknown as pg.Pool;
    const siteLock = { namespace: SITE_LOCK_NAMESPACE, name: 's1' };
    await expect(holdingLock(fakePool, siteLock, async () => 'done')).resolves.toBe('done');
    expect(released).toEqual([expect.objectContaining({ message: 'connection lost' })]);

    // A site's lock taken on a run's client (beside its run lock): its failed unlock destroys that client too.
    released.length = 0;
    const run = { namespace: SITE_LOCK_NAMESPACE + 2, name: 'job-1' };
    await holdingLock(fakePool, run, (held, doubt) => inSiteTurn(held, 's1', 1_000, async () => undefined, doubt));
    expect(released).toEqual([expect.objectContaining({ message: 'connection lost' })]);

    // And one whose unlocks succeed goes back to the pool.
    released.length = 0;
    client.query = failing('none');
    await holdingLock(fakePool, run, (held, doubt) => inSiteTurn(held, 's1', 1_000, async () => undefined, doubt));
    expect(released).toEqual([false]);
  });
});
