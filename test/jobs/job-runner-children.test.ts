import { describe, expect, it } from 'vitest';
import type { JobContext, JobKind, JobOutcome } from '../../src/jobs/job-kind.js';
import type { JobRow } from '../../src/jobs/jobs.table.js';
import { jobRunnerOnMemory } from '../support/job-runner-fixture.js';

/**
 * What a parent job with children needs of the runner, which writes every row of them (a bulk update and its
 * sites, issue 34): the parent written with its children, a child its parent leaves unstarted, a child whose
 * start and end commit with the kind's own writes (its write batch), a finished job's outcome revised.
 */
const tick = () => new Promise((resolve) => setImmediate(resolve));

function setup() {
  const { repository, logs, clock, runner } = jobRunnerOnMemory();
  const ran: string[] = [];
  const parent: JobKind = {
    pool: { name: 'parents', concurrency: 1 },
    exclusive: false,
    atShutdown: 'abort',
    cancelsWhileRunning: false,
    run: (job) => {
      ran.push(job.id);
      return Promise.resolve({ events: [], outcome: { state: 'succeeded' } });
    },
    cancelQueued: () => undefined,
    recover: { running: () => ({ events: [] }) },
  };
  /** The child's work, as each test has it: its context, and the end it returns. */
  let work: (job: JobRow, context: JobContext) => Promise<JobOutcome> = () =>
    Promise.resolve({ state: 'succeeded' as const });
  const child: JobKind = {
    pool: { name: 'children', concurrency: 4 },
    exclusive: true,
    heldStart: true,
    atShutdown: 'grace',
    cancelsWhileRunning: false,
    run: async (job, _signal, context) => {
      ran.push(job.id);
      return { events: [], outcome: await work(job, context) };
    },
    cancelQueued: () => undefined,
    recover: { running: () => ({ events: [] }), queued: () => 'leave' },
  };
  runner.register('parent', parent);
  runner.register('child', child);
  const now = clock.now();
  const family = () =>
    runner.submitWithChildren(
      { id: 'job_parent', kind: 'parent', siteId: null, params: { sites: 2 }, createdAt: now },
      [
        { id: 'job_parent-00000', kind: 'child', siteId: 'site_a', params: { at: 0 }, createdAt: now },
        {
          id: 'job_parent-00001',
          kind: 'child',
          siteId: 'site_b',
          createdAt: now,
          ended: { state: 'cancelled', reason: 'site-not-connected', message: 'the site is pending' },
        },
      ],
    );
  return {
    repository,
    runner,
    clock,
    logs,
    ran,
    family,
    setWork: (next: typeof work) => void (work = next),
    idle: () => runner.idle(['parent', 'child']),
  };
}

