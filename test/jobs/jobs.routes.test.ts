import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_BACKUPS_CONFIG } from '../../src/backups/backups.config.js';
import { backups as backupsTable, restores as restoresTable } from '../../src/backups/backups.table.js';
import { performanceAudits } from '../../src/performance/performance.table.js';
import { createId } from '../../src/shared/ids.js';
import { startFakeSite, startFakeWordPress } from '../support/fake-wordpress/index.js';
import { createFakeClock, createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';

/** GET /api/jobs, GET /api/jobs/{id} and POST /api/jobs/{id}/cancel over real backups, restores and audits. */
const apps: { t: TestApp; dataDir: string }[] = [];
const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const { t, dataDir } of apps.splice(0)) {
    await t.services.backups.stop(0);
    await t.services.performance.stop();
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  while (closers.length > 0) await closers.pop()!();
});

function createJobsTestApp({ concurrency = 2, fakeClock = false } = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'sitewarden-jobs-'));
  const clock = fakeClock ? createFakeClock(new Date('2026-11-23T10:00:00Z')) : undefined;
  const t = createTestApp({ clock, config: { dataDir, backups: { ...DEFAULT_BACKUPS_CONFIG, concurrency } } });
  apps.push({ t, dataDir });
  /** A connected site; by default at a loopback port nothing listens on. */
  const addSite = (url?: string): string => insertConnectedSite(t, url ? { url } : {});
  const job = async (id: string) => (await t.call('GET', `/api/jobs/${id}`, { token: t.readToken })).json;
  const waitFor = async (id: string, state: string) => {
    while ((await job(id)).state !== state) await new Promise((resolve) => setTimeout(resolve, 5));
  };
  return { t, addSite, job, waitFor };
}

/** A site that accepts every request and never answers: its backup runs until it is stopped. */
async function hangingSite() {
  const site = await startFakeSite(() => undefined);
  closers.push(site.close);
  return site.url;
}

describe('the jobs list', () => {
  it('shows backups, restores and audits as jobs, newest first, filtered by site, kind and state, page by page', async () => {
    const { t, addSite } = createJobsTestApp({ fakeClock: true });
    const [siteA, siteB] = [addSite(), addSite()];
    const at = () => t.clock.now();
    const db = t.database.db;
    const minute = () => (t.clock as ReturnType<typeof createFakeClock>).advance(60_000);
    // A history of ended jobs, each written with its feature's row as the job runner writes one that ended elsewhere.
    const ended = { attempts: 0, startedAt: null, reason: null, message: null };
    const doneId = createId('bkp', at());
    const done = (
      await t.services.jobs.record(
        {
          ...ended,
          id: doneId,
          kind: 'backup',
          siteId: siteA,
          state: 'succeeded',
          params: { kind: 'manual', retryOf: null },
          createdAt: at(),
        },
        () =>
          db
            .insert(backupsTable)
            .values({ id: doneId, siteId: siteA, kind: 'manual', status: 'completed', createdAt: at() })
            .returning()
            .get(),
      )
    ).own;
    minute();
    const failedId = createId('bkp', at());
    const failed = (
      await t.services.jobs.record(
        {
          id: failedId,
          kind: 'backup',
          siteId: siteB,
          state: 'failed',
          reason: 'site-unreachable',
          message: 'refused',
          params: { kind: 'scheduled', retryOf: null },
          attempts: 1,
          createdAt: at(),
          startedAt: at(),
          finishedAt: at(),
        },
        () =>
          db
            .insert(backupsTable)
            .values({
              id: failedId,
              siteId: siteB,
              kind: 'scheduled',
              status: 'failed',
              reason: 'site-unreachable',
              error: 'refused',
              createdAt: at(),
              startedAt: at(),
              finishedAt: at(),
            })
            .returning()
            .get(),
      )
    ).own;
    minute();
    const restoreId = createId('rst', at());
    const restore = (
      await t.services.jobs.record(
        {
          ...ended,
          id: restoreId,
          kind: 'restore',
          siteId: siteA,
          state: 'succeeded',
          params: { backupId: done.id, preRestoreBackupId: null },
          progress: { filesRestored: 3, filesDeleted: 0, tablesRestored: 0, bytesTransferred: 0 },
          createdAt: at(),
        },
        () =>
          db
            .insert(restoresTable)
            .values({
              id: restoreId,
              siteId: siteA,
              backupId: done.id,
              status: 'completed',
              filesRestored: 3,
              createdAt: at(),
            })
            .returning()
            .get(),
      )
    ).own;
    minute();
    const auditId = createId('perf', at());
    const audit = (
      await t.services.jobs.record(
        {
          ...ended,
          id: auditId,
          kind: 'audit',
          siteId: siteA,
          state: 'failed',
          reason: 'page_unreachable',
          message: 'refused',
          params: { url: 'http://127.0.0.1:1', formFactor: 'mobile', trigger: 'manual', runs: 1 },
          createdAt: at(),
        },
        () =>
          db
            .insert(performanceAudits)
            .values({
              id: auditId,
              siteId: siteA,
              url: 'http://127.0.0.1:1',
              formFactor: 'mobile',
              trigger: 'manual',
              runs: 1,
              status: 'failed',
              failureReason: 'page_unreachable',
              failureMessage: 'refused',
              queuedAt: at(),
            })
            .returning()
            .get(),
      )
    ).own;

    const list = async (query = '') => {
      const response = await t.call('GET', `/api/jobs${query}`, { token: t.readToken });
      expect(response.status, response.text).toBe(200);
      return response.json as { items: Record<string, unknown>[]; nextCursor: string | null };
    };
    const ids = async (query = '') => (await list(query)).items.map((item) => item.id);

    expect(await ids()).toEqual([audit.id, restore.id, failed.id, done.id]);
    expect((await list()).items).toEqual([
      expect.objectContaining({ kind: 'audit', state: 'failed', reason: 'page_unreachable', message: 'refused' }),
      expect.objectContaining({
        kind: 'restore',
        siteId: siteA,
        state: 'succeeded',
        params: { backupId: done.id, preRestoreBackupId: null },
        progress: expect.objectContaining({ filesRestored: 3 }),
      }),
      expect.objectContaining({
        kind: 'backup',
        siteId: siteB,
        state: 'failed',
        reason: 'site-unreachable',
        attempts: 1,
        params: { kind: 'scheduled', retryOf: null },
      }),
      expect.objectContaining({ kind: 'backup', state: 'succeeded', attempts: 0, startedAt: null }),
    ]);
    expect(await ids(`?siteId=${siteB}`)).toEqual([failed.id]);
    expect(await ids('?kind=backup')).toEqual([failed.id, done.id]);
    expect(await ids('?state=succeeded')).toEqual([restore.id, done.id]);
    expect(await ids(`?siteId=${siteA}&kind=backup&state=succeeded`)).toEqual([done.id]);

    const first = await list('?limit=3');
    expect(first.items.map((item) => item.id)).toEqual([audit.id, restore.id, failed.id]);
    const second = await list(`?limit=3&cursor=${first.nextCursor}`);
    expect(second).toEqual({ items: [expect.objectContaining({ id: done.id })], nextCursor: null });

    for (const query of ['?state=done', '?limit=0', '?cursor=bm9wZQ']) {
      const response = await t.call('GET', `/api/jobs${query}`, { token: t.readToken });
      expect(response.status, query).toBe(400);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
    }
  });

  it('answers 404 job-not-found for an unknown job', async () => {
    const { t } = createJobsTestApp();
    for (const [method, path] of [
      ['GET', '/api/jobs/bkp_unknown'],
      ['POST', '/api/jobs/bkp_unknown/cancel'],
    ] as const) {
      const response = await t.call(method, path);
      expect(response.status).toBe(404);
      expect(response.json.type).toBe('/problems/job-not-found');
    }
  });
});

