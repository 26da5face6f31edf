import { sql } from 'drizzle-orm';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { rowsOf } from '../../src/db/dialect.js';
import type {
  performanceAudits as pgPerformanceAudits,
  performanceSettings as pgPerformanceSettings,
} from '../../src/performance/performance.pg-table.js';
import { AuditPendingError, createPerformanceRepository } from '../../src/performance/performance.repository.js';
import type {
  NewAuditRow,
  performanceAudits as sqlitePerformanceAudits,
  performanceSettings as sqlitePerformanceSettings,
  PerformanceSettingsRow,
} from '../../src/performance/performance.table.js';
import { createJobStore } from '../../src/jobs/job-store.js';
import { createSitesRepository } from '../../src/sites/sites.repository.js';
import type { SiteState } from '../../src/sites/sites.table.js';
import { dialects, stateDatabaseFor, type RowsOf } from '../support/dialects.js';

/**
 * The performance audits and audit settings on both dialects (issue 34, docs/design/cluster-state.md): one
 * test body on SQLite `:memory:` and on a database of the run's PostgreSQL cluster. The writes the job
 * runner's SQLite transaction takes (`insertWithJob`, `inHook`) are SQLite's only, until the runner passes
 * its transaction to its kinds: tested there, and refused on PostgreSQL.
 */
const at = (ms: number) => new Date(Date.UTC(2026, 11, 1) + ms);
const audit = (id: string, fields: Partial<NewAuditRow> = {}): NewAuditRow => ({
  id,
  siteId: 'site_a',
  url: 'https://site_a.example.test',
  formFactor: 'mobile',
  trigger: 'manual',
  runs: 1,
  status: 'queued',
  queuedAt: at(0),
  ...fields,
});
const completed = (id: string, finishedAt: Date, fields: Partial<NewAuditRow> = {}) =>
  audit(id, { status: 'completed', finishedAt, scorePerformance: 0.9, reportBytes: 1_000, ...fields });
const settingsRow = (siteId: string, fields: Partial<PerformanceSettingsRow> = {}): PerformanceSettingsRow => ({
  siteId,
  enabled: true,
  formFactors: 'mobile,desktop',
  runs: 1,
  intervalHours: null,
  lastScheduledAt: null,
  ...fields,
});
const ids = (rows: readonly { id: string }[]) => rows.map((row) => row.id);

describe('the performance tables', () => {
  it('infer the same row types on both dialects, so the repository reads and writes the same rows', () => {
    expectTypeOf<RowsOf<typeof pgPerformanceAudits>>().toEqualTypeOf<RowsOf<typeof sqlitePerformanceAudits>>();
    expectTypeOf<RowsOf<typeof pgPerformanceSettings>>().toEqualTypeOf<RowsOf<typeof sqlitePerformanceSettings>>();
  });
});

