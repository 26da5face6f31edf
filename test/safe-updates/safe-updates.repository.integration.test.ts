import { describe, expect, expectTypeOf, it } from 'vitest';
import { isUniqueViolation } from '../../src/db/dialect.js';
import { createJobStore } from '../../src/jobs/job-store.js';
import type {
  rollbackSecrets as pgRollbackSecrets,
  safeUpdates as pgSafeUpdates,
} from '../../src/safe-updates/safe-updates.pg-table.js';
import { createSafeUpdatesRepository } from '../../src/safe-updates/safe-updates.repository.js';
import type {
  NewSafeUpdateRow,
  rollbackSecrets as sqliteRollbackSecrets,
  safeUpdates as sqliteSafeUpdates,
} from '../../src/safe-updates/safe-updates.table.js';
import { createSitesRepository } from '../../src/sites/sites.repository.js';
import { dialects, stateDatabaseFor, type RowsOf } from '../support/dialects.js';

/**
 * The safe updates and the sites' rollback secrets on both dialects (issue 34, docs/design/cluster-state.md):
 * one test body on SQLite `:memory:` and on a database of the run's PostgreSQL cluster. The writes the job
 * runner's SQLite transaction and hooks take (`insertWithJob` without a transaction, `inHook`) are SQLite's
 * only, until the runner passes its transaction to its kinds' hooks: tested there, and refused on PostgreSQL.
 */
const at = (ms: number) => new Date(Date.UTC(2026, 11, 1) + ms);
const safeUpdate = (id: string, fields: Partial<NewSafeUpdateRow> = {}): NewSafeUpdateRow => ({
  id,
  siteId: 'site_a',
  itemType: 'plugin',
  slug: 'akismet',
  status: 'queued',
  phase: 'queued',
  policy: JSON.stringify({ settleMs: 0, attempts: 1 }),
  createdAt: at(0),
  ...fields,
});
const ids = (rows: readonly { id: string }[]) => rows.map((row) => row.id);

describe('the safe updates tables', () => {
  it('infer the same row types on both dialects, so the repository reads and writes the same rows', () => {
    expectTypeOf<RowsOf<typeof pgSafeUpdates>>().toEqualTypeOf<RowsOf<typeof sqliteSafeUpdates>>();
    expectTypeOf<RowsOf<typeof pgRollbackSecrets>>().toEqualTypeOf<RowsOf<typeof sqliteRollbackSecrets>>();
  });
});

