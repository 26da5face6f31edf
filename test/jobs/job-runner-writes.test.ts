import { describe, expect, it } from 'vitest';
import { CANCELLED_MESSAGE, jobEvent, wasCancelled, type JobContext, type JobKind } from '../../src/jobs/job-kind.js';
import type { JobRow } from '../../src/jobs/jobs.table.js';
import { jobRunnerOnMemory } from '../support/job-runner-fixture.js';

/**
 * A kind's job row, which the runner writes (drizzle/0033, 0034): the kind only returns
 * its outcome and tells its progress; queued, running, progress, the end, recovery and cancel are
 * the runner's writes.
 */
const until = async (condition: () => boolean) => {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
};

function setup() {
  const { repository, logs, clock, runner } = jobRunnerOnMemory();
  /** The kind's own rows: what it writes itself (a backup's status). */
  const own = new Map<string, string>();
  const contexts = new Map<string, { job: JobRow; context: JobContext; end: (how: 'ok' | 'fail' | 'throw') => void }>();

  const kind: JobKind = {
    pool: { name: 'written', concurrency: 2 },
    exclusive: false,
    atShutdown: 'abort',
    cancelsWhileRunning: true,
    async run(job, signal, context) {
      own.set(job.id, 'running');
      const how = await new Promise<'ok' | 'fail' | 'throw' | 'aborted'>((resolve) => {
        contexts.set(job.id, { job, context, end: resolve });
        signal.addEventListener('abort', () => resolve('aborted'), { once: true });
      });
      if (how === 'throw') throw new Error('a bug');
      clock.advance(1_000);
      own.set(job.id, how === 'ok' ? 'completed' : 'failed');
      if (how === 'ok') return { events: [], outcome: { state: 'succeeded', progress: { done: 3 } } };
      if (wasCancelled(signal))
        return { events: [], outcome: { state: 'cancelled', reason: 'cancelled', message: CANCELLED_MESSAGE } };
      const reason = signal.aborted ? 'interrupted' : 'site-error';
      return {
        events: [
          jobEvent('backup.failed', { siteId: job.siteId, backupId: job.id, kind: 'manual', reason, message: 'no' }),
        ],
        outcome: { state: 'failed', reason, message: 'no' },
        interrupted: signal.aborted,
      };
    },
    cancelQueued: (job) => void own.set(job.id, 'cancelled'),
    recover: {
      running(job) {
        // The kind's own row may say it ended: the process stopped before the job row was written.
        if (own.get(job.id) === 'completed')
          return { events: [], interrupted: false, outcome: { state: 'succeeded', progress: { done: 3 } } };
        own.set(job.id, 'failed');
        return { events: [], outcome: { state: 'failed', reason: 'interrupted', message: 'the daemon stopped' } };
      },
    },
  };
  runner.register('written', kind);
  let count = 0;
  const submit = (siteId: string | null = 'site_a') => {
    count++;
    const id = `job_${String(count).padStart(26, '0')}`;
    return runner.submit({ id, kind: 'written', siteId, params: { asked: count }, createdAt: clock.now() }, () => {
      own.set(id, 'queued');
      return id;
    });
  };
  return { repository, runner, logs, clock, own, contexts, submit };
}

