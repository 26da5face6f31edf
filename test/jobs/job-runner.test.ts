import { describe, expect, it } from 'vitest';
import { jobEvent, wasCancelled, type JobKind } from '../../src/jobs/job-kind.js';
import { type JobsRepository } from '../../src/jobs/jobs.repository.js';
import type { JobState } from '../../src/jobs/jobs.table.js';
import { isAppError } from '../../src/shared/errors.js';
import { jobRunnerOnMemory } from '../support/job-runner-fixture.js';

/**
 * The job runner on its own: kinds with no table of their own, whose jobs run until the test
 * lets each of them finish, so what runs when (and what is waiting) can be watched.
 */
const until = async (condition: () => boolean) => {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
};
const ticks = async (count: number) => {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
};

function setup() {
  const { repository, logs, clock, runner } = jobRunnerOnMemory();
  const running = new Set<string>();
  const finish = new Map<string, (ok: boolean) => void>();
  let peak = 0;
  let count = 0;

  /** A kind whose jobs run until `finish(id)`; an abort ends them at once. */
  function gatedKind(overrides: Partial<JobKind> = {}): JobKind {
    return {
      pool: { name: 'gated', concurrency: 4 },
      exclusive: true,
      atShutdown: 'abort',
      cancelsWhileRunning: true,
      async run(job, signal) {
        running.add(job.id);
        peak = Math.max(peak, running.size);
        const ok = await new Promise<boolean>((resolve) => {
          finish.set(job.id, resolve);
          signal.addEventListener('abort', () => resolve(false), { once: true });
        });
        running.delete(job.id);
        const reason = ok ? null : wasCancelled(signal) ? 'cancelled' : signal.aborted ? 'interrupted' : 'site-error';
        const state = ok ? 'succeeded' : reason === 'cancelled' ? 'cancelled' : 'failed';
        const outcome = { state, reason } as const;
        if (ok || reason === 'cancelled') return { events: [], outcome };
        return {
          events: [
            jobEvent('backup.failed', { siteId: job.siteId, backupId: job.id, kind: 'manual', reason, message: 'no' }),
          ],
          interrupted: signal.aborted,
          outcome,
        };
      },
      cancelQueued: () => undefined,
      recover: { running: () => ({ events: [] }) },
      ...overrides,
    };
  }

  function add(kind: string, siteId: string | null, state: JobState = 'queued') {
    count++;
    return repository.insert({
      id: `job_${String(count).padStart(26, '0')}`,
      kind,
      siteId,
      state,
      createdAt: clock.now(),
    });
  }
  function submit(kind: string, siteId: string | null) {
    const job = add(kind, siteId);
    runner.enqueue(kind, job.id, siteId);
    return job.id;
  }
  const problemOf = async (work: () => Promise<unknown>) => {
    try {
      await work();
    } catch (error) {
      if (isAppError(error)) return error.problem.name;
      throw error;
    }
    return null;
  };
  return {
    repository,
    runner,
    logs,
    running,
    gatedKind,
    add,
    submit,
    problemOf,
    finish: (id: string, ok = true) => finish.get(id)!(ok),
    peak: () => peak,
    stateOf: (id: string) => repository.find(id)?.state,
  };
}

type Setup = ReturnType<typeof setup> & { repository: JobsRepository };

describe('a job', () => {
  it('goes from queued to running to succeeded, counting its attempts and times', async () => {
    const s: Setup = setup();
    s.runner.register('gated', s.gatedKind());
    const id = s.submit('gated', 'site_a');
    expect(s.stateOf(id)).toBe('queued');
    await until(() => s.running.has(id));
    expect(s.repository.find(id)).toMatchObject({ state: 'running', attempts: 1, finishedAt: null });
    s.finish(id);
    await s.runner.idle(['gated']);
    expect(s.repository.find(id)).toMatchObject({ state: 'succeeded', attempts: 1 });
    expect(s.repository.find(id)!.finishedAt).toBeInstanceOf(Date);
  });

  it('ends failed with its reason, and the runner logs the event its kind reports', async () => {
    const s = setup();
    s.runner.register('gated', s.gatedKind());
    const id = s.submit('gated', 'site_a');
    await until(() => s.running.has(id));
    s.finish(id, false);
    await s.runner.idle(['gated']);
    expect(s.repository.find(id)).toMatchObject({ state: 'failed', reason: 'site-error' });
    expect(s.logs.events('backup.failed')).toEqual([expect.objectContaining({ backupId: id, reason: 'site-error' })]);
  });
});

