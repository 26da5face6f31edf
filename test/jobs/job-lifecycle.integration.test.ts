import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.js';
import type { StateDatabase, StateDb } from '../../src/db/state-db.js';
import { writtenAtOnce } from '../../src/db/write-batch.js';
import type { Settlement } from '../../src/jobs/job-kind.js';
import { sqliteLifecycleStore, type JobLifecycleStore } from '../../src/jobs/job-lifecycle-store.js';
import { createJobRowWriter } from '../../src/jobs/job-rows.js';
import { createJobStore } from '../../src/jobs/job-store.js';
import { createJobsRepository, type JobsRepository } from '../../src/jobs/jobs.repository.js';
import type { JobRow } from '../../src/jobs/jobs.table.js';
import { createFakeClock } from '../../src/shared/clock.js';
import { createCapturedLogger } from '../support/log-capture.js';
import { dialects, stateDatabaseFor } from '../support/dialects.js';

/**
 * The job runner's lifecycle writes (job-rows.ts) through its lifecycle store (issue 34, "The runner's move" in
 * docs/design/cluster-state.md): on both dialects through job-store.ts, whose reports go on a chain per job, and
 * on SQLite through the daemon's prepared statements, whose reports are written at once.
 */
const succeeded: Settlement = { events: [], outcome: { state: 'succeeded' } };

/** The SQLite statements where the dialect has them; on PostgreSQL nothing of the job rows' batch is used here. */
function repositoryOf(state: StateDatabase): JobsRepository {
  if (state.dialect === 'sqlite') return createJobsRepository({ db: state.db as unknown as Db });
  return new Proxy({} as JobsRepository, {
    get: (_target, name) => () => {
      throw new Error(`the SQLite repository's ${String(name)} was used on PostgreSQL`);
    },
  });
}

const stores: [string, (state: StateDatabase) => JobLifecycleStore][] = [
  ['the job store', (state) => createJobStore(state)],
  ['the SQLite statements', (state) => sqliteLifecycleStore(repositoryOf(state))],
];