describe('a kind whose job row the runner writes', () => {
  it('is written queued with its own row, running before it runs, its progress as told, and its outcome', async () => {
    const s = setup();
    const { job, own: id } = await s.submit();
    expect(job).toMatchObject({ id, kind: 'written', state: 'queued', attempts: 0, startedAt: null });
    expect(JSON.parse(job.params)).toEqual({ asked: 1 });
    await until(() => s.contexts.has(id));
    const { job: running, context, end } = s.contexts.get(id)!;
    // The kind gets its row already running (its own row takes the same start time from it).
    expect(running).toMatchObject({ state: 'running', attempts: 1, startedAt: s.clock.now() });
    expect(s.repository.find(id)).toMatchObject({ state: 'running', attempts: 1 });
    context.progress({ done: 1 });
    expect(JSON.parse(s.repository.find(id)!.progress)).toEqual({ done: 1 });
    context.params({ asked: 1, learned: 'more' });
    expect(JSON.parse(s.repository.find(id)!.params)).toEqual({ asked: 1, learned: 'more' });
    end('ok');
    await s.runner.idle(['written']);
    expect(s.repository.find(id)).toMatchObject({
      state: 'succeeded',
      reason: null,
      attempts: 1,
      finishedAt: s.clock.now(),
    });
    expect(JSON.parse(s.repository.find(id)!.progress)).toEqual({ done: 3 });
  });

  it('ends failed with the reason its kind returns, and failed as internal-error when the kind throws', async () => {
    const s = setup();
    const failing = (await s.submit()).own;
    const throwing = (await s.submit()).own;
    await until(() => s.contexts.has(failing) && s.contexts.has(throwing));
    s.contexts.get(failing)!.end('fail');
    s.contexts.get(throwing)!.end('throw');
    await s.runner.idle(['written']);
    expect(s.repository.find(failing)).toMatchObject({ state: 'failed', reason: 'site-error', message: 'no' });
    expect(s.logs.events('backup.failed')).toEqual([expect.objectContaining({ backupId: failing })]);
    expect(s.repository.find(throwing)).toMatchObject({ state: 'failed', reason: 'internal-error', message: 'a bug' });
  });

  it('cancels a queued job (the kind writes only its own row) and a running one (the kind returns cancelled)', async () => {
    const s = setup();
    const running = (await s.submit()).own;
    const other = (await s.submit()).own;
    const queued = (await s.submit()).own;
    await until(() => s.contexts.has(running) && s.contexts.has(other));
    expect(await s.runner.cancel(queued)).toMatchObject({ state: 'cancelled', reason: 'cancelled' });
    expect(s.own.get(queued)).toBe('cancelled');
    await s.runner.cancel(running);
    s.contexts.get(other)!.end('ok');
    await s.runner.idle(['written']);
    expect(s.repository.find(running)).toMatchObject({ state: 'cancelled', reason: 'cancelled' });
    expect(s.repository.find(queued)).toMatchObject({ state: 'cancelled', attempts: 0 });
    expect(s.logs.events('job.cancelled').map((event) => [event.jobId, event.state])).toEqual([
      [queued, 'queued'],
      [running, 'running'],
    ]);
  });

  it('recovers a job left running as its kind says: interrupted, or ended when its own row had ended', async () => {
    const s = setup();
    const add = (id: string) =>
      s.repository.insert({
        id,
        kind: 'written',
        siteId: 'site_a',
        state: 'running',
        attempts: 1,
        createdAt: s.clock.now(),
        startedAt: s.clock.now(),
      });
    add('job_killed');
    add('job_ended');
    s.own.set('job_killed', 'running');
    s.own.set('job_ended', 'completed');
    expect(await s.runner.recover(['written'])).toEqual({ requeued: 0, interrupted: 1 });
    expect(s.repository.find('job_killed')).toMatchObject({
      state: 'failed',
      reason: 'interrupted',
      message: 'the daemon stopped',
      finishedAt: s.clock.now(),
    });
    expect(s.repository.find('job_ended')).toMatchObject({ state: 'succeeded', reason: null });
    expect(s.logs.events('job.interrupted')).toEqual([
      expect.objectContaining({ jobId: 'job_killed', action: 'failed' }),
    ]);
  });

  it('runs a job inside another (a restore’s pre-restore backup), and records one that ended elsewhere', async () => {
    const s = setup();
    const { job } = await s.runner.create({
      id: 'job_inner',
      kind: 'written',
      siteId: 'site_a',
      createdAt: s.clock.now(),
    });
    expect(job.state).toBe('queued');
    const settled = s.runner.runWithin('job_inner', async (running, context) => {
      expect(running).toMatchObject({ state: 'running', attempts: 1 });
      context.progress({ done: 2 });
      return { events: [], outcome: { state: 'failed', reason: 'site-error', message: 'no' } };
    });
    await settled;
    expect(s.repository.find('job_inner')).toMatchObject({ state: 'failed', reason: 'site-error', attempts: 1 });
    expect(JSON.parse(s.repository.find('job_inner')!.progress)).toEqual({ done: 2 });

    const at = new Date('2026-01-01T00:00:00Z');
    const recorded = (
      await s.runner.record({
        id: 'job_adopted',
        kind: 'written',
        siteId: 'site_b',
        state: 'succeeded',
        params: { from: 'bucket' },
        progress: { done: 9 },
        attempts: 1,
        createdAt: at,
        startedAt: at,
        finishedAt: at,
      })
    ).job;
    expect(recorded).toMatchObject({ state: 'succeeded', attempts: 1, startedAt: at, finishedAt: at });
    // Nothing runs it: it had ended.
    await s.runner.idle(['written']);
    expect(s.contexts.has('job_adopted')).toBe(false);
  });
});
