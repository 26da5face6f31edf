import { describe, expect, it } from 'vitest';
import { QUEUE_SCHEMA } from '../../src/jobs/pg-queue.js';
import { jobRow, runs, send, sleep, spec, useQueueHarness, waitFor } from './fixtures/pg-queue-harness.js';
import { recordingHandler, type RunRow } from './fixtures/pg-queue-runs.js';

/**
 * The cluster-mode queue's lower half (src/jobs/pg-queue.ts, pg-boss 10.x) on the run's throwaway
 * PostgreSQL, each test on a database of its own: delivery, concurrency, a worker process killed by
 * SIGKILL mid-job, retries — what docs/design/cluster-state.md relies on, read back from PostgreSQL
 * (pg-boss's job table and the `queue_runs` row every attempt writes, whichever process ran it).
 * The site locks are in pg-queue-site-lock.integration.test.ts, keys and cron in
 * pg-queue-keys.integration.test.ts.
 */
const { freshDatabase, pool: newPool, startQueue, startWorker } = useQueueHarness();

describe('the pg-boss queue adapter on PostgreSQL', () => {
  it(
    'delivers each job once and completes it, with two processes’ workers competing',
    { timeout: 90_000 },
    async () => {
      const { url, pool } = await freshDatabase('queue-once');
      const specs = [spec('audits', { concurrency: 2 })];
      // This instance on a pool of ours (pg-boss's queries through it), the worker process on its URL.
      const shared = newPool(url);
      const sender = await startQueue(url, specs, { pool: shared, connectionString: undefined });
      // Two instances (a worker process, and this one), two workers each.
      const worker = await startWorker({ url, queues: specs, work: ['audits'], exclusive: false });
      const ids: string[] = [];
      for (let index = 0; index < 8; index++)
        ids.push((await send(sender, 'audits', { label: `a${index}`, sleepMs: 1_000 }))!);
      await sender.work('audits', recordingHandler(pool));

      await waitFor(
        async () =>
          (await Promise.all(ids.map((id) => jobRow(pool, 'audits', id)))).every((job) => job?.state === 'completed'),
        60_000,
        () => 'six completed jobs',
      );
      const rows = await runs(pool);
      expect(rows.map((row) => row.label).sort()).toEqual(['a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7']);
      expect(rows.every((row) => row.finished_at !== null && row.retry_count === 0)).toBe(true);
      expect(new Set(rows.map((row) => row.job_id))).toEqual(new Set(ids));
      expect(new Set(rows.map((row) => row.pid))).toEqual(new Set([worker.pid, process.pid]));
      // Stopping the queue leaves a pool it was given open for its owner.
      await sender.stop(1_000);
      expect((await shared.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    },
  );

  it('runs as many jobs of a queue at once as its concurrency, and no more', { timeout: 90_000 }, async () => {
    const { url, pool } = await freshDatabase('queue-concurrency');
    const queue = await startQueue(url, [spec('audits', { concurrency: 3 })]);
    for (let index = 0; index < 4; index++) await send(queue, 'audits', { label: `a${index}`, sleepMs: 3_000 });
    await queue.work('audits', recordingHandler(pool));
    await waitFor(
      async () => (await runs(pool)).filter((row) => row.finished_at).length === 4,
      60_000,
      () => 'four runs',
    );
    const rows = await runs(pool);
    // Running at the instant a job started (the most at once is reached at some start).
    const atOnce = ({ started_at: at }: RunRow) =>
      rows.filter((other) => other.started_at <= at && at < other.finished_at!).length;
    expect(Math.max(...rows.map(atOnce))).toBe(3);
  });

  it(
    'gives a job whose worker process was killed (SIGKILL) to another process after its expiry, which completes it once',
    { timeout: 120_000 },
    async () => {
      const { url, pool } = await freshDatabase('queue-kill');
      const expireInSeconds = 3;
      const specs = [spec('backups', { retryLimit: 2, expireInSeconds })];
      const sender = await startQueue(url, specs);
      const first = await startWorker({ url, queues: specs, work: ['backups'], exclusive: false });
      const id = (await send(sender, 'backups', { label: 'b', sleepMs: 2_000 }))!;
      await waitFor(
        async () => (await runs(pool)).length === 1,
        30_000,
        () => 'the first worker to start the job',
      );
      process.kill(first.pid, 'SIGKILL');
      await first.exited;
      const killedAt = Date.now();
      expect(await jobRow(pool, 'backups', id)).toEqual({ state: 'active', retry_count: 0 });

      const second = await startWorker({ url, queues: specs, work: ['backups'], exclusive: false });
      await waitFor(
        async () => (await jobRow(pool, 'backups', id))?.state === 'completed',
        60_000,
        () => 'the job completed',
      );
      const [killed, finished, ...more] = await runs(pool);
      expect(more).toEqual([]);
      expect(killed).toMatchObject({ pid: first.pid, retry_count: 0, finished_at: null });
      expect(finished).toMatchObject({ pid: second.pid, retry_count: 1 });
      expect(finished!.finished_at).not.toBeNull();
      // Taken again only once its expiry had passed (started_on + expire_in), not as soon as the process died.
      expect(finished!.started_at.getTime() - killed!.started_at.getTime()).toBeGreaterThanOrEqual(
        expireInSeconds * 1000,
      );
      expect(Date.now() - killedAt).toBeLessThan(30_000);

      // Done exactly once: a further expiry period later, no other attempt and the job still completed.
      await sleep((expireInSeconds + 2) * 1000);
      expect(await runs(pool)).toHaveLength(2);
      expect(await jobRow(pool, 'backups', id)).toEqual({ state: 'completed', retry_count: 1 });
    },
  );

  it(
    'starts in several instances at once on a fresh database, as a cluster’s processes do',
    { timeout: 90_000 },
    async () => {
      const { url, pool } = await freshDatabase('queue-start-together');
      const specs = ['backups', 'audits', 'safe-updates', 'site-updates', 'fleet-actions'].map((name) => spec(name));
      // Each instance on connections of its own: pg-boss makes a queue's partition and attaches it to its job table.
      const started = await Promise.allSettled([1, 2, 3, 4].map(() => startQueue(url, specs)));
      expect(started.map((result) => (result.status === 'rejected' ? String(result.reason) : 'started'))).toEqual(
        Array(4).fill('started'),
      );
      const { rows } = await pool.query<{ name: string }>(`SELECT name FROM ${QUEUE_SCHEMA}.queue ORDER BY name`);
      expect(rows.map((row) => row.name)).toEqual(specs.map((each) => each.name).sort());
    },
  );

  it('retries a job whose handler throws retryLimit times, then fails it', { timeout: 90_000 }, async () => {
    const { url, pool } = await freshDatabase('queue-retry');
    const queue = await startQueue(url, [spec('audits', { retryLimit: 2 })]);
    const id = (await send(queue, 'audits', { label: 'c', fail: true }))!;
    await queue.work('audits', recordingHandler(pool));
    await waitFor(
      async () => (await jobRow(pool, 'audits', id))?.state === 'failed',
      60_000,
      () => 'the job failed',
    );
    expect((await runs(pool)).map((row) => row.retry_count)).toEqual([0, 1, 2]);
    expect(await jobRow(pool, 'audits', id)).toEqual({ state: 'failed', retry_count: 2 });
    // Failed for good: no fourth attempt.
    await sleep(1_500);
    expect(await runs(pool)).toHaveLength(3);
  });
});
