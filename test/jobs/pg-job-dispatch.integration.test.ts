import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type pg from 'pg';
import { afterAll, afterEach, describe, expect, inject, it } from 'vitest';
import type { NewJob } from '../../src/jobs/job-kind.js';
import { queueIdOf, RECOVERY_QUEUE } from '../../src/jobs/pg-job-dispatch.js';
import { createPgQueue, QUEUE_SCHEMA } from '../../src/jobs/pg-queue.js';
import { createId } from '../../src/shared/ids.js';
import { createTestDatabase, testPool } from '../support/postgres.js';
import { createCapturedLogger } from '../support/log-capture.js';
import { spawnScript, untilReady, type OwnedProcess } from '../support/processes.js';
import { waitFor } from '../support/wait.js';
import {
  CREATE_RUNNER_RUNS,
  KINDS,
  startClusterRunner,
  type ClusterRunnerPlan,
  type RunnerRun,
} from './fixtures/cluster-runner.js';

/**
 * The job runner on the cluster's queue (src/jobs/pg-job-dispatch.ts, issue 34): jobs submitted by one process and
 * run by worker processes, on the run's PostgreSQL, each test on a database of its own. What is asserted is read
 * back from PostgreSQL: the `jobs` row the runner wrote, the queue job, and the `runner_runs` row each run of a job
 * wrote as it started and ended, whichever process ran it, even one killed mid-job.
 */
const WORKER = resolve(import.meta.dirname, 'fixtures/cluster-runner-worker.ts');
const scratch = mkdtempSync(join(tmpdir(), 'sitewarden-pg-dispatch-'));
const databases: Array<{ drop(): Promise<void> }> = [];
const pools: pg.Pool[] = [];
let closers: Array<() => Promise<void>> = [];
let workers: OwnedProcess[] = [];
let queueErrors: Error[] = [];

afterEach(async () => {
  await Promise.all(workers.map((worker) => worker.stop(3_000)));
  await Promise.all(closers.map((close) => close()));
  const seen = queueErrors;
  [workers, closers, queueErrors] = [[], [], []];
  expect(seen.map((error) => error.message)).toEqual([]);
});

afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.end()));
  await Promise.all(databases.map((database) => database.drop()));
  rmSync(scratch, { recursive: true, force: true });
});

/** A fresh database, and the runner of this test process on it: it submits, and runs nothing. */
async function cluster(label: string, pools_: ClusterRunnerPlan['pools'] = {}) {
  const database = await createTestDatabase(inject('postgresUrl'), label);
  databases.push(database);
  const pool = testPool({ connectionString: database.url, max: 4 });
  pools.push(pool);
  await pool.query(CREATE_RUNNER_RUNS);
  const plan = { url: database.url, pools: pools_ };
  const { runner, close } = await startClusterRunner({ ...plan, work: [] }, createCapturedLogger().logger, (error) =>
    queueErrors.push(error),
  );
  closers.push(close);

  /** A worker process running `kinds`, once it works them. */
  async function worker(kinds: string[]): Promise<OwnedProcess> {
    const started = spawnScript(WORKER, {
      logFile: join(scratch, `worker-${label}-${workers.length}.log`),
      planVariable: 'CLUSTER_RUNNER',
      plan: { ...plan, work: kinds } satisfies ClusterRunnerPlan,
    });
    workers.push(started);
    return untilReady(started);
  }

  const runs = async (): Promise<RunnerRun[]> =>
    (await pool.query<RunnerRun>('SELECT * FROM runner_runs ORDER BY run')).rows;
  const queueJob = async (jobId: string) =>
    (
      await pool.query<{ state: string; retry_count: number; name: string }>(
        `SELECT state, retry_count, name FROM ${QUEUE_SCHEMA}.job WHERE id = $1`,
        [queueIdOf(jobId)],
      )
    ).rows[0];
  const job = (kind: string, siteId: string | null, sleepMs: number): NewJob => ({
    id: createId('job'),
    kind,
    siteId,
    params: { sleepMs },
    createdAt: new Date(),
  });
  const settled = (id: string, timeoutMs = 60_000) =>
    waitFor(
      async () => ['succeeded', 'failed', 'cancelled'].includes((await runner.get(id)).state),
      timeoutMs,
      () => `job ${id} to end`,
      100,
    );
  /** Until a worker has started the test's one job. */
  const firstRunStarted = () =>
    waitFor(
      async () => (await runs()).length === 1,
      30_000,
      () => 'a worker to start the job',
    );

  /** Two workers of `kind`; a job of it submitted; the worker that started it killed (SIGKILL) mid-job. */
  async function killOneMidJob(kind: string) {
    const both = await Promise.all([worker([kind]), worker([kind])]);
    const submitted = job(kind, 'site_a', 2_000);
    await runner.submit(submitted);
    await firstRunStarted();
    const [firstRun] = await runs();
    const killed = both.find((each) => each.pid === firstRun!.pid)!;
    process.kill(killed.pid, 'SIGKILL');
    return { submitted, killed, other: both.find((each) => each !== killed)! };
  }
  return { url: database.url, pool, runner, worker, runs, queueJob, job, settled, killOneMidJob, firstRunStarted };
}

