import { describe, expect, expectTypeOf, it } from 'vitest';
import type * as pg from '../../src/backups/backups.pg-table.js';
import { createBackupsRepository } from '../../src/backups/backups.repository.js';
import type * as sqlite from '../../src/backups/backups.table.js';
import type { NewBackupRow, NewRestoreRow } from '../../src/backups/backups.table.js';
import type { removedSites as pgRemovedSites } from '../../src/backups/offsite/removed-sites.pg-table.js';
import { createRemovedSitesRepository } from '../../src/backups/offsite/removed-sites.repository.js';
import type { removedSites } from '../../src/backups/offsite/removed-sites.table.js';
import type { StateDatabase } from '../../src/db/state-db.js';
import { createJobStore } from '../../src/jobs/job-store.js';
import { createSitesRepository } from '../../src/sites/sites.repository.js';
import { dialects, stateDatabaseFor, type RowsOf } from '../support/dialects.js';

/**
 * The backups feature's rows on both dialects (issue 34, docs/design/cluster-state.md): one test body
 * on SQLite `:memory:` and on a database of the run's PostgreSQL cluster. The statements the job
 * runner's synchronous callbacks make (`inHook`) are SQLite's only, tested there.
 */
const at = (ms: number) => new Date(Date.UTC(2026, 10, 29) + ms);
const HOUR = 3_600_000;

async function withSites(state: StateDatabase, ...ids: string[]) {
  const sites = createSitesRepository(state);
  for (const id of ids)
    await sites.insert({
      id,
      url: `https://${id}.example.test`,
      restUrl: `https://${id}.example.test/wp-json/`,
      state: 'connected',
      createdAt: at(0),
      updatedAt: at(0),
    });
  return sites;
}

const backup = (id: string, siteId: string, fields: Partial<NewBackupRow> = {}): NewBackupRow => ({
  id,
  siteId,
  kind: 'manual',
  status: 'completed',
  manifestHash: `manifest-${id}`,
  createdAt: at(0),
  ...fields,
});

const restore = (id: string, siteId: string, fields: Partial<NewRestoreRow> = {}): NewRestoreRow => ({
  id,
  siteId,
  backupId: 'bkp_1',
  status: 'queued',
  createdAt: at(0),
  ...fields,
});

describe('the backups tables of the two dialects', () => {
  it('give the repositories the same rows', () => {
    expectTypeOf<RowsOf<typeof pg.backups>>().toEqualTypeOf<RowsOf<typeof sqlite.backups>>();
    expectTypeOf<RowsOf<typeof pg.restores>>().toEqualTypeOf<RowsOf<typeof sqlite.restores>>();
    expectTypeOf<RowsOf<typeof pg.backupSettings>>().toEqualTypeOf<RowsOf<typeof sqlite.backupSettings>>();
    expectTypeOf<RowsOf<typeof pg.backupTagRetention>>().toEqualTypeOf<RowsOf<typeof sqlite.backupTagRetention>>();
    expectTypeOf<RowsOf<typeof pgRemovedSites>>().toEqualTypeOf<RowsOf<typeof removedSites>>();
  });
});

