import { describe, expect, it, onTestFinished } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { createJobsRepository } from '../../src/jobs/jobs.repository.js';
import type { NewJobRow } from '../../src/jobs/jobs.table.js';

const at = (ms: number) => new Date(Date.UTC(2026, 10, 28) + ms);

function repositoryOnMemory() {
  const database = openDatabase(':memory:');
  onTestFinished(() => database.close());
  const repository = createJobsRepository({ db: database.db });
  const add = (id: string, fields: Partial<NewJobRow> = {}) =>
    repository.insert({ id, kind: 'audit', siteId: null, state: 'queued', createdAt: at(0), ...fields });
  return { repository, add };
}

/**
 * The runner's SQLite writes that depend on a job's state are one statement each, as in the store both
 * dialects share (job-store.ts): nothing written beside them can fall between a read and the write.
 */
describe('the jobs repository’s conditional writes', () => {
  it('start a job only while it is queued, one attempt more each time', () => {
    const { repository, add } = repositoryOnMemory();
    add('queued', { attempts: 1 });
    expect(repository.start('queued', at(1))).toMatchObject({ state: 'running', attempts: 2, startedAt: at(1) });
    expect(repository.start('queued', at(2))).toBeUndefined();
    expect(repository.find('queued')).toMatchObject({ state: 'running', attempts: 2, startedAt: at(1) });

    add('cancelled');
    expect(repository.cancelQueued('cancelled', at(3), 'Cancelled.')).toMatchObject({ state: 'cancelled' });
    expect(repository.start('cancelled', at(4))).toBeUndefined();
    expect(repository.find('cancelled')).toMatchObject({ state: 'cancelled', attempts: 0, startedAt: null });
    expect(repository.start('gone', at(4))).toBeUndefined();
  });

  it('end a job only while it is unfinished, and a queued job only while it is queued', () => {
    const { repository, add } = repositoryOnMemory();
    add('queued');
    add('running', { state: 'running', startedAt: at(1) });
    add('done', { state: 'succeeded', finishedAt: at(2) });
    const end = { state: 'failed' as const, reason: 'interrupted', finishedAt: at(3) };

    expect(repository.write('running', end, 'unfinished')).toBe(true);
    expect(repository.write('done', end, 'unfinished')).toBe(false);
    expect(repository.find('done')).toMatchObject({ state: 'succeeded', reason: null, finishedAt: at(2) });

    expect(repository.update('running', { state: 'cancelled' }, 'queued')).toBeUndefined();
    expect(repository.update('queued', { ...end, state: 'cancelled' }, 'queued')).toMatchObject({
      state: 'cancelled',
      finishedAt: at(3),
    });
    expect(repository.update('gone', end, 'queued')).toBeUndefined();
  });

  it('revise only a finished job, requeue only a running one, and write unconditionally without a state', () => {
    const { repository, add } = repositoryOnMemory();
    add('queued');
    add('running', { state: 'running' });
    add('done', { state: 'failed', reason: 'site-unreachable', finishedAt: at(2) });

    expect(repository.write('queued', { message: 'revised' }, 'finished')).toBe(false);
    expect(repository.write('done', { message: 'revised' }, 'finished')).toBe(true);
    expect(repository.write('queued', { state: 'queued', message: 'again' }, 'running')).toBe(false);
    expect(repository.write('running', { state: 'queued', message: 'again' }, 'running')).toBe(true);
    expect(repository.write('done', { progress: '{"n":1}' })).toBe(true);
    expect(repository.write('gone', { progress: '{}' })).toBe(false);

    expect(repository.find('queued')).toMatchObject({ state: 'queued', message: null });
    expect(repository.find('running')).toMatchObject({ state: 'queued', message: 'again' });
    expect(repository.find('done')).toMatchObject({ state: 'failed', message: 'revised', progress: '{"n":1}' });
  });

  it('cancel a job only while it is queued: a running job is its run’s to end', () => {
    const { repository, add } = repositoryOnMemory();
    add('queued');
    add('running', { state: 'running', startedAt: at(1) });
    add('done', { state: 'succeeded', finishedAt: at(2) });
    expect(repository.cancelQueued('queued', at(5), 'Cancelled.')).toMatchObject({
      id: 'queued',
      state: 'cancelled',
      reason: 'cancelled',
      message: 'Cancelled.',
      finishedAt: at(5),
    });
    expect(repository.cancelQueued('queued', at(6), 'Again.')).toBeUndefined();
    expect(repository.cancelQueued('running', at(5), 'Cancelled.')).toBeUndefined();
    expect(repository.cancelQueued('done', at(5), 'Cancelled.')).toBeUndefined();
    expect(repository.cancelQueued('gone', at(5), 'Cancelled.')).toBeUndefined();
    expect(repository.find('queued')).toMatchObject({ state: 'cancelled', message: 'Cancelled.', finishedAt: at(5) });
    expect(repository.find('running')).toMatchObject({ state: 'running', finishedAt: null });
    expect(repository.find('done')).toMatchObject({ state: 'succeeded', finishedAt: at(2) });
  });
});
