import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import type { StateDb } from '../../src/db/state-db.js';
import type { StoredEnd } from '../../src/jobs/job-lifecycle-store.js';
import { createJobStore } from '../../src/jobs/job-store.js';
import type { JobRow, NewJobRow } from '../../src/jobs/jobs.table.js';
import { dialects, stateDatabaseFor } from '../support/dialects.js';

/**
 * The jobs rows on both dialects (issue 34, step 2 of docs/design/cluster-state.md): one test body on
 * SQLite `:memory:` and on a database of the run's PostgreSQL cluster (test/support/dialects.ts).
 */
const at = (ms: number) => new Date(Date.UTC(2026, 10, 28) + ms);
const job = (id: string, fields: Partial<NewJobRow> = {}): NewJobRow => ({
  id,
  kind: 'audit',
  siteId: 'site_a',
  state: 'queued',
  createdAt: at(0),
  ...fields,
});
const failed = (message: string, ms = 5_000): StoredEnd => ({
  state: 'failed',
  reason: 'site-unreachable',
  message,
  finishedAt: at(ms),
});

describe.each(dialects)('the job store on %s', (dialect) => {
  const state = stateDatabaseFor(dialect, 'job-store');

  it('writes a job as stored, its JSON as its text, its dates to the millisecond', async () => {
    const store = createJobStore(state());
    const written = await store.insert(job('job_1', { params: '{"kind":"full"}', createdAt: at(123) }));
    expect(written).toMatchObject({
      id: 'job_1',
      state: 'queued',
      attempts: 0,
      reason: null,
      startedAt: null,
      progress: '{}',
      createdAt: at(123),
    });
    expect(JSON.parse(written.params)).toEqual({ kind: 'full' });
    expect(await store.find('job_1')).toEqual(written);
    expect(await store.find('job_none')).toBeUndefined();
  });

  it('writes a job with its kind’s own row in one transaction: both, or neither when either fails', async () => {
    const store = createJobStore(state());
    // (the kind's own row here is another job row: any table of the state database will do)
    const own = (id: string) => async (tx: StateDb) => (await store.insert(job(id, { kind: 'own' }), tx)).id;
    expect(await store.insertWith(job('job_1'), own('own_1'))).toMatchObject({ job: { id: 'job_1' }, own: 'own_1' });
    expect(await store.find('own_1')).toMatchObject({ kind: 'own' });

    // The own row fails: no job row. The job row fails (its id taken): no own row.
    await expect(
      store.insertWith(job('job_2'), async () => {
        throw new Error('the backup row could not be written');
      }),
    ).rejects.toThrow('the backup row could not be written');
    await expect(store.insertWith(job('job_1'), own('own_2'))).rejects.toThrow();
    expect(await store.find('job_2')).toBeUndefined();
    expect(await store.find('own_2')).toBeUndefined();
  });

  it('starts a job only while it is queued, one attempt more each time, and cancels one only while it is queued', async () => {
    const store = createJobStore(state());
    await store.insert(job('job_1'));
    expect(await store.start('job_1', at(1_000))).toMatchObject({
      state: 'running',
      attempts: 1,
      startedAt: at(1_000),
    });
    expect(await store.start('job_1', at(2_000))).toBeUndefined();
    expect(await store.start('job_none', at(4_000))).toBeUndefined();
    expect(await store.find('job_1')).toMatchObject({ state: 'running', attempts: 1, startedAt: at(1_000) });

    await store.insert(job('job_2'));
    expect(await store.cancelQueued('job_2', at(3_000), 'stopped by a test')).toMatchObject({
      state: 'cancelled',
      reason: 'cancelled',
      message: 'stopped by a test',
      finishedAt: at(3_000),
    });
    expect(await store.start('job_2', at(4_000))).toBeUndefined();
    expect(await store.find('job_2')).toMatchObject({ state: 'cancelled', attempts: 0, startedAt: null });
  });

  it('cancels a queued job with its kind’s row in one transaction, the progress its kind answers on the job', async () => {
    const store = createJobStore(state());
    await store.insert(job('job_1'));
    await store.insert(job('own_1', { kind: 'own' }));
    // (the kind's own row here is another job row: any table of the state database will do)
    const ownCancelled = async (_job: JobRow, tx: StateDb) => {
      await store.cancelQueued('own_1', at(3_000), 'with its job', tx);
      return { progress: { sites: 0 } };
    };
    expect(await store.cancelQueuedWith('job_1', at(3_000), 'stopped by a test', ownCancelled)).toMatchObject({
      state: 'cancelled',
      message: 'stopped by a test',
      progress: JSON.stringify({ sites: 0 }),
    });
    expect(await store.find('job_1')).toMatchObject({ state: 'cancelled', progress: JSON.stringify({ sites: 0 }) });
    expect(await store.find('own_1')).toMatchObject({ state: 'cancelled', message: 'with its job' });
    // No longer queued: its kind is not asked.
    let asked = false;
    const ask = async () => void (asked = true);
    expect(await store.cancelQueuedWith('job_1', at(4_000), 'again', ask)).toBeUndefined();
    expect(asked).toBe(false);
    // The kind's write fails: the job stays queued.
    await store.insert(job('job_2'));
    await expect(
      store.cancelQueuedWith('job_2', at(5_000), 'stopped', async () => {
        throw new Error('the backup row could not be written');
      }),
    ).rejects.toThrow('the backup row could not be written');
    expect(await store.find('job_2')).toMatchObject({ state: 'queued', finishedAt: null });
  });

  it('ends a job once: a second end is refused unless it replaces the first, and a cancel comes too late', async () => {
    const store = createJobStore(state());
    await store.insert(job('job_1'));
    await store.start('job_1', at(1_000));
    expect(await store.finish('job_1', failed('first'))).toBe(true);
    expect(await store.finish('job_1', { ...failed('second'), state: 'succeeded' })).toBe(false);
    expect(await store.cancelQueued('job_1', at(6_000), 'too late')).toBeUndefined();
    expect(await store.find('job_1')).toMatchObject({ state: 'failed', message: 'first', finishedAt: at(5_000) });

    expect(
      await store.finish('job_1', { ...failed('replaced', 7_000), progress: '{"done":3}' }, { replacing: true }),
    ).toBe(true);
    const replaced = await store.find('job_1');
    expect(replaced).toMatchObject({ state: 'failed', message: 'replaced', finishedAt: at(7_000) });
    expect(JSON.parse(replaced!.progress)).toEqual({ done: 3 });
    expect(await store.finish('job_none', failed('gone'), { replacing: true })).toBe(false);
  });

  it('ends a queued job its parent will not start, and leaves one that started as it is', async () => {
    const store = createJobStore(state());
    await store.insertMany([job('job_1'), job('job_2')]);
    await store.start('job_2', at(1_000));
    expect(await store.endQueued('job_1', { ...failed('skipped'), state: 'cancelled' })).toMatchObject({
      state: 'cancelled',
      message: 'skipped',
    });
    expect(await store.endQueued('job_2', failed('not this one'))).toMatchObject({ state: 'running', message: null });
    expect(await store.endQueued('job_none', failed('gone'))).toBeUndefined();
  });

  it('revises only a finished job’s outcome', async () => {
    const store = createJobStore(state());
    await store.insertMany([job('job_1'), job('job_2')]);
    await store.start('job_1', at(1_000));
    await store.finish('job_1', failed('before the restart'));
    expect(await store.revise('job_1', { state: 'succeeded', reason: null, message: 'decided after' })).toBe(true);
    expect(await store.revise('job_2', { state: 'succeeded' })).toBe(false);
    expect(await store.find('job_1')).toMatchObject({ state: 'succeeded', reason: null, message: 'decided after' });
    expect(await store.find('job_2')).toMatchObject({ state: 'queued' });
  });

  it('writes what a running job reports, and nothing for an empty report', async () => {
    const store = createJobStore(state());
    await store.insert(job('job_1'));
    await store.write('job_1', { progress: '{"files":12}', message: 'copying' });
    await store.write('job_1', { progress: undefined });
    const row = await store.find('job_1');
    expect(JSON.parse(row!.progress)).toEqual({ files: 12 });
    expect(row!.message).toBe('copying');
  });

  it('lists newest first with filters and a cursor, ties broken by id, and finds what recovery needs', async () => {
    const store = createJobStore(state());
    // 2,500 rows: more than one insert statement's worth (PostgreSQL's parameter limit).
    await store.insertMany(
      Array.from({ length: 2_500 }, (_, index) =>
        job(`job_${String(index).padStart(4, '0')}`, {
          kind: index % 2 === 0 ? 'audit' : 'backup',
          siteId: index % 5 === 0 ? 'site_b' : 'site_a',
          createdAt: at(Math.floor(index / 3)),
        }),
      ),
    );
    expect(await store.list({ limit: 3_000 })).toHaveLength(2_500);

    const first = await store.list({ limit: 4 });
    expect(first.map((row) => row.id)).toEqual(['job_2499', 'job_2498', 'job_2497', 'job_2496']);
    const last = first.at(-1)!;
    const next = await store.list({ limit: 3, before: { createdAt: last.createdAt, id: last.id } });
    expect(next.map((row) => row.id)).toEqual(['job_2495', 'job_2494', 'job_2493']);
    const filtered = await store.list({ limit: 3, kind: 'audit', siteId: 'site_b' });
    expect(filtered.map((row) => row.id)).toEqual(['job_2490', 'job_2480', 'job_2470']);
    expect(await store.list({ limit: 5, id: 'job_0007' })).toHaveLength(1);
    expect(await store.list({ limit: 5, visible: sql`${sql.identifier('site_id')} = 'site_none'` })).toEqual([]);

    await store.start('job_0003', at(9_000));
    await store.start('job_0001', at(9_000));
    expect((await store.unfinished('backup', 'running')).map((row) => row.id)).toEqual(['job_0001', 'job_0003']);
    expect(await store.unfinished('audit', 'running')).toEqual([]);
    expect((await store.unfinished('audit', 'queued')).length).toBe(1_250);
  });

  it('rolls a transaction’s writes back together, and gives a job to one of two racing ends or of a start and a cancel', async () => {
    const store = createJobStore(state());
    await expect(
      state().transaction(async (tx) => {
        await store.insert(job('job_1'), tx);
        await store.insertMany([job('job_2'), job('job_3')], tx);
        throw new Error('the body fails');
      }),
    ).rejects.toThrow('the body fails');
    expect(await store.list({ limit: 10 })).toEqual([]);

    await store.insert(job('job_4'));
    await store.start('job_4', at(1_000));
    const ends = await Promise.all([store.finish('job_4', failed('one')), store.finish('job_4', failed('two'))]);
    expect(ends.filter(Boolean)).toHaveLength(1);

    // A queued job is either started or cancelled, never both, whichever statement comes first.
    await store.insert(job('job_5'));
    const [started, cancelled] = await Promise.all([
      store.start('job_5', at(1_000)),
      store.cancelQueued('job_5', at(1_000), 'raced'),
    ]);
    expect([started, cancelled].filter(Boolean)).toHaveLength(1);
    expect((await store.find('job_5'))!.state).toBe(started ? 'running' : 'cancelled');
  });
});
