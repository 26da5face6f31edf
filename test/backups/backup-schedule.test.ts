import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_BACKUPS_CONFIG, type BackupsConfig } from '../../src/backups/backups.config.js';
import {
  backups as backupsTable,
  restores as restoresTable,
  type NewBackupRow,
} from '../../src/backups/backups.table.js';
import { latestSlot } from '../../src/jobs/spread.js';
import { createId } from '../../src/shared/ids.js';
import { startFakeSite } from '../support/fake-wordpress/index.js';
import { insertJobRowOf } from '../support/job-rows.js';
import { createFakeClock, createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';

/**
 * Backup schedules, settings and restarts without WordPress: sites are connected rows pointing
 * at loopback addresses that refuse connections (or a fake site that never answers), so jobs
 * end quickly (or hang until aborted) and what is tested is what gets queued, when, and why.
 */
const START = new Date('2026-03-02T10:00:00Z');
const apps: { t: TestApp; dataDir: string }[] = [];

function createBackupTestApp(backups: Partial<BackupsConfig> = {}) {
  const clock = createFakeClock(START);
  const dataDir = mkdtempSync(join(tmpdir(), 'sitewarden-schedule-'));
  const t = createTestApp({ clock, config: { dataDir, backups: { ...DEFAULT_BACKUPS_CONFIG, ...backups } } });
  apps.push({ t, dataDir });
  /** A connected site; by default at a loopback port nothing listens on. */
  const addSite = (url?: string): string => insertConnectedSite(t, url ? { url } : {});
  /** A backup row and its job row, as a daemon left them. */
  const insertBackup = (row: Omit<NewBackupRow, 'id' | 'createdAt'> & { id?: string; createdAt?: Date }) => {
    const inserted = t.database.db
      .insert(backupsTable)
      .values({ id: createId('bkp', row.createdAt ?? clock.now()), createdAt: clock.now(), ...row })
      .returning()
      .get();
    insertJobRowOf(t.database.db, 'backup', inserted);
    return inserted;
  };
  const backupsOf = (siteId: string) =>
    t.database.db.select().from(backupsTable).where(eq(backupsTable.siteId, siteId)).orderBy(backupsTable.id).all();
  return { t, clock, addSite, insertBackup, backupsOf };
}

afterEach(async () => {
  for (const { t, dataDir } of apps.splice(0)) {
    await t.services.backups.idle();
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

describe('a site’s backup settings', () => {
  it('default to the SITEWARDEN_BACKUP_* values, change with PATCH, and null restores a default', async () => {
    const { t, addSite } = createBackupTestApp({ intervalHours: 24, keepLast: 14, keepDays: 0 });
    const siteId = addSite();
    const settings = await t.call('GET', `/api/sites/${siteId}/settings`, { token: t.readToken });
    expect(settings.status).toBe(200);
    expect(settings.json.backups).toEqual({
      enabled: true,
      intervalHours: 24,
      keepLast: 14,
      keepDays: 0,
      keepDaily: 0,
      keepWeekly: 0,
      keepMonthly: 0,
      keepYearly: 0,
      nextScheduledAt: START.toISOString(),
    });

    const patched = await t.call('PATCH', `/api/sites/${siteId}`, {
      json: { backups: { intervalHours: 6, keepLast: 3, keepDays: 10 } },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.json.backups).toMatchObject({ enabled: true, intervalHours: 6, keepLast: 3, keepDays: 10 });
    expect(patched.json.monitoring).toBeDefined();

    const reset = await t.call('PATCH', `/api/sites/${siteId}`, {
      json: { backups: { keepLast: null, enabled: false } },
    });
    expect(reset.json.backups).toEqual({
      enabled: false,
      intervalHours: 6,
      keepLast: 14,
      keepDays: 10,
      keepDaily: 0,
      keepWeekly: 0,
      keepMonthly: 0,
      keepYearly: 0,
      nextScheduledAt: null,
    });
    expect((await t.call('GET', `/api/sites/${siteId}/settings`)).json.backups).toEqual(reset.json.backups);
  });

  it('refuses invalid values as a 400 problem and then writes no section at all', async () => {
    const { t, addSite } = createBackupTestApp();
    const siteId = addSite();
    const before = (await t.call('GET', `/api/sites/${siteId}/settings`)).json;
    const invalid = await t.call('PATCH', `/api/sites/${siteId}`, {
      json: { monitoring: { paused: true }, backups: { intervalHours: 0, keepLast: 0, keepDays: -1 } },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.json.type).toBe('/problems/validation-failed');
    expect(invalid.json.errors.map((error: { field: string }) => error.field).sort()).toEqual([
      'backups.intervalHours',
      'backups.keepDays',
      'backups.keepLast',
    ]);
    expect((await t.call('PATCH', `/api/sites/${siteId}`, { json: { backups: { retention: 3 } } })).status).toBe(400);
    expect((await t.call('PATCH', `/api/sites/${siteId}`, { json: { backups: { intervalHours: 2.5 } } })).status).toBe(
      400,
    );
    expect((await t.call('GET', `/api/sites/${siteId}/settings`)).json).toEqual(before);

    expect(
      (await t.call('PATCH', `/api/sites/${siteId}`, { json: { backups: { enabled: false } }, token: t.readToken }))
        .status,
    ).toBe(403);
    expect((await t.call('GET', '/api/sites/site_unknown/settings')).status).toBe(404);
    expect((await t.call('PATCH', '/api/sites/site_unknown', { json: { backups: { enabled: false } } })).status).toBe(
      404,
    );
  });

  it('are in the OpenAPI document', async () => {
    const { t } = createBackupTestApp();
    const doc = (await t.call('GET', '/api/openapi.json', { token: t.readToken })).json;
    expect(Object.keys(doc.components.schemas.BackupSettingsInput.properties).sort()).toEqual([
      'enabled',
      'intervalHours',
      'keepDaily',
      'keepDays',
      'keepLast',
      'keepMonthly',
      'keepWeekly',
      'keepYearly',
    ]);
    expect(doc.components.schemas.SiteSettings.properties.backups).toEqual({
      $ref: '#/components/schemas/BackupSettings',
    });
  });
});

describe('scheduled backups', () => {
  /** Runs the ten-minute ticks over `hours`, marking each queued backup completed; returns when each site was queued. */
  async function runTicks(app: ReturnType<typeof createBackupTestApp>, hours: number): Promise<Map<string, Date[]>> {
    const queuedAt = new Map<string, Date[]>();
    for (let tick = 0; tick < (hours * 60) / 10; tick++) {
      for (const siteId of await app.t.services.backups.enqueueDue())
        queuedAt.set(siteId, [...(queuedAt.get(siteId) ?? []), app.clock.now()]);
      await app.t.services.backups.idle();
      // The sites refuse connections; count the backups as taken so only the schedule decides.
      app.t.database.db
        .update(backupsTable)
        .set({ status: 'completed' })
        .where(eq(backupsTable.status, 'failed'))
        .run();
      app.clock.advance(10 * 60_000);
    }
    return queuedAt;
  }

  it('are spread over the interval: each site once per interval, at its own fixed slot', async () => {
    const app = createBackupTestApp({ intervalHours: 24 });
    const sites = Array.from({ length: 30 }, () => app.addSite());
    // Every site was backed up just now, so the next one falls at its slot in the coming day.
    for (const siteId of sites) app.insertBackup({ siteId, kind: 'scheduled', status: 'completed' });
    const queuedAt = await runTicks(app, 48);
    const dayMs = 24 * 3_600_000;
    const firstQueued = new Set<number>();
    let total = 0;
    for (const siteId of sites) {
      const times = queuedAt.get(siteId) ?? [];
      // Once a day (twice in two days, unless its slot fell right at the window's edge).
      expect(times.length, siteId).toBeGreaterThanOrEqual(1);
      expect(times.length, siteId).toBeLessThanOrEqual(2);
      if (times.length === 2) expect(times[1]!.getTime() - times[0]!.getTime()).toBe(dayMs);
      // Each time at the first tick at or after its slot.
      for (const time of times)
        expect(time.getTime() - latestSlot(siteId, dayMs, time).getTime()).toBeLessThan(10 * 60_000);
      firstQueued.add(times[0]!.getTime());
      total += times.length;
    }
    expect(total).toBeGreaterThan(50);
    // Thirty sites over 144 ticks a day: far from all at once.
    expect(firstQueued.size).toBeGreaterThan(20);
  });

  it('follows a site’s own interval and off switch, even with scheduled backups off by default', async () => {
    const app = createBackupTestApp({ intervalHours: 0 });
    const [byDefault, everySixHours, switchedOff] = [app.addSite(), app.addSite(), app.addSite()];
    for (const siteId of [byDefault, everySixHours, switchedOff])
      app.insertBackup({ siteId, kind: 'manual', status: 'completed' });
    expect(
      (await app.t.call('PATCH', `/api/sites/${everySixHours}`, { json: { backups: { intervalHours: 6 } } })).status,
    ).toBe(200);
    expect(
      (
        await app.t.call('PATCH', `/api/sites/${switchedOff}`, {
          json: { backups: { intervalHours: 6, enabled: false } },
        })
      ).status,
    ).toBe(200);
    const next = (await app.t.call('GET', `/api/sites/${everySixHours}/settings`)).json.backups.nextScheduledAt;
    expect(Date.parse(next)).toBe(latestSlot(everySixHours, 6 * 3_600_000, START).getTime() + 6 * 3_600_000);
    const queuedAt = await runTicks(app, 25);
    expect(queuedAt.get(byDefault)).toBeUndefined();
    expect(queuedAt.get(switchedOff)).toBeUndefined();
    const times = queuedAt.get(everySixHours)!.map((time) => time.getTime());
    expect(times.length).toBeGreaterThanOrEqual(4);
    expect(times.length).toBeLessThanOrEqual(5);
    expect(times.slice(1).map((time, i) => time - times[i]!)).toEqual(times.slice(1).map(() => 6 * 3_600_000));
    expect(times[0]! - Date.parse(next)).toBeGreaterThanOrEqual(0);
    expect(times[0]! - Date.parse(next)).toBeLessThan(10 * 60_000);
  });

  it('applies a site’s own retention', async () => {
    const app = createBackupTestApp({ keepLast: 14 });
    const siteId = app.addSite();
    for (let i = 0; i < 5; i++) {
      app.insertBackup({ siteId, kind: 'manual', status: 'completed' });
      app.clock.advance(60_000);
    }
    expect((await app.t.call('PATCH', `/api/sites/${siteId}`, { json: { backups: { keepLast: 2 } } })).status).toBe(
      200,
    );
    const { deletedBackups } = await app.t.services.backups.applyRetention(siteId);
    expect(deletedBackups).toHaveLength(3);
    expect(app.backupsOf(siteId)).toHaveLength(2);
  });

  it('queues one backup of a site asked for twice at once; the other request is backup-in-progress', async () => {
    const app = createBackupTestApp();
    const siteId = app.addSite();
    const requests = await Promise.allSettled([
      app.t.services.backups.request(siteId),
      app.t.services.backups.request(siteId),
      app.t.services.backups.request(siteId),
    ]);
    expect(requests.filter((request) => request.status === 'fulfilled')).toHaveLength(1);
    for (const request of requests.filter((request) => request.status === 'rejected'))
      expect((request.reason as { problem: { name: string } }).problem.name).toBe('backup-in-progress');
    await app.t.services.backups.idle();
    expect(app.backupsOf(siteId)).toHaveLength(1);
  });
});

describe('a restart', () => {
  it('queues waiting jobs again, fails running ones as interrupted, and retries an interrupted backup once', async () => {
    const app = createBackupTestApp();
    const [wasRunning, wasQueued, wasRestoring, alreadyRetried, backedUpSince] = [
      app.addSite(),
      app.addSite(),
      app.addSite(),
      app.addSite(),
      app.addSite(),
    ];
    const target = app.insertBackup({
      siteId: wasRestoring,
      kind: 'manual',
      status: 'completed',
      manifestHash: 'a'.repeat(64),
    });
    app.clock.advance(60_000);
    const running = app.insertBackup({
      siteId: wasRunning,
      kind: 'scheduled',
      status: 'running',
      startedAt: app.clock.now(),
    });
    const queued = app.insertBackup({ siteId: wasQueued, kind: 'manual', status: 'queued' });
    const preRestore = app.insertBackup({ siteId: wasRestoring, kind: 'pre_restore', status: 'running' });
    const restoreRow = app.t.database.db
      .insert(restoresTable)
      .values({
        id: 'rst_interrupted',
        siteId: wasRestoring,
        backupId: target.id,
        preRestoreBackupId: preRestore.id,
        status: 'running',
        createdAt: app.clock.now(),
      })
      .returning()
      .get();
    insertJobRowOf(app.t.database.db, 'restore', restoreRow);
    const first = app.insertBackup({ siteId: alreadyRetried, kind: 'manual', status: 'failed', reason: 'interrupted' });
    app.clock.advance(60_000);
    const retryOfFirst = app.insertBackup({
      siteId: alreadyRetried,
      kind: 'manual',
      status: 'running',
      retryOf: first.id,
    });
    const old = app.insertBackup({ siteId: backedUpSince, kind: 'manual', status: 'running' });
    app.clock.advance(60_000);
    app.insertBackup({ siteId: backedUpSince, kind: 'manual', status: 'completed' });

    await app.t.services.backups.recoverInterrupted();
    await app.t.services.backups.idle();
    const get = (siteId: string, id: string) =>
      app.t.call('GET', `/api/sites/${siteId}/backups/${id}`).then((response) => response.json);

    // Running → failed `interrupted`, then retried once as a new backup of the same kind.
    expect(await get(wasRunning, running.id)).toMatchObject({ status: 'failed', reason: 'interrupted', retryOf: null });
    const [, retry] = app.backupsOf(wasRunning);
    expect(retry).toMatchObject({ kind: 'scheduled', retryOf: running.id });
    // Queued → queued again: the same backup ran (and failed here, as the site refuses connections).
    expect(app.backupsOf(wasQueued)).toHaveLength(1);
    expect(await get(wasQueued, queued.id)).toMatchObject({ status: 'failed', reason: 'site-unreachable' });
    // A restore is never re-run; its pre-restore backup is not retried.
    expect((await app.t.call('GET', `/api/sites/${wasRestoring}/restores/rst_interrupted`)).json).toMatchObject({
      status: 'failed',
      reason: 'interrupted',
    });
    expect((await app.t.call('GET', `/api/sites/${wasRestoring}/restores/rst_interrupted`)).json.error).toContain(
      'not re-run automatically',
    );
    expect(app.backupsOf(wasRestoring).map((row) => [row.id, row.status, row.reason])).toEqual([
      [target.id, 'completed', null],
      [preRestore.id, 'failed', 'interrupted'],
    ]);
    // A retry is not retried; a backup interrupted before a newer one is not either.
    expect(app.backupsOf(alreadyRetried).map((row) => row.id)).toEqual([first.id, retryOfFirst.id]);
    expect(app.backupsOf(backedUpSince)).toHaveLength(2);
    expect(await get(backedUpSince, old.id)).toMatchObject({ status: 'failed', reason: 'interrupted' });

    const events = app.t.logs
      .events('job.interrupted')
      .map(({ kind, jobId, siteId, action }) => ({ kind, jobId, siteId, action }));
    expect(events).toEqual(
      expect.arrayContaining([
        { kind: 'backup', jobId: running.id, siteId: wasRunning, action: 'failed' },
        { kind: 'backup', jobId: running.id, siteId: wasRunning, action: 'retried' },
        { kind: 'backup', jobId: queued.id, siteId: wasQueued, action: 'requeued' },
        { kind: 'backup', jobId: preRestore.id, siteId: wasRestoring, action: 'failed' },
        { kind: 'restore', jobId: 'rst_interrupted', siteId: wasRestoring, action: 'failed' },
        { kind: 'backup', jobId: retryOfFirst.id, siteId: alreadyRetried, action: 'failed' },
        { kind: 'backup', jobId: old.id, siteId: backedUpSince, action: 'failed' },
      ]),
    );
    expect(events).toHaveLength(7);
    expect(app.t.logs.events('job.interrupted').find((event) => event.action === 'retried')).toMatchObject({
      retryId: retry!.id,
    });

    // A second start finds nothing more to do.
    await app.t.services.backups.recoverInterrupted();
    await app.t.services.backups.idle();
    expect(app.backupsOf(wasRunning)).toHaveLength(2);
    expect(app.t.logs.events('job.interrupted')).toHaveLength(7);
  });
});

describe('shutdown', () => {
  it('aborts a running backup at once instead of waiting for the site, and records it interrupted', async () => {
    const hanging = await startFakeSite(() => undefined); // Accepts every request and never answers.
    try {
      const app = createBackupTestApp();
      const siteId = app.addSite(hanging.url);
      const queued = await app.t.call('POST', `/api/sites/${siteId}/backups`);
      expect(queued.status).toBe(202);
      const waitingQueued = app.addSite();
      app.insertBackup({ siteId: waitingQueued, kind: 'manual', status: 'queued' });
      while (app.backupsOf(siteId)[0]!.status !== 'running') await new Promise((resolve) => setImmediate(resolve));

      const started = performance.now();
      expect(await app.t.services.backups.stop(20_000)).toBe(true);
      expect(performance.now() - started).toBeLessThan(1_000);
      expect(app.backupsOf(siteId)[0]).toMatchObject({ status: 'failed', reason: 'interrupted' });
      expect(app.backupsOf(siteId)[0]!.error).toContain('it is retried once, as a new backup');
      expect(app.t.logs.events('job.interrupted')).toEqual([
        expect.objectContaining({ kind: 'backup', jobId: queued.json.id, action: 'failed' }),
      ]);
      expect(app.backupsOf(waitingQueued)[0]!.status).toBe('queued');
      // The abandoned request to the site is cut, not awaited, when the site client closes last.
      const closing = performance.now();
      await app.t.services.http.close();
      expect(performance.now() - closing).toBeLessThan(1_000);
    } finally {
      await hanging.close();
    }
  });

  it('gives a running restore the grace period, then aborts it and never re-runs it', async () => {
    const hanging = await startFakeSite(() => undefined);
    try {
      const app = createBackupTestApp();
      const siteId = app.addSite(hanging.url);
      const { hash } = await app.t.services.backups.store.put(
        Buffer.from(
          JSON.stringify({ format: 1, siteUrl: hanging.url, createdAt: START.toISOString(), files: [], tables: [] }),
        ),
      );
      const target = app.insertBackup({ siteId, kind: 'manual', status: 'completed', manifestHash: hash });
      const restore = await app.t.call('POST', `/api/sites/${siteId}/backups/${target.id}/restore`);
      expect(restore.status, restore.text).toBe(202);
      while (app.t.database.db.select().from(restoresTable).get()?.status !== 'running')
        await new Promise((resolve) => setImmediate(resolve));

      const started = performance.now();
      expect(await app.t.services.backups.stop(300)).toBe(false);
      const took = performance.now() - started;
      expect(took).toBeGreaterThanOrEqual(290);
      expect(took).toBeLessThan(1_500);
      const row = (await app.t.call('GET', `/api/sites/${siteId}/restores/${restore.json.id}`)).json;
      expect(row).toMatchObject({ status: 'failed', reason: 'interrupted' });
      expect(row.error).toContain(`backup ${row.preRestoreBackupId} holds the site as it was before`);
      await app.t.services.backups.recoverInterrupted();
      expect(app.t.database.db.select().from(restoresTable).all()).toHaveLength(1);
      expect(app.backupsOf(siteId).filter((backup) => backup.retryOf !== null)).toEqual([]);
    } finally {
      await hanging.close();
    }
  });
});
