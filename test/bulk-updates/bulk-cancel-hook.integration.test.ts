import { describe, expect, it } from 'vitest';
import { createBulkCoordinator } from '../../src/bulk-updates/bulk-coordinator.js';
import { childId, createBulkUpdatesRepository } from '../../src/bulk-updates/bulk-updates.repository.js';
import { createUpdateSlots } from '../../src/bulk-updates/update-slots.js';
import type { Db } from '../../src/db/database.js';
import type { StateDatabase } from '../../src/db/state-db.js';
import { writtenAtOnce } from '../../src/db/write-batch.js';
import type { JobKind } from '../../src/jobs/job-kind.js';
import type { JobRunner } from '../../src/jobs/job-runner.js';
import { createJobRowWriter } from '../../src/jobs/job-rows.js';
import { createJobStore } from '../../src/jobs/job-store.js';
import { createJobsRepository, type JobsRepository } from '../../src/jobs/jobs.repository.js';
import type { NewJobRow } from '../../src/jobs/jobs.table.js';
import { createFakeClock } from '../../src/shared/clock.js';
import type { Events } from '../../src/shared/event-bus.js';
import { dialects, stateDatabaseFor } from '../support/dialects.js';
import { createCapturedLogger } from '../support/log-capture.js';

/**
 * The bulk kind's cancel hook (issue 34, "The runner's move" in docs/design/cluster-state.md): a bulk update cancelled
 * while queued ends its sites not started in the same transaction as its own row. On one machine the job runner calls
 * the hook without a transaction, inside its synchronous SQLite one, and the hook writes at once; in a cluster the job
 * store gives it its transaction (`cancelQueuedWith`), and the hook reads and ends the sites on it.
 */
const at = (ms: number) => new Date(Date.UTC(2026, 11, 1) + ms);
const MESSAGE = 'cancelled through the API';

/** The SQLite statements where the dialect has them (the runner's synchronous transaction); none on PostgreSQL. */
function repositoryOf(state: StateDatabase): JobsRepository {
  if (state.dialect === 'sqlite') return createJobsRepository({ db: state.db as unknown as Db });
  return new Proxy({} as JobsRepository, {
    get: (_target, name) => () => {
      throw new Error(`the SQLite repository's ${String(name)} was used on PostgreSQL`);
    },
  });
}

describe.each(dialects)('a bulk update cancelled while queued, on %s', (dialect) => {
  const state = stateDatabaseFor(dialect, 'bulk-cancel-hook');

  /** The bulk kind as the coordinator registers it, its hook's writes through the runner's own row writer. */
  async function setUp() {
    const clock = createFakeClock(at(1_000));
    const { logger } = createCapturedLogger();
    const store = createJobStore(state());
    const repository = repositoryOf(state());
    const rows = createJobRowWriter({ repository, store, clock, logger });
    const kinds = new Map<string, JobKind>();
    const jobs = {
      register: (name: string, kind: JobKind) => void kinds.set(name, kind),
      inHook: { endQueued: rows.endQueuedIn },
    } as unknown as JobRunner;
    createBulkCoordinator({
      repository: createBulkUpdatesRepository(state()),
      jobRows: store,
      jobs,
      slots: createUpdateSlots({ concurrency: 1, perHost: 1 }),
      planner: { rowsOf: () => Promise.reject(new Error('no request here')) },
      siteRunner: {
        run: () => Promise.reject(new Error('no site runs')),
        recover: () => Promise.reject(new Error('no recovery here')),
      },
      clock,
      events: {} as Events,
      logger,
    });
    const job = (id: string, fields: Partial<NewJobRow> = {}): NewJobRow => ({
      id,
      kind: 'site-update',
      state: 'queued',
      createdAt: at(0),
      ...fields,
    });
    await store.insertMany([
      job('bulk_1', { kind: 'bulk-update' }),
      job(childId('bulk_1', 0), { siteId: 'site_a' }),
      job(childId('bulk_1', 1), { siteId: 'site_b', state: 'succeeded', finishedAt: at(500) }),
      job(childId('bulk_1', 2), { siteId: 'site_c', kind: 'safe-site-update' }),
      job('bulk_10', { kind: 'bulk-update' }),
      job(childId('bulk_10', 0), { siteId: 'site_a' }),
    ]);
    const states = async () =>
      Object.fromEntries(
        (await store.list({ limit: 10 })).map((row) => [row.id, [row.state, row.reason, row.message]]),
      ) as Record<string, [string, string | null, string | null]>;
    return { store, repository, bulk: kinds.get('bulk-update')!, states };
  }

  const cancelledSites = {
    [childId('bulk_1', 0)]: ['cancelled', 'cancelled', MESSAGE],
    [childId('bulk_1', 1)]: ['succeeded', null, null],
    [childId('bulk_1', 2)]: ['cancelled', 'cancelled', MESSAGE],
    // Another bulk update's site, whose id starts alike.
    [childId('bulk_10', 0)]: ['queued', null, null],
  };

  it('in the job store’s transaction (a cluster’s cancel): its sites not started end with it', async () => {
    const { store, bulk, states } = await setUp();
    const cancelled = await store.cancelQueuedWith('bulk_1', at(1_000), MESSAGE, async (job, tx) =>
      bulk.cancelQueued(job, MESSAGE, tx),
    );
    expect(cancelled).toMatchObject({ state: 'cancelled' });
    expect(await states()).toMatchObject({ bulk_1: ['cancelled', 'cancelled', MESSAGE], ...cancelledSites });
    expect((await store.find(childId('bulk_1', 0)))!.finishedAt).toEqual(at(1_000));
  });

  it('in the job store’s transaction: nothing of it kept when the transaction fails after the hook', async () => {
    const { store, bulk, states } = await setUp();
    const before = await states();
    await expect(
      store.cancelQueuedWith('bulk_1', at(1_000), MESSAGE, async (job, tx) => {
        await bulk.cancelQueued(job, MESSAGE, tx);
        throw new Error('the transaction fails');
      }),
    ).rejects.toThrow('the transaction fails');
    expect(await states()).toEqual(before);
  });

  it.runIf(dialect === 'sqlite')(
    'at once inside the job runner’s synchronous SQLite transaction (one machine’s cancel)',
    async () => {
      const { repository, bulk, states } = await setUp();
      const cancelled = await state().run(() =>
        repository.transaction(() => {
          const job = repository.cancelQueued('bulk_1', at(1_000), MESSAGE)!;
          // A promise here would be refused (it would land after the commit).
          writtenAtOnce(bulk.cancelQueued(job, MESSAGE));
          return job;
        }),
      );
      expect(cancelled).toMatchObject({ state: 'cancelled' });
      expect(await states()).toMatchObject({ bulk_1: ['cancelled', 'cancelled', MESSAGE], ...cancelledSites });
    },
  );

  it.runIf(dialect === 'postgres')('refuses to be called without the transaction on PostgreSQL', async () => {
    const { store, bulk } = await setUp();
    const job = (await store.find('bulk_1'))!;
    expect(() => bulk.cancelQueued(job, MESSAGE)).toThrow(/job store's transaction/);
  });
});