describe('scheduling', () => {
  it('runs one exclusive job per site at a time, and different sites side by side', async () => {
    const s = setup();
    s.runner.register('gated', s.gatedKind());
    const [a1, a2, b1] = [s.submit('gated', 'site_a'), s.submit('gated', 'site_a'), s.submit('gated', 'site_b')];
    await until(() => s.running.has(a1) && s.running.has(b1));
    await ticks(20);
    expect(s.running.has(a2)).toBe(false);
    expect(s.stateOf(a2)).toBe('queued');
    s.finish(a1);
    await until(() => s.running.has(a2));
    s.finish(a2);
    s.finish(b1);
    await s.runner.idle(['gated']);
  });

  it('runs jobs of a kind that is not exclusive side by side on one site', async () => {
    const s = setup();
    s.runner.register('audit-like', s.gatedKind({ exclusive: false }));
    const [first, second] = [s.submit('audit-like', 'site_a'), s.submit('audit-like', 'site_a')];
    await until(() => s.running.has(first) && s.running.has(second));
    s.finish(first);
    s.finish(second);
    await s.runner.idle(['audit-like']);
  });

  it('bounds a pool to its concurrency, and kinds naming the same pool share its slots', async () => {
    const s = setup();
    const pool = { name: 'shared', concurrency: 2 };
    s.runner.register('one', s.gatedKind({ pool }));
    s.runner.register('other', s.gatedKind({ pool }));
    const ids = [s.submit('one', 'site_a'), s.submit('one', 'site_b'), s.submit('other', 'site_c')];
    await until(() => s.running.size === 2);
    await ticks(20);
    expect(s.running.size).toBe(2);
    expect(s.runner.queueDepth(['one'])).toBe(3);
    s.finish([...s.running][0]!);
    await until(() => ids.filter((id) => s.running.has(id) || s.stateOf(id) === 'succeeded').length === 3);
    for (const id of [...s.running]) s.finish(id);
    await s.runner.idle(['one', 'other']);
    expect(s.peak()).toBe(2);
    expect(ids.map(s.stateOf)).toEqual(['succeeded', 'succeeded', 'succeeded']);
  });
});

describe('recovery at start', () => {
  it('fails running jobs as interrupted, queues waiting ones again, and lets the kind refuse or retry', async () => {
    const s = setup();
    const wasRunning = s.add('gated', 'site_a', 'running');
    const waiting = s.add('gated', 'site_b');
    const stale = s.add('gated', 'site_c');
    s.runner.register(
      'gated',
      s.gatedKind({
        recover: {
          running(job) {
            return {
              events: [
                jobEvent('backup.failed', {
                  siteId: job.siteId,
                  backupId: job.id,
                  kind: 'manual',
                  reason: 'interrupted',
                  message: 'stopped',
                }),
              ],
            };
          },
          queued(job) {
            if (job.id !== stale.id) return 'requeue';
            return { events: [], outcome: { state: 'failed', reason: 'backup-not-found' } };
          },
          afterwards: async () => [{ job: wasRunning, fields: { retryId: 'job_retry' } }],
        },
      }),
    );

    expect(await s.runner.recover(['gated'])).toEqual({ requeued: 1, interrupted: 1 });
    expect(s.repository.find(wasRunning.id)).toMatchObject({ state: 'failed', reason: 'interrupted' });
    expect(s.repository.find(stale.id)).toMatchObject({ state: 'failed', reason: 'backup-not-found' });
    await until(() => s.running.has(waiting.id));
    expect(s.logs.events('backup.failed').map((event) => event.backupId)).toEqual([wasRunning.id]);
    expect(s.logs.events('job.interrupted').map(({ jobId, action, retryId }) => ({ jobId, action, retryId }))).toEqual([
      { jobId: wasRunning.id, action: 'failed', retryId: undefined },
      { jobId: waiting.id, action: 'requeued', retryId: undefined },
      { jobId: wasRunning.id, action: 'retried', retryId: 'job_retry' },
    ]);
    s.finish(waiting.id);
    await s.runner.idle(['gated']);
    expect(s.stateOf(waiting.id)).toBe('succeeded');
  });
});