describe('a backup queued through the backups API', () => {
  it('shows up as a job and follows it to succeeded', async () => {
    const { t, job } = createJobsTestApp();
    const site = await startFakeWordPress({ files: { 'index.php': '<?php // hello' } });
    closers.push(site.close);
    const connected = await t.call('POST', '/api/sites', {
      json: { url: site.url, username: site.username, applicationPassword: site.applicationPassword },
    });
    expect(connected.status, connected.text).toBe(201);
    const queued = await t.call('POST', `/api/sites/${connected.json.id}/backups`);
    expect(queued.status, queued.text).toBe(202);
    expect(await job(queued.json.id)).toMatchObject({
      id: queued.json.id,
      kind: 'backup',
      siteId: connected.json.id,
      params: { kind: 'manual', retryOf: null },
    });
    expect(['queued', 'running']).toContain((await job(queued.json.id)).state);
    await t.services.backups.idle();
    const backup = (await t.call('GET', `/api/sites/${connected.json.id}/backups/${queued.json.id}`)).json;
    expect(backup.status).toBe('completed');
    expect(await job(queued.json.id)).toMatchObject({
      state: 'succeeded',
      reason: null,
      attempts: 1,
      progress: expect.objectContaining({ files: backup.progress.files, bytesStored: backup.bytes.stored }),
      startedAt: backup.startedAt,
      finishedAt: backup.finishedAt,
    });
  });
});

