import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { SITE_LOCK_NAMESPACE } from '../../src/jobs/pg-queue-site-lock.js';
import type { SweptJob } from '../../src/jobs/pg-queue-sweep.js';
import { jobRow, overlaps, runs, send, sleep, spec, useQueueHarness, waitFor } from './fixtures/pg-queue-harness.js';
import { recordingHandler, siteOf } from './fixtures/pg-queue-runs.js';

/**
 * A dead worker's runs given again within seconds, not at their queue's expiry (src/jobs/pg-queue-sweep.ts, issue
 * 34): every run holds a run lock on its connection, and the working instances' sweep fails an active job whose
 * run lock no session holds. Real worker processes on the run's PostgreSQL, killed, stopped, or cut from their lock
 * connection; what is asserted is read back from pg-boss's job table and the `queue_runs` row each attempt writes.
 */
const { freshDatabase, startQueue, startWorker } = useQueueHarness();

/** A sweep every second here (five by default): found free at two sweeps in a row, a job is given again in about two. */
const SWEEP = { sweepIntervalSeconds: 1 };
/** An expiry no test reaches: whatever is given again here, the sweep gave. */
const HOUR = 3_600;

/** The sessions holding a run lock in the test's own database (pg_locks is the whole server's). */
async function runLockHolders(pool: pg.Pool): Promise<number[]> {
  const { rows } = await pool.query<{ pid: number }>(
    `SELECT pid FROM pg_locks
     WHERE locktype = 'advisory' AND granted AND classid = $1::oid AND objsubid = 2
       AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    [SITE_LOCK_NAMESPACE + 2],
  );
  return rows.map((row) => row.pid);
}

describe('a dead worker’s runs, found by their free run lock', () => {
  it(
    'gives a job whose worker was killed (SIGKILL) to another worker within seconds, long before its hour’s expiry and past its retry delay',
    { timeout: 90_000 },
    async () => {
      const { url, pool } = await freshDatabase('sweep-kill');
      const specs = [spec('backups', { retryLimit: 2, retryDelaySeconds: 600, expireInSeconds: HOUR })];
      const sender = await startQueue(url, specs);
      const plan = { url, queues: specs, work: ['backups'], exclusive: true, ...SWEEP };
      const workers = await Promise.all([startWorker(plan), startWorker(plan)]);
      const id = (await send(sender, 'backups', { label: 'b', siteId: 's1', sleepMs: 3_000 }))!;
      await waitFor(
        async () => (await runs(pool)).length === 1,
        30_000,
        () => 'a worker to start the job',
      );
      const [first] = await runs(pool);
      const victim = workers.find((worker) => worker.pid === first!.pid)!;
      process.kill(victim.pid, 'SIGKILL');
      await victim.exited;
      const killedAt = Date.now();

      await waitFor(
        async () => (await jobRow(pool, 'backups', id))?.state === 'completed',
        30_000,
        () => 'the job completed by the other worker',
      );
      const [dead, finished, ...more] = await runs(pool);
      expect(more).toEqual([]);
      const other = workers.find((worker) => worker !== victim)!;
      expect(dead).toMatchObject({ pid: victim.pid, retry_count: 0, finished_at: null });
      expect(finished).toMatchObject({ pid: other.pid, retry_count: 1, stopped: null });
      // Within seconds of the death: neither the hour's expiry nor the ten minutes' retry delay.
      expect(finished!.started_at.getTime() - killedAt).toBeLessThan(10_000);
      expect(await jobRow(pool, 'backups', id)).toEqual({ state: 'completed', retry_count: 1 });
      // Every run lock released (the dead session's with its connection, the other's at its end).
      expect(await runLockHolders(pool)).toEqual([]);
    },
  );

  it(
    'never gives away a live run, one waiting for its site’s turn, or a stopped (SIGSTOP) process’s run',
    { timeout: 90_000 },
    async () => {
      const { url, pool } = await freshDatabase('sweep-live');
      const specs = [spec('backups', { concurrency: 2, retryLimit: 2, expireInSeconds: HOUR })];
      // This instance sweeps too, and works nothing of its own but the queue's sweep.
      const swept: SweptJob[] = [];
      const sweeper = await startQueue(url, specs, { ...SWEEP, onSwept: (job) => swept.push(job) });
      await sweeper.work('backups', recordingHandler(pool), { siteOf });
      await sweeper.offWork('backups');
      const worker = await startWorker({ url, queues: specs, work: ['backups'], exclusive: true, ...SWEEP });
      // Two jobs of one site: the second waits for the first's turn, active, holding only its run lock.
      // Long enough for the second to be taken while it runs, on a loaded machine too.
      const long = (await send(sweeper, 'backups', { label: 'long', siteId: 's1', sleepMs: 15_000 }))!;
      const waiting = (await send(sweeper, 'backups', { label: 'waiting', siteId: 's1', sleepMs: 0 }))!;
      await waitFor(
        async () => (await jobRow(pool, 'backups', waiting))?.state === 'active' && (await runs(pool)).length === 1,
        30_000,
        () => 'one job running and the other waiting for its turn',
      );
      expect(await runLockHolders(pool)).toHaveLength(2);
      // Stopped mid-run: its connections stay open, its locks held. Several sweeps pass.
      process.kill(worker.pid, 'SIGSTOP');
      await sleep(4_000);
      expect(await jobRow(pool, 'backups', long)).toEqual({ state: 'active', retry_count: 0 });
      expect(await jobRow(pool, 'backups', waiting)).toEqual({ state: 'active', retry_count: 0 });
      process.kill(worker.pid, 'SIGCONT');

      await waitFor(
        async () =>
          (await jobRow(pool, 'backups', long))?.state === 'completed' &&
          (await jobRow(pool, 'backups', waiting))?.state === 'completed',
        30_000,
        () => 'both jobs completed',
      );
      const all = await runs(pool);
      expect(all.map(({ label, pid, retry_count }) => ({ label, pid, retry_count }))).toEqual([
        { label: 'long', pid: worker.pid, retry_count: 0 },
        { label: 'waiting', pid: worker.pid, retry_count: 0 },
      ]);
      expect(overlaps(all[0]!, all[1]!)).toBe(false);
      expect(swept).toEqual([]);
    },
  );

  it(
    'stops a run whose lock connection PostgreSQL ended while its process lives, before its job is given to another',
    { timeout: 90_000 },
    async () => {
      const { url, pool } = await freshDatabase('sweep-lost');
      const specs = [spec('backups', { retryLimit: 2, expireInSeconds: HOUR })];
      const sender = await startQueue(url, specs);
      const plan = { url, queues: specs, work: ['backups'], exclusive: true, ...SWEEP };
      const worker = await startWorker(plan);
      const cut = (await send(sender, 'backups', { label: 'cut', siteId: 's1', sleepMs: 60_000 }))!;
      await waitFor(
        async () => (await runs(pool)).length === 1,
        30_000,
        () => 'the worker to start the job',
      );
      const [holder] = await runLockHolders(pool);
      await pool.query('SELECT pg_terminate_backend($1)', [holder]);
      const cutAt = Date.now();

      // The run stops at once, saying why; the process lives on.
      await waitFor(
        async () => (await runs(pool))[0]!.finished_at !== null,
        10_000,
        () => `the cut run to stop\n${worker.outputTail()}`,
      );
      const [stopped] = await runs(pool);
      expect(stopped!.stopped).toMatch(/lock connection was lost/);
      expect(stopped!.finished_at!.getTime() - cutAt).toBeLessThan(2_000);
      // Ended by its own run (as a worker's shutdown ends it), never run twice at once.
      await waitFor(
        async () => ['completed', 'retry', 'created'].includes((await jobRow(pool, 'backups', cut))?.state ?? ''),
        10_000,
        () => 'the cut job settled',
      );
      const again = await runs(pool);
      for (const later of again.slice(1)) expect(later.started_at >= stopped!.finished_at!).toBe(true);

      // The process goes on taking jobs, on a fresh connection.
      const next = (await send(sender, 'backups', { label: 'next', siteId: 's1', sleepMs: 0 }))!;
      await waitFor(
        async () => (await jobRow(pool, 'backups', next))?.state === 'completed',
        30_000,
        () => `the next job completed\n${worker.outputTail()}`,
      );
      expect((await runs(pool)).find((run) => run.label === 'next')).toMatchObject({ pid: worker.pid, stopped: null });
      expect(worker.hasExited()).toBe(false);
    },
  );
});