/** A worker's log lines that are events of `name`. */
function eventsIn(worker: OwnedProcess, name: string): Array<Record<string, unknown>> {
  return worker
    .outputTail()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.event === name);
}

describe('the job runner on the cluster’s queue', () => {
  it(
    'runs a job submitted by one process in a worker process, which writes its start, reports and end',
    { timeout: 90_000 },
    async () => {
      const { runner, worker, runs, queueJob, job, settled } = await cluster('dispatch-once');
      const only = await worker([KINDS.resumable]);
      const submitted = job(KINDS.resumable, 'site_a', 300);
      const { job: written } = await runner.submit(submitted);
      expect(written).toMatchObject({ id: submitted.id, state: 'queued', attempts: 0 });

      await settled(submitted.id);
      const row = await runner.get(submitted.id);
      expect(row).toMatchObject({ state: 'succeeded', attempts: 1, reason: null, message: null });
      expect(JSON.parse(row.progress)).toEqual({ pid: only.pid, done: true });
      // What the job reported as it ran, written before its end.
      expect(JSON.parse(row.params)).toEqual({ sleepMs: 300, ranBy: only.pid });
      expect(row.startedAt!.getTime()).toBeLessThanOrEqual(row.finishedAt!.getTime());
      const [run, ...more] = await runs();
      expect(more).toEqual([]);
      expect(run).toMatchObject({ job_id: submitted.id, pid: only.pid, attempt: 1, site_id: 'site_a' });
      expect(run!.finished_at).not.toBeNull();
      await waitFor(
        async () => (await queueJob(submitted.id))?.state === 'completed',
        10_000,
        () => 'the queue job completed',
      );
      expect(await queueJob(submitted.id)).toMatchObject({ name: 'backups', retry_count: 0 });
    },
  );

  it(
    'gives a job whose worker was killed (SIGKILL) to another worker after its expiry, which runs it again as its kind recovers, once',
    { timeout: 120_000 },
    async () => {
      const { runner, runs, queueJob, settled, killOneMidJob } = await cluster('dispatch-kill', {
        backups: { expireInSeconds: 3, retryDelaySeconds: 0 },
      });
      const { submitted, killed, other } = await killOneMidJob(KINDS.resumable);
      expect((await runner.get(submitted.id)).state).toBe('running');

      await settled(submitted.id);
      const row = await runner.get(submitted.id);
      expect(row).toMatchObject({ state: 'succeeded', attempts: 2, reason: null });
      expect(JSON.parse(row.progress)).toEqual({ pid: other.pid, done: true });
      const all = await runs();
      expect(all.map(({ pid, attempt }) => ({ pid, attempt }))).toEqual([
        { pid: killed.pid, attempt: 1 },
        { pid: other.pid, attempt: 2 },
      ]);
      expect(all[0]!.finished_at).toBeNull();
      expect(all[1]!.finished_at).not.toBeNull();
      // Taken again only once its expiry had passed.
      expect(all[1]!.started_at.getTime() - all[0]!.started_at.getTime()).toBeGreaterThanOrEqual(3_000);
      expect(eventsIn(other, 'job.interrupted')).toEqual([
        expect.objectContaining({ jobId: submitted.id, kind: KINDS.resumable, action: 'requeued' }),
      ]);
      await waitFor(
        async () => (await queueJob(submitted.id))?.state === 'completed',
        10_000,
        () => 'the queue job completed',
      );
      expect((await queueJob(submitted.id))?.retry_count).toBe(1);
    },
  );

  it(
    'ends a job of a kind that cannot resume `interrupted` once its killed worker’s attempt expired, and does not run it again',
    { timeout: 120_000 },
    async () => {
      const { runner, runs, queueJob, settled, killOneMidJob } = await cluster('dispatch-interrupted', {
        audits: { expireInSeconds: 3, retryDelaySeconds: 0 },
      });
      const { submitted, killed, other } = await killOneMidJob(KINDS.fragile);

      await settled(submitted.id);
      expect(await runner.get(submitted.id)).toMatchObject({
        state: 'failed',
        reason: 'interrupted',
        message: 'its worker stopped',
        attempts: 1,
      });
      await waitFor(
        async () => (await queueJob(submitted.id))?.state === 'completed',
        10_000,
        () => 'the queue job completed',
      );
      expect((await runs()).map((run) => run.pid)).toEqual([killed.pid]);
      expect(eventsIn(other, 'job.interrupted')).toEqual([
        expect.objectContaining({ jobId: submitted.id, kind: KINDS.fragile, action: 'failed' }),
      ]);
    },
  );

  it(
    'runs one exclusive job of a site at a time across pools and processes, and other sites’ jobs beside them',
    { timeout: 120_000 },
    async () => {
      const { runner, worker, runs, job, settled } = await cluster('dispatch-turns');
      const kinds = [KINDS.resumable, KINDS.other];
      await Promise.all([worker(kinds), worker(kinds)]);
      const jobs = [
        job(KINDS.resumable, 'site_a', 1_500),
        job(KINDS.other, 'site_a', 1_500),
        job(KINDS.resumable, 'site_a', 1_500),
        job(KINDS.other, 'site_b', 1_500),
      ];
      for (const each of jobs) await runner.submit(each);
      for (const each of jobs) await settled(each.id);

      const all = await runs();
      expect(all).toHaveLength(4);
      const overlap = (a: RunnerRun, b: RunnerRun) => a.started_at < b.finished_at! && b.started_at < a.finished_at!;
      const siteA = all.filter((run) => run.site_id === 'site_a');
      for (const a of siteA) for (const b of siteA) if (a !== b) expect(overlap(a, b)).toBe(false);
      const siteB = all.find((run) => run.site_id === 'site_b')!;
      expect(siteA.some((a) => overlap(a, siteB))).toBe(true);
    },
  );

  it(
    'keeps one queue job for a job sent twice, and does not run a job cancelled while it waited in the queue',
    { timeout: 90_000 },
    async () => {
      const { pool, runner, worker, runs, queueJob, job } = await cluster('dispatch-cancelled');
      const kept = job(KINDS.fragile, null, 100);
      const dropped = job(KINDS.fragile, null, 100);
      await runner.submit(kept);
      await runner.submit(dropped);
      // Sent again, as a re-send of a row still queued does.
      await runner.enqueue(KINDS.fragile, kept.id, null);
      const { rows } = await pool.query<{ jobs: string }>(
        `SELECT count(*) AS jobs FROM ${QUEUE_SCHEMA}.job WHERE name = 'audits'`,
      );
      expect(Number(rows[0]!.jobs)).toBe(2);
      // Cancelled in its row while it waits in the queue.
      expect(await runner.cancel(dropped.id, { kind: 'user', id: 'usr_cancels' })).toMatchObject({
        state: 'cancelled',
        reason: 'cancelled',
      });

      await worker([KINDS.fragile]);
      await waitFor(
        async () =>
          (await queueJob(kept.id))?.state === 'completed' && (await queueJob(dropped.id))?.state === 'completed',
        30_000,
        () => 'both queue jobs completed',
      );
      expect((await runs()).map((run) => run.job_id)).toEqual([kept.id]);
      expect(await runner.get(kept.id)).toMatchObject({ state: 'succeeded', attempts: 1 });
      expect(await runner.get(dropped.id)).toMatchObject({ state: 'cancelled', attempts: 0, startedAt: null });
    },
  );

  it(
    'settles a running job whose end was never written while the processes run, in the worker that takes the scheduled recovery',
    { timeout: 90_000 },
    async () => {
      const { url, pool, runner, worker } = await cluster('dispatch-recovery-sweep');
      const running = await worker([KINDS.fragile]);
      const { rows: schedules } = await pool.query(`SELECT name, cron FROM ${QUEUE_SCHEMA}.schedule`);
      expect(schedules).toEqual([{ name: RECOVERY_QUEUE.name, cron: '*/5 * * * *' }]);
      // Its worker wrote its start, then could not write its end; its queue job completed.
      const lost = createId('job');
      await pool.query(
        `INSERT INTO jobs (id, kind, state, params, attempts, created_at, started_at)
         VALUES ($1, $2, 'running', '{}', 1, now() - interval '10 minutes', now() - interval '10 minutes')`,
        [lost, KINDS.fragile],
      );
      // The slot's job, as the schedule sends it.
      const sender = createPgQueue({
        connectionString: url,
        queues: [RECOVERY_QUEUE],
        schedule: false,
        onError: (error) => queueErrors.push(error),
      });
      closers.push(() => sender.stop(1_000));
      await sender.start();
      await sender.send(RECOVERY_QUEUE.name, {});

      await waitFor(
        async () => (await runner.get(lost)).state === 'failed',
        30_000,
        () => 'the lost job settled',
      );
      expect(await runner.get(lost)).toMatchObject({ reason: 'interrupted', message: 'its worker stopped' });
      await waitFor(
        () => eventsIn(running, 'job.interrupted').length === 1,
        5_000,
        () => `job.interrupted in the worker's log\n${running.outputTail()}`,
      );
      expect(eventsIn(running, 'job.interrupted')).toEqual([
        expect.objectContaining({ jobId: lost, action: 'failed' }),
      ]);
    },
  );

  it(
    'stops a running job asked of another process: the worker running it ends it cancelled, naming who asked',
    { timeout: 90_000 },
    async () => {
      const { pool, runner, worker, job, settled, firstRunStarted } = await cluster('dispatch-cancel-running');
      const running = await worker([KINDS.stoppable]);
      const submitted = job(KINDS.stoppable, 'site_a', 60_000);
      await runner.submit(submitted);
      await firstRunStarted();
      const askedAt = Date.now();
      expect(await runner.cancel(submitted.id, { kind: 'user', id: 'usr_cancels' })).toMatchObject({
        state: 'running',
      });

      await settled(submitted.id, 10_000);
      const stoppedInMs = Date.now() - askedAt;
      expect(await runner.get(submitted.id)).toMatchObject({
        state: 'cancelled',
        reason: 'cancelled',
        message: 'stopped on request',
        attempts: 1,
      });
      await waitFor(
        () => eventsIn(running, 'job.cancelled').length === 1,
        5_000,
        () => `job.cancelled in the worker's log\n${running.outputTail()}`,
      );
      expect(eventsIn(running, 'job.cancelled')).toEqual([
        expect.objectContaining({
          jobId: submitted.id,
          state: 'running',
          requestedByKind: 'user',
          requestedById: 'usr_cancels',
        }),
      ]);
      console.log(`a cancel asked of another process stopped the job in ${stoppedInMs} ms`);
      // The request is forgotten once the job ended.
      await waitFor(
        async () => (await pool.query('SELECT 1 FROM job_cancel_requests')).rowCount === 0,
        5_000,
        () => 'the cancel request forgotten',
      );
    },
  );

  it(
    'stops a job asked to stop while its worker was dead, as soon as the next worker takes it',
    { timeout: 120_000 },
    async () => {
      const { runner, runs, settled, killOneMidJob } = await cluster('dispatch-cancel-orphan', {
        'fleet-actions': { expireInSeconds: 3, retryDelaySeconds: 0 },
      });
      const { submitted, killed, other } = await killOneMidJob(KINDS.stoppable);
      // No process runs it now: the request is kept for the one that takes it next.
      expect(await runner.cancel(submitted.id, { kind: 'token', id: 'tok_cancels' })).toMatchObject({
        state: 'running',
      });

      await settled(submitted.id);
      expect(await runner.get(submitted.id)).toMatchObject({ state: 'cancelled', reason: 'cancelled', attempts: 2 });
      const all = await runs();
      expect(all.map(({ pid, finished_at }) => ({ pid, finished: finished_at !== null }))).toEqual([
        { pid: killed.pid, finished: false },
        { pid: other.pid, finished: false },
      ]);
      await waitFor(
        () => eventsIn(other, 'job.cancelled').length === 1,
        5_000,
        () => `job.cancelled in the worker's log\n${other.outputTail()}`,
      );
      expect(eventsIn(other, 'job.cancelled')).toEqual([
        expect.objectContaining({ jobId: submitted.id, requestedByKind: 'token', requestedById: 'tok_cancels' }),
      ]);
      expect(eventsIn(other, 'job.interrupted')).toEqual([expect.objectContaining({ action: 'requeued' })]);
    },
  );

  it('answers 409 to a cancel of a running job whose kind cannot stop halfway', { timeout: 90_000 }, async () => {
    const { runner, worker, job, settled, firstRunStarted } = await cluster('dispatch-cancel-409');
    await worker([KINDS.fragile]);
    const submitted = job(KINDS.fragile, null, 1_500);
    await runner.submit(submitted);
    await firstRunStarted();
    await expect(runner.cancel(submitted.id)).rejects.toMatchObject({
      problem: { name: 'job-not-cancellable', status: 409 },
      extensions: { state: 'running' },
    });
    await settled(submitted.id);
    expect(await runner.get(submitted.id)).toMatchObject({ state: 'succeeded' });
    await expect(runner.cancel(submitted.id)).rejects.toMatchObject({
      problem: { name: 'job-finished', status: 409 },
      extensions: { state: 'succeeded' },
    });
  });

  it(
    'settles at start the running jobs no process holds, and sends the queued ones the queue does not hold, once',
    { timeout: 90_000 },
    async () => {
      const { pool, runner, worker, runs, job, settled } = await cluster('dispatch-recovery');
      const kinds = [KINDS.fragile, KINDS.resumable, KINDS.other];
      const sent = job(KINDS.fragile, null, 100);
      await runner.submit(sent);
      // Written by processes gone since: one queued and never sent, two whose runs' ends were never written, and
      // one running whose queue job is still to run (held: the queue hands it on, and its next attempt settles it).
      const unsent = job(KINDS.fragile, null, 100);
      const lost = job(KINDS.fragile, null, 100);
      const lostResumable = job(KINDS.resumable, 'site_r', 100);
      const held = job(KINDS.other, 'site_h', 100);
      const insert = (each: NewJob, state: string, attempts: number) =>
        pool.query(
          `INSERT INTO jobs (id, kind, site_id, state, params, attempts, created_at, started_at)
           VALUES ($1, $2, $3, $4, $5, $6, now() - interval '10 minutes',
                   CASE WHEN $4 = 'running' THEN now() - interval '10 minutes' END)`,
          [each.id, each.kind, each.siteId, state, JSON.stringify(each.params), attempts],
        );
      await insert(unsent, 'queued', 0);
      for (const each of [lost, lostResumable, held]) await insert(each, 'running', 1);
      // No process here works the `site-updates` pool: its queue job waits.
      await runner.enqueue(KINDS.other, held.id, held.siteId);
      // The resumable one's queue job completed; its end was never written (the database away at that instant).
      await runner.enqueue(KINDS.resumable, lostResumable.id, lostResumable.siteId);
      await pool.query(`UPDATE ${QUEUE_SCHEMA}.job SET state = 'completed', completed_on = now() WHERE id = $1`, [
        queueIdOf(lostResumable.id),
      ]);

      expect(await runner.recover(kinds)).toEqual({ requeued: 2, interrupted: 1 });
      // Another process starting after it finds nothing left to do.
      expect(await runner.recover(kinds)).toEqual({ requeued: 0, interrupted: 0 });
      await worker([KINDS.fragile, KINDS.resumable]);
      for (const each of [sent, unsent, lostResumable]) await settled(each.id);
      expect((await runs()).map((run) => run.job_id).sort()).toEqual([sent.id, unsent.id, lostResumable.id].sort());
      expect(await runner.get(unsent.id)).toMatchObject({ state: 'succeeded', attempts: 1 });
      // Queued again by its kind's recovery and sent afresh: its first queue job was gone.
      expect(await runner.get(lostResumable.id)).toMatchObject({ state: 'succeeded', attempts: 2 });
      expect(await runner.get(lost.id)).toMatchObject({
        state: 'failed',
        reason: 'interrupted',
        message: 'its worker stopped',
        attempts: 1,
      });
      expect(await runner.get(held.id)).toMatchObject({ state: 'running', attempts: 1 });
    },
  );
});