describe.each(dialects)('a job’s lifecycle on %s', (dialect) => {
  const state = stateDatabaseFor(dialect, 'job-lifecycle');

  describe.each(stores.filter(([name]) => dialect === 'sqlite' || name === 'the job store'))(
    'through %s',
    (storeName, storeOf) => {
      function setUp(wrap: (store: JobLifecycleStore) => JobLifecycleStore = (store) => store) {
        const clock = createFakeClock(new Date('2026-11-29T08:00:00Z'));
        const logs = createCapturedLogger();
        const jobStore = createJobStore(state());
        const store = wrap(storeOf(state()));
        const rows = createJobRowWriter({ repository: repositoryOf(state()), store, clock, logger: logs.logger });
        const queue = (id: string) =>
          jobStore.insert({ id, kind: 'audit', siteId: 'site_a', state: 'queued', createdAt: clock.now() });
        /** A kind's own row, in these tests another job row. */
        const ownRow = (id: string) => ({
          id,
          kind: 'own',
          siteId: 'site_a',
          state: 'queued' as const,
          createdAt: clock.now(),
        });
        return { clock, logs, jobStore, rows, queue, ownRow };
      }

      it('starts a queued job once, writes every report it makes without awaiting in order, then its end', async () => {
        const { clock, jobStore, rows, queue } = setUp();
        await queue('job_1');
        const started = await rows.start('job_1');
        expect(started?.job).toMatchObject({ state: 'running', attempts: 1 });
        expect(await rows.start('job_1')).toBeUndefined();

        await rows.runStarted(started!, async (_job, context) => {
          for (let step = 1; step <= 20; step++) context.progress({ step });
          context.params({ kind: 'full' });
          clock.advance(5_000);
          return succeeded;
        });
        const ended = await jobStore.find('job_1');
        expect(ended).toMatchObject({ state: 'succeeded', message: null, attempts: 1 });
        expect(JSON.parse(ended!.progress)).toEqual({ step: 20 });
        expect(JSON.parse(ended!.params)).toEqual({ kind: 'full' });
        expect(ended!.finishedAt!.getTime() - ended!.startedAt!.getTime()).toBe(5_000);
      });

      it('writes a job with its kind’s own row together: in the store’s transaction, or at once in SQLite’s', async () => {
        const { clock, jobStore, rows, ownRow } = setUp();
        const newJob = (id: string) => ({ id, kind: 'audit', siteId: 'site_a', createdAt: clock.now() });
        // (the kind's own row here is another job row)
        const written = await rows.create(newJob('job_1'), (tx) =>
          tx
            ? jobStore.insert(ownRow('own_1'), tx).then((row) => row.id)
            : repositoryOf(state()).insert(ownRow('own_1')).id,
        );
        expect(written).toMatchObject({ job: { id: 'job_1', state: 'queued' }, own: 'own_1' });
        expect(await jobStore.find('own_1')).toMatchObject({ kind: 'own' });

        // Either failing writes neither.
        await expect(
          rows.create(newJob('job_2'), () => {
            throw new Error('the audit row could not be written');
          }),
        ).rejects.toThrow('the audit row could not be written');
        expect(await jobStore.find('job_2')).toBeUndefined();
        if (storeName === 'the SQLite statements')
          // A promise would be written after the transaction ended.
          await expect(rows.create(newJob('job_3'), async () => 'late')).rejects.toThrow('must be made at once');
        expect(await jobStore.find('job_3')).toBeUndefined();
      });

      it('writes a job that ended elsewhere as it ended, with its kind’s own row or neither', async () => {
        const { clock, jobStore, rows, ownRow } = setUp();
        const ended = (id: string) => ({
          id,
          kind: 'backup',
          siteId: 'site_a',
          createdAt: clock.now(),
          state: 'succeeded' as const,
          attempts: 1,
          startedAt: clock.now(),
          finishedAt: clock.now(),
        });
        // (an adopted backup's row here is another job row)
        const written = await rows.record(ended('job_1'), (tx) =>
          tx
            ? jobStore.insert(ownRow('own_1'), tx).then((row) => row.id)
            : repositoryOf(state()).insert(ownRow('own_1')).id,
        );
        expect(written).toMatchObject({ job: { id: 'job_1', state: 'succeeded', attempts: 1 }, own: 'own_1' });
        expect(await jobStore.find('own_1')).toMatchObject({ kind: 'own' });
        expect(await rows.record(ended('job_2'))).toMatchObject({ job: { id: 'job_2', state: 'succeeded' } });
        await expect(
          rows.record(ended('job_3'), () => {
            throw new Error('the adopted backup could not be written');
          }),
        ).rejects.toThrow('the adopted backup could not be written');
        expect(await jobStore.find('job_3')).toBeUndefined();
      });

      it('leaves a job ended while it was queued as it is: not started, its end not written over', async () => {
        const { jobStore, rows, queue } = setUp();
        await queue('job_1');
        expect(await rows.endQueued('job_1', { state: 'cancelled', reason: 'cancelled' })).toMatchObject({
          state: 'cancelled',
        });
        expect(await rows.start('job_1')).toBeUndefined();
        expect(await rows.endQueued('job_1', { state: 'failed', reason: 'interrupted' })).toMatchObject({
          state: 'cancelled',
          reason: 'cancelled',
        });
        await rows.finish('job_1', { state: 'succeeded' });
        expect(await jobStore.find('job_1')).toMatchObject({ state: 'cancelled', attempts: 0, startedAt: null });
      });

      it('ends a job whose work throws as failed (internal-error) after its reports, and throws on', async () => {
        const { jobStore, rows, queue } = setUp();
        await queue('job_1');
        const run = rows.runStarted((await rows.start('job_1'))!, async (_job, context) => {
          context.progress({ step: 1 });
          throw new Error('a bug in the kind');
        });
        await expect(run).rejects.toThrow('a bug in the kind');
        const ended = await jobStore.find('job_1');
        expect(ended).toMatchObject({ state: 'failed', reason: 'internal-error', message: 'a bug in the kind' });
        expect(JSON.parse(ended!.progress)).toEqual({ step: 1 });
      });

      it('holds a kind’s start, progress and end in its write batch, committed with its own writes or rolled back with them', async () => {
        const { clock, jobStore, rows, queue, ownRow } = setUp();
        await queue('job_1');
        // (the kind's own writes here are other job rows: on the batch's transaction, or at once on SQLite)
        const own = (id: string) => (tx?: StateDb) =>
          tx ? jobStore.insert(ownRow(id), tx) : repositoryOf(state()).insert(ownRow(id));
        const started = await rows.start('job_1', true);
        expect(started?.job).toMatchObject({ state: 'running', attempts: 1 });
        // Held: the row still reads queued until the kind's first commit.
        expect(await jobStore.find('job_1')).toMatchObject({ state: 'queued', attempts: 0 });

        const settlement = await rows.runStarted(started!, async (_job, { batch, hold }) => {
          // A commit that fails rolls back what it holds and its own write; they stay held for the next one.
          await expect(
            batch.commit((tx) => {
              const written = own('own_0')(tx);
              const refuse = () => {
                throw new Error('the first request’s row was refused');
              };
              return written instanceof Promise ? written.then(refuse) : refuse();
            }),
          ).rejects.toThrow('the first request’s row was refused');
          expect(await jobStore.find('job_1')).toMatchObject({ state: 'queued' });
          expect(await jobStore.find('own_0')).toBeUndefined();

          expect((await batch.commit(own('own_1')))?.id).toBe('own_1');
          expect(await jobStore.find('job_1')).toMatchObject({ state: 'running', attempts: 1 });
          hold.progress({ items: 1 });
          const outcome = { state: 'succeeded' as const, progress: { items: 2 }, finishedAt: clock.now() };
          hold.outcome(outcome);
          expect(JSON.parse((await jobStore.find('job_1'))!.progress)).toEqual({});
          await batch.commit(own('own_2'));
          clock.advance(60_000);
          // The end it held and committed: not written again.
          return { events: [], outcome };
        });
        expect(settlement.outcome?.state).toBe('succeeded');
        const ended = await jobStore.find('job_1');
        expect(ended).toMatchObject({ state: 'succeeded', attempts: 1 });
        expect(ended!.finishedAt!.getTime() - ended!.startedAt!.getTime()).toBe(0);
        expect(JSON.parse(ended!.progress)).toEqual({ items: 2 });
        expect(await jobStore.find('own_2')).toMatchObject({ kind: 'own' });
      });

      it('writes a parent with its children and the job it applies revised together; a second apply writes nothing', async () => {
        const { clock, jobStore, rows } = setUp();
        await rows.record({
          id: 'preview_1',
          kind: 'audit',
          siteId: null,
          createdAt: clock.now(),
          state: 'succeeded',
          progress: { planned: 2 },
          attempts: 1,
          startedAt: clock.now(),
        });
        const applying = {
          id: 'preview_1',
          revision: (current: JobRow | undefined, appliedAs: string) => {
            const progress = JSON.parse(current!.progress) as { appliedAs?: string };
            if (progress.appliedAs) throw new Error(`applied already as ${progress.appliedAs}`);
            return { progress: { ...progress, appliedAs } };
          },
        };
        const parent = (id: string) => ({ id, kind: 'audit', siteId: null, createdAt: clock.now() });
        const child = (id: string) => ({ id, kind: 'audit', siteId: 'site_a', createdAt: clock.now() });
        const written = await rows.createWithChildren(
          parent('run_1'),
          [child('run_1-00000'), { ...child('run_1-00001'), ended: { state: 'cancelled', reason: 'site-gone' } }],
          applying,
        );
        expect(written.job).toMatchObject({ id: 'run_1', state: 'queued' });
        expect((await jobStore.find('run_1-00000'))?.state).toBe('queued');
        expect(await jobStore.find('run_1-00001')).toMatchObject({ state: 'cancelled', reason: 'site-gone' });
        expect(JSON.parse((await jobStore.find('preview_1'))!.progress)).toEqual({ planned: 2, appliedAs: 'run_1' });

        await expect(rows.createWithChildren(parent('run_2'), [child('run_2-00000')], applying)).rejects.toThrow(
          'applied already as run_1',
        );
        expect(await jobStore.find('run_2')).toBeUndefined();
        expect(await jobStore.find('run_2-00000')).toBeUndefined();

        // Revisions touch finished jobs only.
        await rows.revise([
          { id: 'preview_1', message: 'revised' },
          { id: 'run_1-00000', message: 'not finished' },
        ]);
        expect(await jobStore.find('preview_1')).toMatchObject({ message: 'revised' });
        expect(await jobStore.find('run_1-00000')).toMatchObject({ state: 'queued', message: null });
      });

      it('ends a queued child from a kind’s hook, in the hook’s transaction', async () => {
        const { jobStore, rows, queue } = setUp();
        await queue('job_1');
        const outcome = { state: 'cancelled', reason: 'cancelled', message: 'its bulk update was cancelled' } as const;
        const store = storeOf(state());
        const ended = store.transactional
          ? await store.transactional.transaction(async (tx) => {
              const row = await rows.endQueuedIn('job_1', outcome, tx);
              // Rolled back with the hook's transaction when it throws: written here, then kept.
              return row;
            })
          : writtenAtOnce(rows.endQueuedIn('job_1', outcome));
        expect(ended).toMatchObject({ state: 'cancelled', message: 'its bulk update was cancelled' });
        expect(await jobStore.find('job_1')).toMatchObject({ state: 'cancelled', reason: 'cancelled' });
      });

      it('logs a report a store that writes later fails to write, and writes the job’s end all the same', async () => {
        const { logs, jobStore, rows, queue } = setUp((store) => ({
          ...store,
          writeNow: undefined,
          write: (id, changes) =>
            changes.message === 'refused'
              ? Promise.reject(new Error('the database refused it'))
              : store.write(id, changes),
        }));
        await queue('job_1');
        await rows.runStarted((await rows.start('job_1'))!, async (_job, context) => {
          context.note('refused');
          context.progress({ step: 2 });
          return succeeded;
        });
        expect(await jobStore.find('job_1')).toMatchObject({ state: 'succeeded', message: null });
        expect(JSON.parse((await jobStore.find('job_1'))!.progress)).toEqual({ step: 2 });
        expect(logs.records()).toContainEqual(
          expect.objectContaining({ level: 'error', jobId: 'job_1', msg: 'a job report was not written' }),
        );
      });
    },
  );
});