describe('recovery of a kind that resumes where it stopped', () => {
  it('queues a running job again with its message, logged requeued only, and runs it once more', async () => {
    const s = setup();
    const wasRunning = s.add('gated', 'site_a', 'running');
    s.repository.write(wasRunning.id, { attempts: 1, progress: JSON.stringify({ phase: 'after-check' }) });
    s.runner.register('gated', s.gatedKind({ recover: { running: () => ({ requeue: true, message: 'resumed' }) } }));

    expect(await s.runner.recover(['gated'])).toEqual({ requeued: 1, interrupted: 0 });
    expect(s.logs.events('job.interrupted').map(({ jobId, action }) => ({ jobId, action }))).toEqual([
      { jobId: wasRunning.id, action: 'requeued' },
    ]);
    await until(() => s.running.has(wasRunning.id));
    expect(s.repository.find(wasRunning.id)).toMatchObject({ state: 'running', attempts: 2, message: 'resumed' });
    s.finish(wasRunning.id);
    await s.runner.idle(['gated']);
    expect(s.repository.find(wasRunning.id)).toMatchObject({ state: 'succeeded', attempts: 2 });
  });
});

describe('cancel', () => {
  it('cancels a queued job at once, in the same transaction as its kind’s own row, and never runs it', async () => {
    const s = setup();
    const cancelledRows: string[] = [];
    s.runner.register(
      'gated',
      s.gatedKind({
        pool: { name: 'one-slot', concurrency: 1 },
        cancelQueued: (job) => {
          cancelledRows.push(`${job.id} ${job.state}`);
          return { progress: { left: 'unstarted' } };
        },
      }),
    );
    const blocker = s.submit('gated', 'site_a');
    const waiting = s.submit('gated', 'site_b');
    await until(() => s.running.has(blocker));
    const cancelled = await s.runner.cancel(waiting);
    expect(cancelled).toMatchObject({ state: 'cancelled', reason: 'cancelled' });
    expect(JSON.parse(cancelled.progress)).toEqual({ left: 'unstarted' });
    expect(s.repository.find(waiting)).toEqual(cancelled);
    // The hook is given the row as cancelled, in the transaction that cancelled it.
    expect(cancelledRows).toEqual([`${waiting} cancelled`]);
    expect(await s.problemOf(() => s.runner.cancel(waiting))).toBe('job-finished');
    expect(s.logs.events('job.cancelled')).toEqual([
      expect.objectContaining({ kind: 'gated', jobId: waiting, siteId: 'site_b', state: 'queued' }),
    ]);
    s.finish(blocker);
    await s.runner.idle(['gated']);
    expect(s.stateOf(waiting)).toBe('cancelled');
    expect(s.peak()).toBe(1);
  });

  it('asks a running job of a cancellable kind to stop; it ends cancelled', async () => {
    const s = setup();
    s.runner.register('gated', s.gatedKind());
    const id = s.submit('gated', 'site_a');
    await until(() => s.running.has(id));
    expect((await s.runner.cancel(id)).state).toBe('running');
    await s.runner.idle(['gated']);
    expect(s.repository.find(id)).toMatchObject({ state: 'cancelled', reason: 'cancelled' });
    expect(s.logs.events('job.cancelled')).toEqual([expect.objectContaining({ jobId: id, state: 'running' })]);
    expect(s.logs.events('job.interrupted')).toEqual([]);
  });

  it('refuses a running job its kind cannot stop halfway, a finished job and an unknown one', async () => {
    const s = setup();
    s.runner.register('restore-like', s.gatedKind({ cancelsWhileRunning: false }));
    const id = s.submit('restore-like', 'site_a');
    await until(() => s.running.has(id));
    expect(await s.problemOf(() => s.runner.cancel(id))).toBe('job-not-cancellable');
    expect(s.stateOf(id)).toBe('running');
    s.finish(id);
    await s.runner.idle(['restore-like']);
    expect(await s.problemOf(() => s.runner.cancel(id))).toBe('job-finished');
    expect(await s.problemOf(() => s.runner.cancel('job_unknown'))).toBe('job-not-found');
  });

  it('says a job started with its start held (its row still queued) is running when it cannot be cancelled', async () => {
    const s = setup();
    s.runner.register('held', s.gatedKind({ cancelsWhileRunning: false, heldStart: true }));
    const id = s.submit('held', 'site_a');
    await until(() => s.running.has(id));
    expect(s.stateOf(id)).toBe('queued');
    let refusal: unknown;
    try {
      await s.runner.cancel(id);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toMatchObject({ problem: { name: 'job-not-cancellable' }, extensions: { state: 'running' } });
    s.finish(id);
    await s.runner.idle(['held']);
    expect(s.stateOf(id)).toBe('succeeded');
  });
});

describe('shutdown', () => {
  it('aborts `abort` kinds at once, gives `grace` kinds the grace period, and leaves queued jobs queued', async () => {
    const s = setup();
    s.runner.register('abort-kind', s.gatedKind({ pool: { name: 'a', concurrency: 1 } }));
    s.runner.register('grace-kind', s.gatedKind({ pool: { name: 'g', concurrency: 1 }, atShutdown: 'grace' }));
    const aborted = s.submit('abort-kind', 'site_a');
    const waiting = s.submit('abort-kind', 'site_b');
    const graceful = s.submit('grace-kind', 'site_c');
    await until(() => s.running.has(aborted) && s.running.has(graceful));

    const stopped = s.runner.stop(['abort-kind', 'grace-kind'], { graceMs: 5_000 });
    await until(() => s.stateOf(aborted) === 'failed');
    expect(s.repository.find(aborted)).toMatchObject({ reason: 'interrupted' });
    expect(s.stateOf(graceful)).toBe('running');
    s.finish(graceful);
    expect(await stopped).toBe(true);
    expect(s.stateOf(graceful)).toBe('succeeded');
    expect(s.stateOf(waiting)).toBe('queued');
    expect(s.logs.events('job.interrupted')).toEqual([expect.objectContaining({ jobId: aborted, action: 'failed' })]);
  });
});

describe('exclusive jobs of different pools', () => {
  it('take turns on one site (a backup and a site update), while other sites run beside them', async () => {
    const s = setup();
    s.runner.register('gated', s.gatedKind());
    s.runner.register('other', s.gatedKind({ pool: { name: 'other', concurrency: 4 } }));
    const first = s.submit('gated', 'site_a');
    const second = s.submit('other', 'site_a');
    const elsewhere = s.submit('other', 'site_b');
    await until(() => s.running.has(first) && s.running.has(elsewhere));
    await ticks(20);
    expect(s.stateOf(second)).toBe('queued');
    s.finish(first);
    await until(() => s.running.has(second));
    s.finish(second);
    s.finish(elsewhere);
    await s.runner.idle(['gated', 'other']);
    expect([s.stateOf(first), s.stateOf(second), s.stateOf(elsewhere)]).toEqual([
      'succeeded',
      'succeeded',
      'succeeded',
    ]);
  });
});