describe.each(dialects)('the performance repository on %s', (dialect) => {
  const state = stateDatabaseFor(dialect, 'performance-repository');
  const addSite = (id: string, siteState: SiteState = 'connected') =>
    createSitesRepository(state()).insert({
      id,
      url: `https://${id}.example.test`,
      restUrl: `https://${id}.example.test/wp-json/`,
      state: siteState,
      createdAt: at(0),
      updatedAt: at(0),
    });

  it('writes an audit as stored: its dates to the millisecond, its scores and metrics as given', async () => {
    await addSite('site_a');
    const repository = createPerformanceRepository(state());
    const row = completed('perf_1', at(61_234), {
      startedAt: at(1_001),
      lighthouseVersion: '12.1.0',
      chromeVersion: '131.0.6778.85',
      scorePerformance: 0.87,
      scoreAccessibility: 1,
      scoreBestPractices: 0.96,
      scoreSeo: 0.1 + 0.2,
      firstContentfulPaintMs: 812.345678901234,
      largestContentfulPaintMs: 2345.678912345678,
      totalBlockingTimeMs: 0,
      cumulativeLayoutShift: 0.000123456789,
      speedIndexMs: 1999.5,
      timeToFirstByteMs: 120.25,
      reportBytes: 345_678,
    });
    const written = await repository.insert(row);
    expect(written).toEqual({ ...row, failureReason: null, failureMessage: null });
    expect(await repository.findById('perf_1')).toEqual(written);
    expect(await repository.findById('perf_none')).toBeUndefined();
  });

  it('refuses an audit of a site that does not exist, and drops a site’s audits, their job rows and settings with it', async () => {
    await addSite('site_a');
    await addSite('site_b');
    const repository = createPerformanceRepository(state());
    const jobs = createJobStore(state());
    await expect(repository.insert(audit('perf_0', { siteId: 'site_none' }))).rejects.toThrow();
    await repository.insert(completed('perf_1', at(1)));
    await repository.insert(audit('perf_2', { siteId: 'site_b' }));
    for (const [id, siteId] of [
      ['perf_1', 'site_a'],
      ['perf_2', 'site_b'],
    ] as const)
      await jobs.insert({ id, kind: 'audit', siteId, state: 'queued', createdAt: at(0) });
    await repository.patchSettings(settingsRow('site_a'), {});
    expect(await createSitesRepository(state()).delete('site_a')).toBe(true);
    expect(await repository.findById('perf_1')).toBeUndefined();
    // The audit's job row went with it (SQLite's and PostgreSQL's `performance_audits_job_delete`).
    expect(await jobs.find('perf_1')).toBeUndefined();
    expect(await jobs.find('perf_2')).toMatchObject({ siteId: 'site_b' });
    expect(await repository.readSettings('site_a')).toBeUndefined();
    expect(await repository.findById('perf_2')).toMatchObject({ siteId: 'site_b' });
  });

  it('updates an audit and answers it as written; nothing for one that is gone', async () => {
    await addSite('site_a');
    const repository = createPerformanceRepository(state());
    await repository.insert(audit('perf_1', { status: 'running', startedAt: at(1) }));
    expect(
      await repository.update('perf_1', {
        status: 'failed',
        finishedAt: at(2),
        failureReason: 'timeout',
        failureMessage: 'too slow',
      }),
    ).toMatchObject({ id: 'perf_1', status: 'failed', finishedAt: at(2), failureReason: 'timeout', startedAt: at(1) });
    expect(await repository.update('perf_none', { reportBytes: null })).toBeUndefined();
  });

  it('starts an audit only while it is queued', async () => {
    await addSite('site_a');
    const repository = createPerformanceRepository(state());
    await repository.insert(audit('perf_1'));
    expect(await repository.start('perf_1', at(5))).toMatchObject({ status: 'running', startedAt: at(5) });
    // Started already (another process took it), ended, or gone: not started again.
    expect(await repository.start('perf_1', at(6))).toBeUndefined();
    await repository.insert(completed('perf_2', at(7)));
    expect(await repository.start('perf_2', at(8))).toBeUndefined();
    expect(await repository.start('perf_none', at(8))).toBeUndefined();
    expect(await repository.findById('perf_1')).toMatchObject({ status: 'running', startedAt: at(5) });
    expect(await repository.findById('perf_2')).toMatchObject({ status: 'completed', startedAt: null });
  });

  it('reads a site’s history newest first, by form factor, time range and page', async () => {
    await addSite('site_a');
    await addSite('site_b');
    const repository = createPerformanceRepository(state());
    for (let n = 1; n <= 5; n++)
      await repository.insert(
        audit(`perf_${n}`, { formFactor: n % 2 === 0 ? 'desktop' : 'mobile', queuedAt: at(n * 1_000) }),
      );
    await repository.insert(audit('perf_9', { siteId: 'site_b' }));
    const history = (filter: Partial<Parameters<typeof repository.history>[0]>) =>
      repository.history({ siteId: 'site_a', limit: 10, ...filter }).then(ids);
    expect(await history({})).toEqual(['perf_5', 'perf_4', 'perf_3', 'perf_2', 'perf_1']);
    expect(await history({ formFactor: 'desktop' })).toEqual(['perf_4', 'perf_2']);
    expect(await history({ from: at(2_000), to: at(4_000) })).toEqual(['perf_4', 'perf_3', 'perf_2']);
    expect(await history({ before: 'perf_4', limit: 2 })).toEqual(['perf_3', 'perf_2']);
    expect(await history({ siteId: 'site_none' })).toEqual([]);
  });

  it('reads the latest completed audit of a form factor and the completed ones before an audit', async () => {
    await addSite('site_a');
    const repository = createPerformanceRepository(state());
    await repository.insert(completed('perf_1', at(1)));
    await repository.insert(completed('perf_2', at(2), { formFactor: 'desktop' }));
    await repository.insert(audit('perf_3', { status: 'failed', failureReason: 'timeout' }));
    await repository.insert(completed('perf_4', at(4)));
    await repository.insert(completed('perf_5', at(5)));
    await repository.insert(audit('perf_6'));
    expect((await repository.latestCompleted('site_a', 'mobile'))?.id).toBe('perf_5');
    expect((await repository.latestCompleted('site_a', 'desktop'))?.id).toBe('perf_2');
    expect(await repository.latestCompleted('site_none', 'mobile')).toBeUndefined();
    expect(ids(await repository.recentCompleted('site_a', 'mobile', 'perf_5', 5))).toEqual(['perf_4', 'perf_1']);
    expect(ids(await repository.recentCompleted('site_a', 'mobile', 'perf_6', 1))).toEqual(['perf_5']);
  });

  it('finds the reports past their retention, and the audits whose report is theirs to keep', async () => {
    await addSite('site_a');
    await addSite('site_b');
    const repository = createPerformanceRepository(state());
    await repository.insert(completed('perf_1', at(1_000)));
    await repository.insert(completed('perf_2', at(5_000)));
    await repository.insert(completed('perf_3', at(1_000), { reportBytes: null }));
    await repository.insert(audit('perf_4', { status: 'failed', finishedAt: at(1_000) }));
    await repository.insert(audit('perf_5', { status: 'running' }));
    await repository.insert(audit('perf_6'));
    await repository.insert(completed('perf_7', at(1_000), { siteId: 'site_b' }));
    expect(ids(await repository.reportsFinishedBefore(at(2_000))).sort()).toEqual(['perf_1', 'perf_7']);
    expect([...(await repository.auditIdsOfSite('site_a'))].sort()).toEqual(['perf_1', 'perf_2', 'perf_5', 'perf_6']);
    expect(await repository.auditIdsOfSite('site_none')).toEqual(new Set());
  });

  it('writes a site’s settings patch: the defaults with it when it has none, else only the fields it names', async () => {
    await addSite('site_a');
    const repository = createPerformanceRepository(state());
    expect(await repository.readSettings('site_a')).toBeUndefined();
    await repository.patchSettings(settingsRow('site_a', { enabled: false }), { enabled: false });
    expect(await repository.readSettings('site_a')).toEqual(settingsRow('site_a', { enabled: false }));

    // Two patches at once: each changes its own field, and keeps the other's.
    await Promise.all([
      repository.patchSettings(settingsRow('site_a', { runs: 3 }), { runs: 3 }),
      repository.patchSettings(settingsRow('site_a', { intervalHours: 6 }), { intervalHours: 6 }),
    ]);
    expect(await repository.readSettings('site_a')).toEqual(
      settingsRow('site_a', { enabled: false, runs: 3, intervalHours: 6 }),
    );
    // An empty patch changes nothing; the schedule's slot is never a patch's to write.
    await repository.claimSlot({ ...settingsRow('site_a'), lastScheduledAt: at(3_600_000) });
    await repository.patchSettings(settingsRow('site_a'), {});
    await repository.patchSettings(settingsRow('site_a', { formFactors: 'desktop' }), {
      formFactors: 'desktop',
      intervalHours: null,
    });
    expect(await repository.readSettings('site_a')).toEqual(
      settingsRow('site_a', { enabled: false, runs: 3, formFactors: 'desktop', lastScheduledAt: at(3_600_000) }),
    );
  });

  it('records a scheduled slot once: a later slot again, an earlier or the same one not, the settings kept', async () => {
    await addSite('site_a');
    await addSite('site_b');
    const repository = createPerformanceRepository(state());
    const slot = (hours: number) => at(hours * 3_600_000);
    // No row yet: the defaults written with the slot.
    expect(await repository.claimSlot({ ...settingsRow('site_a'), lastScheduledAt: slot(1) })).toBe(true);
    expect(await repository.claimSlot({ ...settingsRow('site_a'), lastScheduledAt: slot(1) })).toBe(false);
    expect(await repository.claimSlot({ ...settingsRow('site_a'), lastScheduledAt: slot(0) })).toBe(false);
    expect(await repository.readSettings('site_a')).toEqual(settingsRow('site_a', { lastScheduledAt: slot(1) }));

    // A row of its own: only the slot moves, whatever the tick read before (a patch meanwhile stays).
    await repository.patchSettings(settingsRow('site_b', { enabled: false, runs: 2 }), { enabled: false, runs: 2 });
    expect(await repository.claimSlot({ ...settingsRow('site_b'), lastScheduledAt: slot(2) })).toBe(true);
    expect(await repository.readSettings('site_b')).toEqual(
      settingsRow('site_b', { enabled: false, runs: 2, lastScheduledAt: slot(2) }),
    );

    // Two ticks at once (two processes): one takes the slot.
    const claims = await Promise.all(
      [1, 2, 3].map(() => repository.claimSlot({ ...settingsRow('site_a'), lastScheduledAt: slot(24) })),
    );
    expect(claims.filter(Boolean)).toHaveLength(1);
  });

  it('lists the connected sites with their settings, if any', async () => {
    await addSite('site_a');
    await addSite('site_b');
    await addSite('site_c', 'pending');
    const repository = createPerformanceRepository(state());
    await repository.patchSettings(settingsRow('site_b', { runs: 2 }), {});
    await repository.patchSettings(settingsRow('site_c'), {});
    const connected = await repository.connectedSites();
    expect(connected.sort((a, b) => a.id.localeCompare(b.id))).toEqual([
      { id: 'site_a', url: 'https://site_a.example.test', settings: null },
      { id: 'site_b', url: 'https://site_b.example.test', settings: settingsRow('site_b', { runs: 2 }) },
    ]);
  });

  it('keeps the scores’ index partial, on completed audits only', async () => {
    const query =
      dialect === 'postgres'
        ? sql`select indexdef as definition from pg_indexes where indexname = 'performance_audits_site_scores_idx'`
        : sql`select sql as definition from sqlite_master where name = 'performance_audits_site_scores_idx'`;
    const [index] = await state().run((db) => rowsOf<{ definition: string }>(state(), db, query));
    expect(index?.definition).toMatch(/where .*status.* = 'completed'/i);
  });

  it('writes an audit in its job’s transaction unless one of its site and form factor is pending, one of several at once', async () => {
    await addSite('site_a');
    const repository = createPerformanceRepository(state());
    const inTransaction = (id: string, fields: Partial<NewAuditRow> = {}) =>
      state().transaction(async (tx) => repository.insertWithJob(audit(id, fields), tx));
    expect(await inTransaction('perf_1')).toMatchObject({ id: 'perf_1', status: 'queued' });
    await expect(inTransaction('perf_2')).rejects.toBeInstanceOf(AuditPendingError);
    expect(await inTransaction('perf_3', { formFactor: 'desktop' })).toMatchObject({ id: 'perf_3' });
    await repository.update('perf_1', { status: 'completed', finishedAt: at(2) });
    await repository.update('perf_3', { status: 'completed', finishedAt: at(2) });
    // Four at once (on PostgreSQL, four transactions of the pool): one is written, the others find it pending.
    const settled = await Promise.allSettled(['perf_4', 'perf_5', 'perf_6', 'perf_7'].map((id) => inTransaction(id)));
    expect(settled.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    for (const result of settled.filter((result) => result.status === 'rejected'))
      expect(result.reason).toBeInstanceOf(AuditPendingError);
    const queued = (await repository.history({ siteId: 'site_a', limit: 10 })).filter((row) => row.status === 'queued');
    expect(queued).toHaveLength(1);
  });

  it('fails an unfinished audit as interrupted, in a transaction when given one, and leaves one that ended as it is', async () => {
    await addSite('site_a');
    const repository = createPerformanceRepository(state());
    await repository.insert(audit('perf_1'));
    await repository.insert(audit('perf_2', { status: 'running', startedAt: at(1) }));
    await repository.insert(completed('perf_3', at(2)));
    expect(
      await state().transaction((tx) => repository.interrupt('perf_1', at(5), 'cancelled on request', tx)),
    ).toMatchObject({
      status: 'failed',
      finishedAt: at(5),
      failureReason: 'interrupted',
      failureMessage: 'cancelled on request',
    });
    expect(await repository.interrupt('perf_2', at(6), 'the daemon stopped')).toMatchObject({
      status: 'failed',
      startedAt: at(1),
      finishedAt: at(6),
    });
    expect(await repository.interrupt('perf_3', at(7), 'the daemon stopped')).toBeUndefined();
    expect(await repository.interrupt('perf_none', at(7), 'the daemon stopped')).toBeUndefined();
    expect(await repository.findById('perf_3')).toMatchObject({ status: 'completed', finishedAt: at(2) });
  });

  if (dialect === 'sqlite') {
    it('writes an audit with its job synchronously, unless one of its site and form factor is pending', async () => {
      await addSite('site_a');
      const repository = createPerformanceRepository(state());
      const first = repository.insertWithJob(audit('perf_1'));
      expect(first).toMatchObject({ id: 'perf_1', status: 'queued', queuedAt: at(0) });
      expect(repository.insertWithJob(audit('perf_2', { formFactor: 'desktop' }))).toMatchObject({ id: 'perf_2' });
      let refused: unknown;
      try {
        repository.insertWithJob(audit('perf_3'));
      } catch (error) {
        refused = error;
      }
      expect(refused).toBeInstanceOf(AuditPendingError);
      expect((refused as AuditPendingError).audit).toEqual(first);
      expect(await repository.findById('perf_3')).toBeUndefined();
      // Running is pending too; once it ends, the next one is written.
      await repository.start('perf_1', at(1));
      expect(() => repository.insertWithJob(audit('perf_3'))).toThrow(AuditPendingError);
      await repository.update('perf_1', { status: 'completed', finishedAt: at(2) });
      expect(repository.insertWithJob(audit('perf_3'))).toMatchObject({ id: 'perf_3', status: 'queued' });
    });

    it('fails an unfinished audit as interrupted inside the runner’s transaction, at once', async () => {
      await addSite('site_a');
      const repository = createPerformanceRepository(state());
      await repository.insert(audit('perf_1'));
      await repository.insert(completed('perf_3', at(2)));
      expect(repository.inHook.interrupt('perf_1', at(5), 'cancelled on request')).toMatchObject({
        status: 'failed',
        finishedAt: at(5),
        failureReason: 'interrupted',
        failureMessage: 'cancelled on request',
      });
      expect(repository.inHook.interrupt('perf_3', at(7), 'cancelled on request')).toBeUndefined();
      expect(await repository.findById('perf_3')).toMatchObject({ status: 'completed', finishedAt: at(2) });
    });
  } else {
    it('refuses the hooks’ synchronous writes, naming issue 34', async () => {
      await addSite('site_a');
      const repository = createPerformanceRepository(state());
      expect(() => repository.insertWithJob(audit('perf_1'))).toThrow(/issue 34/);
      expect(() => repository.inHook.interrupt('perf_1', at(1), 'cancelled')).toThrow(/issue 34/);
      expect(await repository.findById('perf_1')).toBeUndefined();
    });
  }
});