describe('a parent job and its children, written by the runner', () => {
  it('writes the parent with its children in one transaction, and runs the parent only', async () => {
    const { repository, runner, ran, family, idle } = setup();
    const written = await family();
    expect(written.children.map((row) => [row.id, row.state, row.reason, row.params])).toEqual([
      ['job_parent-00000', 'queued', null, '{"at":0}'],
      ['job_parent-00001', 'cancelled', 'site-not-connected', '{}'],
    ]);
    // The rows answered are the rows stored.
    expect(repository.find('job_parent-00000')).toEqual(written.children[0]);
    expect(repository.find('job_parent-00001')).toEqual(written.children[1]);
    await idle();
    expect(ran).toEqual(['job_parent']);
    expect(repository.find('job_parent-00000')?.state).toBe('queued');
    // One child fails to be written (its id taken): neither the parent nor any child is.
    await expect(
      runner.submitWithChildren({ id: 'job_other', kind: 'parent', siteId: null, createdAt: new Date() }, [
        { id: 'job_other-00000', kind: 'child', siteId: 'site_a', createdAt: new Date() },
        { id: 'job_parent-00000', kind: 'child', siteId: 'site_a', createdAt: new Date() },
      ]),
    ).rejects.toThrow();
    expect(repository.find('job_other')).toBeUndefined();
    expect(repository.find('job_other-00000')).toBeUndefined();
  });

  it('ends a queued child its parent leaves unstarted, never one that has started or ended', async () => {
    const { repository, runner, family, idle } = setup();
    await family();
    await idle();
    // Started (as its parent's start would have it): stays running.
    repository.write('job_parent-00000', { state: 'running' });
    expect(await runner.endQueued('job_parent-00000', { state: 'cancelled' })).toMatchObject({ state: 'running' });
    repository.write('job_parent-00000', { state: 'queued' });
    const left = await runner.endQueued('job_parent-00000', {
      state: 'cancelled',
      reason: 'window-closed',
      message: 'late',
    });
    expect(left).toMatchObject({ state: 'cancelled', reason: 'window-closed', message: 'late', attempts: 0 });
    expect(left?.finishedAt).toBeInstanceOf(Date);
    // Already ended: stays as it is.
    expect(await runner.endQueued('job_parent-00001', { state: 'failed', reason: 'x' })).toMatchObject({
      state: 'cancelled',
      reason: 'site-not-connected',
    });
    expect(await runner.endQueued('job_nothing', { state: 'failed' })).toBeUndefined();
  });

  it('holds a child’s start and end in its write batch, committed with the kind’s own writes', async () => {
    const { repository, runner, clock, family, setWork, idle } = setup();
    await family();
    await idle();
    const seen: (string | undefined)[] = [];
    let ended: unknown;
    setWork(async (_job, { batch, hold }) => {
      await tick();
      // Nothing committed yet: the row still says queued.
      seen.push(repository.find('job_parent-00000')?.state);
      hold.progress({ items: 1 });
      const outcome: JobOutcome = { state: 'succeeded', progress: { items: 2 }, finishedAt: clock.now() };
      ended = hold.outcome(outcome);
      seen.push(repository.find('job_parent-00000')?.state);
      batch.commit();
      seen.push(repository.find('job_parent-00000')?.state);
      // Written already: the runner does not write it again (a later change of the row stays).
      repository.write('job_parent-00000', { message: 'written after' });
      return outcome;
    });
    runner.enqueue('child', 'job_parent-00000', 'site_a');
    await idle();
    expect(seen).toEqual(['queued', 'queued', 'succeeded']);
    expect(ended).toEqual({
      state: 'succeeded',
      reason: null,
      message: null,
      progress: '{"items":2}',
      finishedAt: clock.now(),
    });
    expect(repository.find('job_parent-00000')).toMatchObject({
      state: 'succeeded',
      attempts: 1,
      startedAt: clock.now(),
      progress: '{"items":2}',
      message: 'written after',
    });
  });

  it('drops what a child held and did not commit, and writes the end it returns instead', async () => {
    const { repository, runner, family, setWork, idle } = setup();
    await family();
    await idle();
    setWork(async (_job, { hold }) => {
      await tick();
      hold.progress({ items: 1 });
      hold.outcome({ state: 'succeeded', progress: { items: 2 } });
      return { state: 'failed', reason: 'internal-error', message: 'crashed' };
    });
    runner.enqueue('child', 'job_parent-00000', 'site_a');
    await idle();
    // Its start was held too: the row goes from queued to failed, as a job that never committed a write.
    expect(repository.find('job_parent-00000')).toMatchObject({
      state: 'failed',
      reason: 'internal-error',
      message: 'crashed',
      progress: '{}',
      attempts: 0,
      startedAt: null,
    });
  });

  it('writes a parent with the finished job it applies revised, or neither when that job refuses', async () => {
    const { repository, runner, family, idle } = setup();
    await family();
    await idle();
    const applying = (id: string) => ({
      id: 'job_parent',
      revision: (current: JobRow | undefined, appliedAs: string) => {
        const progress = JSON.parse(current!.progress) as { appliedAs?: string };
        if (progress.appliedAs) throw new Error(`applied already as ${progress.appliedAs}`);
        expect(appliedAs).toBe(id);
        return { progress: { appliedAs } };
      },
    });
    const run = (id: string) =>
      runner.submitWithChildren(
        { id, kind: 'parent', siteId: null, createdAt: new Date() },
        [{ id: `${id}-00000`, kind: 'child', siteId: 'site_a', createdAt: new Date() }],
        { applying: applying(id) },
      );
    await run('job_first');
    expect(JSON.parse(repository.find('job_parent')!.progress)).toEqual({ appliedAs: 'job_first' });
    // The second is read where it would be written: it refuses, and nothing of it is.
    await expect(run('job_second')).rejects.toThrow('applied already as job_first');
    expect(repository.find('job_second')).toBeUndefined();
    expect(repository.find('job_second-00000')).toBeUndefined();
    expect(JSON.parse(repository.find('job_parent')!.progress)).toEqual({ appliedAs: 'job_first' });
  });

  it('revises a finished job’s outcome only; a job not finished stays as it is', async () => {
    const { repository, runner, family, idle } = setup();
    await family();
    await idle();
    await runner.revise([
      { id: 'job_parent', progress: { appliedAs: 'bulk_x' } },
      { id: 'job_parent-00001', state: 'failed', reason: 'interrupted' },
      { id: 'job_parent-00000', state: 'failed' },
    ]);
    expect(repository.find('job_parent')).toMatchObject({ state: 'succeeded', progress: '{"appliedAs":"bulk_x"}' });
    expect(repository.find('job_parent-00001')).toMatchObject({
      state: 'failed',
      reason: 'interrupted',
      message: 'the site is pending',
    });
    expect(repository.find('job_parent-00000')).toMatchObject({ state: 'queued' });
  });

  it('leaves a queued child at start when its kind says so: not run, not logged', async () => {
    const { repository, runner, logs, ran, family, idle } = setup();
    await family();
    await idle();
    expect(await runner.recover(['child'])).toEqual({ requeued: 0, interrupted: 0 });
    await idle();
    expect(repository.find('job_parent-00000')?.state).toBe('queued');
    expect(ran).toEqual(['job_parent']);
    expect(logs.events('job.interrupted')).toEqual([]);
  });
});