describe.each(dialects)('the safe updates repository on %s', (dialect) => {
  const state = stateDatabaseFor(dialect, 'safe-updates-repository');
  const addSite = (id: string) =>
    createSitesRepository(state()).insert({
      id,
      url: `https://${id}.example.test`,
      restUrl: `https://${id}.example.test/wp-json/`,
      state: 'connected',
      createdAt: at(0),
      updatedAt: at(0),
    });

  it('writes a safe update as stored: its dates to the millisecond, its policy and report as the text given', async () => {
    await addSite('site_a');
    const repository = createSafeUpdatesRepository(state());
    const report = '{"steps":[{"step":"update","ok":true}],  "item":{"target":"akismet/akismet.php"}}';
    const row = safeUpdate('sup_1', {
      itemType: 'core',
      slug: 'wordpress',
      status: 'kept',
      phase: 'done',
      reason: null,
      message: 'kept',
      fromVersion: '6.1.9',
      toVersion: '6.2.6',
      restorePointId: 'rp_1',
      restorePointTarget: 'core',
      backupId: 'bkp_1',
      report,
      createdAt: at(1),
      startedAt: at(1_234),
      finishedAt: at(61_999),
    });
    const written = await repository.insert(row);
    expect(written).toEqual(row);
    expect(await repository.find('sup_1')).toEqual(written);
    // The report is text on both: read back as written, spacing and key order kept.
    expect(written.report).toBe(report);
    expect(await repository.find('sup_none')).toBeUndefined();
    // Left out: the report's default, and nulls.
    expect(await repository.insert(safeUpdate('sup_2'))).toMatchObject({
      report: '{}',
      reason: null,
      startedAt: null,
      finishedAt: null,
      restorePointId: null,
    });
  });

  it('refuses a second safe update of one id and one of a site that does not exist', async () => {
    await addSite('site_a');
    const repository = createSafeUpdatesRepository(state());
    await repository.insert(safeUpdate('sup_1'));
    const twice = await repository.insert(safeUpdate('sup_1', { slug: 'other' })).then(
      () => null,
      (error: unknown) => error,
    );
    expect(isUniqueViolation(twice)).toBe(true);
    await expect(repository.insert(safeUpdate('sup_2', { siteId: 'site_none' }))).rejects.toThrow();
    expect(await repository.find('sup_1')).toMatchObject({ slug: 'akismet' });
    expect(await repository.find('sup_2')).toBeUndefined();
  });

  it('finds a safe update only under its own site, and lists a site’s newest first, up to the limit', async () => {
    await addSite('site_a');
    await addSite('site_b');
    const repository = createSafeUpdatesRepository(state());
    await repository.insert(safeUpdate('sup_1', { createdAt: at(1) }));
    await repository.insert(safeUpdate('sup_3', { createdAt: at(2) }));
    // Created in the same millisecond: the larger id first.
    await repository.insert(safeUpdate('sup_2', { createdAt: at(2) }));
    await repository.insert(safeUpdate('sup_4', { siteId: 'site_b', createdAt: at(3) }));
    expect(await repository.findForSite('site_a', 'sup_1')).toMatchObject({ id: 'sup_1', siteId: 'site_a' });
    expect(await repository.findForSite('site_b', 'sup_1')).toBeUndefined();
    expect(await repository.findForSite('site_a', 'sup_none')).toBeUndefined();
    expect(ids(await repository.listForSite('site_a', 10))).toEqual(['sup_3', 'sup_2', 'sup_1']);
    expect(ids(await repository.listForSite('site_a', 2))).toEqual(['sup_3', 'sup_2']);
    expect(ids(await repository.listForSite('site_b', 10))).toEqual(['sup_4']);
    expect(await repository.listForSite('site_none', 10)).toEqual([]);
  });

  it('updates a safe update and answers it as written; nothing for one that is gone', async () => {
    await addSite('site_a');
    const repository = createSafeUpdatesRepository(state());
    await repository.insert(safeUpdate('sup_1', { status: 'running', phase: 'after-check', startedAt: at(1) }));
    const written = await repository.update('sup_1', {
      status: 'rolled-back',
      phase: 'done',
      reason: 'fatal-error',
      message: 'the home page fatals',
      finishedAt: at(2),
    });
    expect(written).toMatchObject({
      status: 'rolled-back',
      phase: 'done',
      reason: 'fatal-error',
      startedAt: at(1),
      finishedAt: at(2),
    });
    expect(await repository.find('sup_1')).toEqual(written);
    expect(await repository.update('sup_none', { status: 'kept' })).toBeUndefined();
    expect(await repository.find('sup_none')).toBeUndefined();
  });

  it('starts a run since now, and a resumed run since its first start, keeping its phase', async () => {
    await addSite('site_a');
    const repository = createSafeUpdatesRepository(state());
    await repository.insert(safeUpdate('sup_1'));
    await repository.insert(
      safeUpdate('sup_2', { status: 'queued', phase: 'after-check', message: 'resumed', startedAt: at(5) }),
    );
    expect(await repository.start('sup_1', at(10))).toMatchObject({
      status: 'running',
      phase: 'queued',
      startedAt: at(10),
    });
    expect(await repository.start('sup_2', at(20))).toMatchObject({
      status: 'running',
      phase: 'after-check',
      message: 'resumed',
      startedAt: at(5),
    });
    expect(await repository.find('sup_2')).toMatchObject({ status: 'running', startedAt: at(5) });
    expect(await repository.start('sup_none', at(30))).toBeUndefined();
  });

  it('writes a safe update in its job’s transaction, both rows or neither', async () => {
    await addSite('site_a');
    const repository = createSafeUpdatesRepository(state());
    const jobs = createJobStore(state());
    const job = (id: string, siteId = 'site_a') => ({
      id,
      kind: 'safe-update',
      siteId,
      state: 'queued' as const,
      createdAt: at(0),
    });
    const { own } = await jobs.insertWith(job('sup_1'), async (tx) =>
      repository.insertWithJob(safeUpdate('sup_1'), tx),
    );
    expect(own).toMatchObject({ id: 'sup_1', status: 'queued', phase: 'queued', createdAt: at(0) });
    expect(await repository.find('sup_1')).toEqual(own);
    expect(await jobs.find('sup_1')).toMatchObject({ kind: 'safe-update', state: 'queued' });
    // Its job's row refused (an id taken): the safe update is not written either.
    await repository.insert(safeUpdate('sup_2'));
    await expect(
      jobs.insertWith(job('sup_1'), async (tx) => repository.insertWithJob(safeUpdate('sup_3'), tx)),
    ).rejects.toThrow();
    expect(await repository.find('sup_3')).toBeUndefined();
    // Its own row refused (a site that does not exist): the job is not written either.
    await expect(
      jobs.insertWith(job('sup_4', 'site_none'), async (tx) =>
        repository.insertWithJob(safeUpdate('sup_4', { siteId: 'site_none' }), tx),
      ),
    ).rejects.toThrow();
    expect(await jobs.find('sup_4')).toBeUndefined();
  });

  it('drops a site’s safe updates and rollback secret with it, and no other site’s', async () => {
    await addSite('site_a');
    await addSite('site_b');
    const repository = createSafeUpdatesRepository(state());
    const jobs = createJobStore(state());
    await repository.insert(safeUpdate('sup_1'));
    await repository.insert(safeUpdate('sup_2', { siteId: 'site_b' }));
    for (const [id, siteId] of [
      ['sup_1', 'site_a'],
      ['sup_2', 'site_b'],
    ] as const)
      await jobs.insert({ id, kind: 'safe-update', siteId, state: 'queued', createdAt: at(0) });
    await repository.writeSecret('site_a', 'sealed-a', at(1));
    await repository.writeSecret('site_b', 'sealed-b', at(1));
    expect(await createSitesRepository(state()).delete('site_a')).toBe(true);
    expect(await repository.find('sup_1')).toBeUndefined();
    expect(await repository.readSecret('site_a')).toBeUndefined();
    expect(await repository.find('sup_2')).toMatchObject({ siteId: 'site_b' });
    expect(await repository.readSecret('site_b')).toBe('sealed-b');
    expect(await jobs.find('sup_2')).toMatchObject({ siteId: 'site_b' });
    // `safe_updates_job_delete` takes the job row with its safe update (jobs.triggers.ts, on both dialects).
    expect(await jobs.find('sup_1')).toBeUndefined();
  });

  it('keeps one rollback secret per site: a new one replaces the last', async () => {
    await addSite('site_a');
    await addSite('site_b');
    const repository = createSafeUpdatesRepository(state());
    expect(await repository.readSecret('site_a')).toBeUndefined();
    await repository.writeSecret('site_a', 'sealed-1', at(1));
    expect(await repository.readSecret('site_a')).toBe('sealed-1');
    await repository.writeSecret('site_a', 'sealed-2', at(2));
    expect(await repository.readSecret('site_a')).toBe('sealed-2');
    expect(await repository.readSecret('site_b')).toBeUndefined();
    // Two at once (on PostgreSQL, two connections of the pool): one row, one of the two.
    await Promise.all([
      repository.writeSecret('site_b', 'sealed-x', at(3)),
      repository.writeSecret('site_b', 'sealed-y', at(3)),
    ]);
    expect(['sealed-x', 'sealed-y']).toContain(await repository.readSecret('site_b'));
    await expect(repository.writeSecret('site_none', 'sealed', at(1))).rejects.toThrow();
  });

  it('writes a run’s changes: a requeue keeps its phase and first start; a cancel in a transaction when given one', async () => {
    await addSite('site_a');
    const repository = createSafeUpdatesRepository(state());
    await repository.insert(safeUpdate('sup_2', { status: 'running', phase: 'after-check', startedAt: at(1) }));
    expect(
      await repository.update('sup_2', { status: 'queued', message: 'resumed after the daemon stopped' }),
    ).toMatchObject({
      status: 'queued',
      phase: 'after-check',
      message: 'resumed after the daemon stopped',
      startedAt: at(1),
    });
    const cancelled = { status: 'failed', reason: 'cancelled', phase: 'done', finishedAt: at(5) } as const;
    expect(
      await state().transaction(async (tx) => repository.cancel('sup_2', at(5), 'cancelled on request', tx)),
    ).toMatchObject(cancelled);
    expect(await repository.find('sup_2')).toMatchObject(cancelled);
    expect(await repository.update('sup_none', { status: 'queued' })).toBeUndefined();
  });

  if (dialect === 'sqlite') {
    it('writes a safe update with its job synchronously, and ends a queued one at once in the runner’s transaction', async () => {
      await addSite('site_a');
      const repository = createSafeUpdatesRepository(state());
      const written = repository.insertWithJob(safeUpdate('sup_1'));
      expect(written).toMatchObject({ id: 'sup_1', status: 'queued', createdAt: at(0) });
      expect(repository.cancel('sup_1', at(5), 'cancelled on request')).toMatchObject({
        status: 'failed',
        reason: 'cancelled',
        message: 'cancelled on request',
        phase: 'done',
        finishedAt: at(5),
      });
      expect(repository.cancel('sup_none', at(5), 'cancelled')).toBeUndefined();
    });
  } else {
    it('refuses the hooks’ synchronous writes, naming issue 34', async () => {
      await addSite('site_a');
      const repository = createSafeUpdatesRepository(state());
      expect(() => repository.insertWithJob(safeUpdate('sup_1'))).toThrow(/issue 34/);
      expect(() => repository.cancel('sup_1', at(1), 'cancelled')).toThrow(/issue 34/);
      expect(await repository.find('sup_1')).toBeUndefined();
    });
  }
});