describe('cancel', () => {
  it('cancels a queued backup at once: the job says cancelled, the backup failed with reason cancelled', async () => {
    const { t, addSite, job, waitFor } = createJobsTestApp({ concurrency: 1 });
    const busy = addSite(await hangingSite());
    const waiting = addSite();
    const running = await t.call('POST', `/api/sites/${busy}/backups`);
    await waitFor(running.json.id, 'running');
    const queued = await t.call('POST', `/api/sites/${waiting}/backups`);
    expect(queued.status).toBe(202);

    const cancelled = await t.call('POST', `/api/jobs/${queued.json.id}/cancel`);
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.json).toMatchObject({ state: 'cancelled', reason: 'cancelled' });
    expect((await t.call('GET', `/api/sites/${waiting}/backups/${queued.json.id}`)).json).toMatchObject({
      status: 'failed',
      reason: 'cancelled',
    });
    expect(t.logs.events('job.cancelled')).toEqual([
      expect.objectContaining({
        kind: 'backup',
        jobId: queued.json.id,
        siteId: waiting,
        state: 'queued',
        // Who asked: the test's write token.
        requestedByKind: 'token',
        requestedById: expect.any(String),
      }),
    ]);
    // The site is free again, and a cancelled job stays cancelled.
    expect((await t.call('POST', `/api/sites/${waiting}/backups`)).status).toBe(202);
    const again = await t.call('POST', `/api/jobs/${queued.json.id}/cancel`);
    expect(again.status).toBe(409);
    expect(again.json.type).toBe('/problems/job-finished');
    expect((await job(queued.json.id)).state).toBe('cancelled');
  });

  it('cancels a queued audit: the job says cancelled, the audit failed as interrupted, and it never runs', async () => {
    const { t, addSite, job } = createJobsTestApp();
    const siteId = addSite();
    // Written as the performance feature queues one, not run.
    const auditId = createId('perf', new Date());
    const { own: audit } = await t.services.jobs.create(
      { id: auditId, kind: 'audit', siteId, createdAt: new Date() },
      () =>
        t.database.db
          .insert(performanceAudits)
          .values({
            id: auditId,
            siteId,
            url: 'http://127.0.0.1:1',
            formFactor: 'mobile',
            trigger: 'scheduled',
            runs: 1,
            status: 'queued',
            queuedAt: new Date(),
          })
          .returning()
          .get(),
    );
    const cancelled = await t.call('POST', `/api/jobs/${audit.id}/cancel`);
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.json).toMatchObject({ kind: 'audit', state: 'cancelled', reason: 'cancelled' });
    expect(await t.services.performance.get(siteId, audit.id)).toMatchObject({
      status: 'failed',
      failureReason: 'interrupted',
      failureMessage: 'cancelled on request',
    });
    // A restart does not queue it again.
    expect(await t.services.performance.recover()).toEqual({ requeued: 0, interrupted: 0 });
    expect((await job(audit.id)).state).toBe('cancelled');
  });

  it('stops a running backup: 202, then the job is cancelled and the backup failed with reason cancelled', async () => {
    const { t, addSite, job, waitFor } = createJobsTestApp();
    const siteId = addSite(await hangingSite());
    const queued = await t.call('POST', `/api/sites/${siteId}/backups`);
    await waitFor(queued.json.id, 'running');

    const asked = await t.call('POST', `/api/jobs/${queued.json.id}/cancel`);
    expect(asked.status, asked.text).toBe(202);
    expect(asked.json.state).toBe('running');
    await t.services.backups.idle();
    expect(await job(queued.json.id)).toMatchObject({ state: 'cancelled', reason: 'cancelled' });
    expect((await t.call('GET', `/api/sites/${siteId}/backups/${queued.json.id}`)).json).toMatchObject({
      status: 'failed',
      reason: 'cancelled',
    });
    expect(t.logs.events('job.cancelled')).toEqual([
      expect.objectContaining({ jobId: queued.json.id, state: 'running', requestedByKind: 'token' }),
    ]);
    // Not a failure to alert on, and not retried at the next start.
    expect(t.logs.events('backup.failed')).toEqual([]);
    await t.services.backups.recoverInterrupted();
    expect((await t.call('GET', `/api/sites/${siteId}/backups`)).json.items).toHaveLength(1);
  });

  it('refuses a running restore (409 job-not-cancellable), and a read token (403)', async () => {
    const { t, addSite, waitFor } = createJobsTestApp();
    const url = await hangingSite();
    const siteId = addSite(url);
    const { hash } = await t.services.backups.store.put(
      Buffer.from(
        JSON.stringify({ format: 1, siteUrl: url, createdAt: new Date().toISOString(), files: [], tables: [] }),
      ),
    );
    const target = t.database.db
      .insert(backupsTable)
      .values({
        id: createId('bkp', new Date()),
        siteId,
        kind: 'manual',
        status: 'completed',
        manifestHash: hash,
        createdAt: new Date(),
      })
      .returning()
      .get();
    const restore = await t.call('POST', `/api/sites/${siteId}/backups/${target.id}/restore`);
    expect(restore.status, restore.text).toBe(202);
    await waitFor(restore.json.id, 'running');

    const refused = await t.call('POST', `/api/jobs/${restore.json.id}/cancel`);
    expect(refused.status).toBe(409);
    expect(refused.json.type).toBe('/problems/job-not-cancellable');
    const readOnly = await t.call('POST', `/api/jobs/${restore.json.id}/cancel`, { token: t.readToken });
    expect(readOnly.status).toBe(403);
    expect((await t.call('GET', `/api/jobs/${restore.json.id}`, { token: t.readToken })).json.state).toBe('running');
  });
});