describe.each(dialects)('the backups repository on %s', (dialect) => {
  const state = stateDatabaseFor(dialect, 'backups-repository');

  it('writes a backup as stored: its defaults, its targets list, its dates to the millisecond and byte counts past 2^31', async () => {
    await withSites(state(), 'site_a');
    const repository = createBackupsRepository(state());
    const written = await repository.insertBackup(
      backup('bkp_1', 'site_a', {
        status: 'queued',
        manifestHash: null,
        targets: ['local', 'nas'],
        bytesTotal: 5_000_000_000_123,
        createdAt: at(1_234),
      }),
    );
    expect(written).toMatchObject({
      id: 'bkp_1',
      status: 'queued',
      targets: ['local', 'nas'],
      files: 0,
      rows: 0,
      bytesTotal: 5_000_000_000_123,
      reason: null,
      retryOf: null,
      createdAt: at(1_234),
      startedAt: null,
    });
    expect(await repository.findBackup('bkp_1')).toEqual(written);
    expect(await repository.findBackup('bkp_none')).toBeUndefined();
  });

  it('writes a backup while it is in a status, and leaves it when it is not', async () => {
    await withSites(state(), 'site_a');
    const repository = createBackupsRepository(state());
    await repository.insertBackup(backup('bkp_1', 'site_a', { status: 'queued' }));
    expect(await repository.updateBackup('bkp_1', { status: 'running', startedAt: at(5) })).toMatchObject({
      status: 'running',
      startedAt: at(5),
    });
    // A run's progress and end only while it runs: a row ended meanwhile keeps its end.
    expect(await repository.updateBackup('bkp_1', { filesDone: 3 }, ['running'])).toMatchObject({ filesDone: 3 });
    await repository.updateBackup('bkp_1', { status: 'failed', reason: 'interrupted' }, ['queued', 'running']);
    expect(await repository.updateBackup('bkp_1', { status: 'completed', filesDone: 9 }, ['running'])).toBeUndefined();
    expect(await repository.findBackup('bkp_1')).toMatchObject({
      status: 'failed',
      reason: 'interrupted',
      filesDone: 3,
    });
    expect(await repository.updateBackup('bkp_none', { filesDone: 1 })).toBeUndefined();
  });

  it('lists a site’s backups newest first, a page at a time, and those the local store holds whole', async () => {
    await withSites(state(), 'site_a', 'site_b');
    const repository = createBackupsRepository(state());
    await repository.insertBackup(backup('bkp_1', 'site_a'));
    await repository.insertBackup(backup('bkp_2', 'site_a', { status: 'failed' }));
    await repository.insertBackup(backup('bkp_3', 'site_a', { status: 'partial' }));
    await repository.insertBackup(backup('bkp_4', 'site_b'));
    await repository.insertBackup(backup('bkp_5', 'site_a', { status: 'running' }));
    const ids = (rows: { id: string }[]) => rows.map((row) => row.id);
    expect(ids(await repository.listBackups({ siteId: 'site_a', limit: 2 }))).toEqual(['bkp_5', 'bkp_3']);
    expect(ids(await repository.listBackups({ siteId: 'site_a', limit: 2, before: 'bkp_3' }))).toEqual([
      'bkp_2',
      'bkp_1',
    ]);
    expect(ids(await repository.allBackups('site_a'))).toEqual(['bkp_5', 'bkp_3', 'bkp_2', 'bkp_1']);
    expect(ids(await repository.completedBackups('site_a'))).toEqual(['bkp_3', 'bkp_1']);
    expect(ids(await repository.completedBackups())).toEqual(['bkp_4', 'bkp_3', 'bkp_1']);
  });

  it('deletes the backups retention names only once they have ended, and answers those it deleted', async () => {
    await withSites(state(), 'site_a');
    const repository = createBackupsRepository(state());
    await repository.insertBackup(backup('bkp_1', 'site_a', { targets: ['local', 'nas'] }));
    await repository.insertBackup(backup('bkp_2', 'site_a', { status: 'failed' }));
    await repository.insertBackup(backup('bkp_3', 'site_a', { status: 'running' }));
    await repository.insertBackup(backup('bkp_4', 'site_a', { status: 'queued' }));
    await repository.insertBackup(backup('bkp_5', 'site_a'));
    const deleted = await repository.deleteEndedBackups(['bkp_1', 'bkp_2', 'bkp_3', 'bkp_4', 'bkp_none']);
    expect(deleted.map((row) => row.id).sort()).toEqual(['bkp_1', 'bkp_2']);
    expect(deleted.find((row) => row.id === 'bkp_1')?.targets).toEqual(['local', 'nas']);
    expect((await repository.allBackups('site_a')).map((row) => row.id)).toEqual(['bkp_5', 'bkp_4', 'bkp_3']);
    expect(await repository.deleteEndedBackups([])).toEqual([]);
    expect(await repository.deleteBackup('bkp_5')).toBe(true);
    expect(await repository.deleteBackup('bkp_5')).toBe(false);
  });

  it('writes a restore as stored, and while it is in a status only when asked', async () => {
    await withSites(state(), 'site_a');
    const repository = createBackupsRepository(state());
    const written = await repository.insertRestore(
      restore('rst_1', 'site_a', { sourceTarget: 'nas', bytesTransferred: 3_000_000_000 }),
    );
    expect(written).toMatchObject({
      id: 'rst_1',
      sourceTarget: 'nas',
      preRestoreBackupId: null,
      filesRestored: 0,
      bytesTransferred: 3_000_000_000,
    });
    expect(await repository.findRestore('rst_1')).toEqual(written);
    expect(await repository.updateRestore('rst_1', { status: 'failed' }, ['running'])).toBeUndefined();
    expect(await repository.updateRestore('rst_1', { status: 'running', preRestoreBackupId: 'bkp_9' })).toMatchObject({
      status: 'running',
      preRestoreBackupId: 'bkp_9',
    });
    expect(await repository.updateRestore('rst_1', { filesRestored: 4 }, ['running'])).toMatchObject({
      filesRestored: 4,
    });
    expect(await repository.findRestore('rst_none')).toBeUndefined();
  });

  it('names the backup or restore of a site that is queued or running', async () => {
    await withSites(state(), 'site_a', 'site_b');
    const repository = createBackupsRepository(state());
    await repository.insertBackup(backup('bkp_1', 'site_a', { status: 'failed' }));
    await repository.insertRestore(restore('rst_1', 'site_a', { status: 'completed' }));
    expect(await repository.activeJob('site_a')).toBeUndefined();
    await repository.insertRestore(restore('rst_2', 'site_a', { status: 'running' }));
    expect(await repository.activeJob('site_a')).toEqual({ kind: 'restore', id: 'rst_2' });
    await repository.insertBackup(backup('bkp_2', 'site_a', { status: 'queued' }));
    expect(await repository.activeJob('site_a')).toEqual({ kind: 'backup', id: 'bkp_2' });
    expect(await repository.activeJob('site_b')).toBeUndefined();
  });

  it('finds the interrupted backups nothing has retried, that are no retries themselves, oldest first', async () => {
    await withSites(state(), 'site_a');
    const repository = createBackupsRepository(state());
    const interrupted = { status: 'failed', reason: 'interrupted' } as const;
    await repository.insertBackup(backup('bkp_1', 'site_a', interrupted));
    await repository.insertBackup(backup('bkp_2', 'site_a', interrupted));
    await repository.insertBackup(backup('bkp_3', 'site_a', { ...interrupted, retryOf: 'bkp_2' }));
    await repository.insertBackup(backup('bkp_4', 'site_a', { ...interrupted, kind: 'pre_restore' }));
    await repository.insertBackup(backup('bkp_5', 'site_a', { ...interrupted, kind: 'pre_update' }));
    await repository.insertBackup(backup('bkp_6', 'site_a', { status: 'failed', reason: 'site_error' }));
    await repository.insertBackup(backup('bkp_7', 'site_a', { ...interrupted, kind: 'scheduled' }));
    expect((await repository.unretriedInterrupted()).map((row) => row.id)).toEqual(['bkp_1', 'bkp_7']);
  });

  it('reads what the schedule needs of every site: settings, newest good and failed own backup, and busy sites', async () => {
    await withSites(state(), 'site_a', 'site_b', 'site_c');
    const repository = createBackupsRepository(state());
    await repository.insertBackup(backup('bkp_1', 'site_a', { createdAt: at(1 * HOUR) }));
    await repository.insertBackup(backup('bkp_2', 'site_a', { status: 'partial', createdAt: at(2 * HOUR) }));
    await repository.insertBackup(backup('bkp_3', 'site_a', { status: 'failed', createdAt: at(3 * HOUR) }));
    // A pre-restore backup is the restore's, not the schedule's.
    await repository.insertBackup(backup('bkp_4', 'site_a', { kind: 'pre_restore', createdAt: at(4 * HOUR) }));
    await repository.insertBackup(backup('bkp_5', 'site_b', { status: 'failed', createdAt: at(5 * HOUR) }));
    await repository.insertBackup(backup('bkp_6', 'site_b', { status: 'queued', createdAt: at(6 * HOUR) }));
    await repository.insertRestore(restore('rst_1', 'site_c', { status: 'running' }));
    await repository.patchSettings('site_c', { enabled: false }, at(7));
    const facts = await repository.scheduleFacts();
    expect(facts.history.get('site_a')).toEqual({ lastGoodAt: at(2 * HOUR), lastFailedAt: at(3 * HOUR) });
    // A queued backup is not failed: it counts as good, as the schedule has always read it.
    expect(facts.history.get('site_b')).toEqual({ lastGoodAt: at(6 * HOUR), lastFailedAt: at(5 * HOUR) });
    expect(facts.history.has('site_c')).toBe(false);
    expect([...facts.busy].sort()).toEqual(['site_b', 'site_c']);
    expect([...facts.settings.keys()]).toEqual(['site_c']);
    expect(facts.settings.get('site_c')).toMatchObject({ enabled: false, intervalHours: null, updatedAt: at(7) });
  });

  it('applies a settings patch to the fields it names only, null back to the default, two patches at once both held', async () => {
    await withSites(state(), 'site_a');
    const repository = createBackupsRepository(state());
    expect(await repository.readSettings('site_a')).toBeUndefined();
    expect(await repository.patchSettings('site_a', { intervalHours: 12 }, at(1))).toEqual({
      siteId: 'site_a',
      enabled: true,
      intervalHours: 12,
      keepLast: null,
      keepDays: null,
      keepDaily: null,
      keepWeekly: null,
      keepMonthly: null,
      keepYearly: null,
      updatedAt: at(1),
    });
    await Promise.all([
      repository.patchSettings('site_a', { keepLast: 5, enabled: false }, at(2)),
      repository.patchSettings('site_a', { keepDaily: 7, keepLast: undefined }, at(2)),
    ]);
    expect(await repository.readSettings('site_a')).toMatchObject({
      enabled: false,
      intervalHours: 12,
      keepLast: 5,
      keepDaily: 7,
      updatedAt: at(2),
    });
    await repository.patchSettings('site_a', { intervalHours: null }, at(3));
    expect(await repository.readSettings('site_a')).toMatchObject({ intervalHours: null, keepLast: 5, enabled: false });
  });

  it('keeps each tag’s retention, and reads those of a site’s tags', async () => {
    const sites = await withSites(state(), 'site_a', 'site_b');
    await sites.setTags('site_a', ['client-a', 'staging']);
    const repository = createBackupsRepository(state());
    const retention = (tag: string, keepLast: number | null, updatedAt = at(1)) => ({
      tag,
      keepLast,
      keepDays: null,
      keepDaily: 3,
      keepWeekly: null,
      keepMonthly: null,
      keepYearly: null,
      updatedAt,
    });
    expect(await repository.writeTagRetention(retention('staging', 2))).toEqual(retention('staging', 2));
    await repository.writeTagRetention(retention('client-a', 9));
    await repository.writeTagRetention(retention('other', 4));
    expect(await repository.writeTagRetention(retention('staging', null, at(2)))).toEqual(
      retention('staging', null, at(2)),
    );
    expect((await repository.listTagRetention()).map((row) => row.tag)).toEqual(['client-a', 'other', 'staging']);
    expect((await repository.tagRetentionOf('site_a')).sort((a, b) => a.tag.localeCompare(b.tag))).toEqual([
      retention('client-a', 9),
      retention('staging', null, at(2)),
    ]);
    expect(await repository.tagRetentionOf('site_b')).toEqual([]);
    expect(await repository.deleteTagRetention('other')).toBe(true);
    expect(await repository.deleteTagRetention('other')).toBe(false);
    expect((await repository.listTagRetention()).map((row) => row.tag)).toEqual(['client-a', 'staging']);
  });

  it('loses a site’s backups, restores and settings with the site, and keeps the tags’ retention', async () => {
    const sites = await withSites(state(), 'site_a', 'site_b');
    const repository = createBackupsRepository(state());
    await repository.insertBackup(backup('bkp_1', 'site_a'));
    await repository.insertBackup(backup('bkp_2', 'site_b'));
    await repository.insertRestore(restore('rst_1', 'site_a'));
    await repository.patchSettings('site_a', { keepLast: 3 }, at(1));
    await repository.writeTagRetention({
      tag: 'client-a',
      keepLast: 1,
      keepDays: null,
      keepDaily: null,
      keepWeekly: null,
      keepMonthly: null,
      keepYearly: null,
      updatedAt: at(1),
    });
    expect(await sites.delete('site_a')).toBe(true);
    expect(await repository.findBackup('bkp_1')).toBeUndefined();
    expect(await repository.findRestore('rst_1')).toBeUndefined();
    expect(await repository.readSettings('site_a')).toBeUndefined();
    expect(await repository.findBackup('bkp_2')).toBeDefined();
    expect(await repository.listTagRetention()).toHaveLength(1);
  });

  it('takes a backup’s or restore’s job row with it: retention’s delete, and a site’s removal', async () => {
    await withSites(state(), 'site_a', 'site_b');
    const repository = createBackupsRepository(state());
    const jobs = createJobStore(state());
    const withJobRow = async (id: string, siteId: string, kind: 'backup' | 'restore') =>
      jobs.insert({ id, kind, siteId, state: 'succeeded', createdAt: at(0) });
    await repository.insertBackup(backup('bkp_1', 'site_a'));
    await repository.insertBackup(backup('bkp_2', 'site_b'));
    await repository.insertRestore(restore('rst_1', 'site_b', { status: 'completed' }));
    await withJobRow('bkp_1', 'site_a', 'backup');
    await withJobRow('bkp_2', 'site_b', 'backup');
    await withJobRow('rst_1', 'site_b', 'restore');
    // (SQLite's and PostgreSQL's backups_job_delete and restores_job_delete)
    await repository.deleteEndedBackups(['bkp_1']);
    expect(await jobs.find('bkp_1')).toBeUndefined();
    expect(await jobs.find('bkp_2')).toBeDefined();
    await createSitesRepository(state()).delete('site_b');
    expect(await jobs.find('bkp_2')).toBeUndefined();
    expect(await jobs.find('rst_1')).toBeUndefined();
  });

  it('writes a backup or restore in its job’s transaction after reading its site’s claim there, one of several at once', async () => {
    await withSites(state(), 'site_a');
    const repository = createBackupsRepository(state());
    const { withJob } = repository;
    // A request's own row: the claim read first, then the row, in one transaction.
    const request = (id: string) =>
      state().transaction(async (tx) => {
        const active = await withJob.activeJob(tx, 'site_a');
        if (active) return active;
        return withJob.insertBackup(tx, backup(id, 'site_a', { status: 'queued' }));
      });
    const answers = await Promise.all(['bkp_1', 'bkp_2', 'bkp_3', 'bkp_4'].map(request));
    const written = answers.filter((answer) => 'status' in answer);
    expect(written).toHaveLength(1);
    for (const answer of answers.filter((answer) => !('status' in answer)))
      expect(answer).toEqual({ kind: 'backup', id: (written[0] as { id: string }).id });
    await repository.updateBackup((written[0] as { id: string }).id, { status: 'completed' }, ['queued']);
    const restored = await state().transaction((tx) =>
      withJob.insertRestore(tx, restore('rst_1', 'site_a', { status: 'queued' })),
    );
    expect(restored).toMatchObject({ id: 'rst_1', status: 'queued' });
    expect(await state().transaction((tx) => withJob.activeJob(tx, 'site_a'))).toEqual({
      kind: 'restore',
      id: 'rst_1',
    });
  });

  it('remembers a removed site, a second removal writing its dates over the first', async () => {
    const removed = createRemovedSitesRepository(state());
    expect(await removed.find('site_gone')).toBeUndefined();
    await removed.record('site_gone', at(1), at(10 * HOUR));
    expect(await removed.find('site_gone')).toEqual({
      siteId: 'site_gone',
      removedAt: at(1),
      keepUntil: at(10 * HOUR),
    });
    await removed.record('site_gone', at(2), at(20 * HOUR));
    expect(await removed.find('site_gone')).toEqual({
      siteId: 'site_gone',
      removedAt: at(2),
      keepUntil: at(20 * HOUR),
    });
  });

  if (dialect === 'sqlite')
    it('writes at once, for the job runner’s synchronous callbacks: the rows written with their job rows, and the hooks’ conditional ends', async () => {
      await withSites(state(), 'site_a');
      const repository = createBackupsRepository(state());
      const { inHook } = repository;
      expect(inHook.activeJob('site_a')).toBeUndefined();
      const written = inHook.insertBackup(backup('bkp_1', 'site_a', { status: 'queued', targets: ['local'] }));
      expect(written).toMatchObject({ id: 'bkp_1', status: 'queued', targets: ['local'], files: 0 });
      expect(await repository.findBackup('bkp_1')).toEqual(written);
      expect(inHook.activeJob('site_a')).toEqual({ kind: 'backup', id: 'bkp_1' });
      // A cancel while queued; the same cancel once it ran writes nothing.
      expect(inHook.updateBackup('bkp_1', { status: 'failed', reason: 'cancelled' }, ['queued'])).toMatchObject({
        status: 'failed',
        reason: 'cancelled',
      });
      expect(inHook.updateBackup('bkp_1', { status: 'failed', reason: 'interrupted' }, ['queued', 'running'])).toBe(
        undefined,
      );
      const restored = inHook.insertRestore(restore('rst_1', 'site_a', { status: 'running' }));
      expect(await repository.findRestore('rst_1')).toEqual(restored);
      expect(inHook.activeJob('site_a')).toEqual({ kind: 'restore', id: 'rst_1' });
      expect(inHook.updateRestore('rst_1', { status: 'failed' }, ['queued'])).toBeUndefined();
      expect(inHook.updateRestore('rst_1', { status: 'failed' }, ['running'])).toMatchObject({ status: 'failed' });
      expect(await repository.findRestore('rst_1')).toMatchObject({ status: 'failed' });
    });
  else
    it('refuses the SQLite runner’s synchronous writes: its rows are written on the job store’s transaction', () => {
      const { inHook } = createBackupsRepository(state());
      expect(() => inHook.insertBackup(backup('bkp_1', 'site_a'))).toThrow(/job store gives its transaction/);
      expect(() => inHook.updateRestore('rst_1', { status: 'failed' }, ['queued'])).toThrow(/withJob/);
    });
});
