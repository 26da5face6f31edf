import { afterEach, describe, expect, it } from 'vitest';
import { createBulkUpdatesRepository } from '../../src/bulk-updates/bulk-updates.repository.js';
import { createBulkUpdatesService } from '../../src/bulk-updates/bulk-updates.service.js';
import type { ItemOutcome, createSiteUpdater } from '../../src/bulk-updates/site-updater.js';
import { createUpdateSlots } from '../../src/bulk-updates/update-slots.js';
import { createJobRunner } from '../../src/jobs/job-runner.js';
import { createJobStore } from '../../src/jobs/job-store.js';
import { createJobsRepository } from '../../src/jobs/jobs.repository.js';
import { createUpdateHistoryRepository } from '../../src/update-history/update-history.repository.js';
import { createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';

/**
 * Issue 34: the job runner is the single writer of a bulk update's job rows (the bulk job, its sites' child jobs,
 * a preview). The bulk module here reads the job rows through an object that has nothing but `find` and `list`: a
 * write of its own throws, and the rows below are the runner's.
 */
let t: TestApp;
afterEach(async () => {
  await t.close();
});

type SiteUpdater = ReturnType<typeof createSiteUpdater>;

function setup(updateSite: SiteUpdater) {
  t = createTestApp();
  const { db } = t.database;
  const rows = createJobsRepository({ db });
  const readOnly = new Proxy(createJobStore(t.state), {
    get(target, name) {
      if (name === 'find' || name === 'list') return target[name];
      throw new Error(`the bulk module used jobRows.${String(name)}: only the job runner writes job rows`);
    },
  });
  // A runner of its own (the app's has registered the bulk kinds already), writing through its own repository.
  const jobs = createJobRunner({ repository: rows, clock: t.clock, logger: t.logs.logger, events: t.services.events });
  const service = createBulkUpdatesService({
    repository: createBulkUpdatesRepository(t.state),
    history: createUpdateHistoryRepository(t.state),
    jobRows: readOnly,
    jobs,
    slots: createUpdateSlots({ concurrency: 4, perHost: 4 }),
    updateSite,
    clock: t.clock,
    events: t.services.events,
    logger: t.logs.logger,
  });
  return { rows, jobs, service };
}

const plugin = { type: 'plugin' as const, slug: 'akismet', fromVersion: '1.0.0', toVersion: '1.1.0' };
const trigger = { kind: 'request' as const, id: null };
/** Each item succeeds, or fails on the sites named; its end committed with the site's own writes. */
const updating =
  (failing: string[] = []): SiteUpdater =>
  async ({ siteId, items, onItem, batch }) => {
    await new Promise((resolve) => setImmediate(resolve));
    const outcomes: ItemOutcome[] = items.map((item) =>
      failing.includes(siteId)
        ? { ...item, state: 'failed', reason: 'site-error', message: 'no' }
        : { ...item, state: 'succeeded', reason: null, message: null },
    );
    onItem(outcomes);
    await batch.commit();
    return outcomes;
  };

describe('a bulk update’s job rows, written by the job runner', () => {
  it('a preview, applied once: its row, the run, each site and the run’s end', async () => {
    const failing = [] as string[];
    const { rows, service } = setup(updating(failing));
    const [ok, bad] = [insertConnectedSite(t), insertConnectedSite(t)];
    failing.push(bad);
    const gone = insertConnectedSite(t, { state: 'authorization_rejected' });
    const targets = [ok, bad, gone].map((siteId) => ({ siteId, ...plugin, version: '1.1.0' }));

    const preview = await service.start({ targets, trigger, dryRun: true });
    expect(rows.find(preview.id)).toMatchObject({
      kind: 'bulk-update',
      state: 'succeeded',
      attempts: 0,
      startedAt: null,
      finishedAt: preview.createdAt,
    });
    expect(JSON.parse(rows.find(preview.id)!.progress).plan).toHaveLength(3);

    const answered = await service.applyPreview(preview.id, { trigger });
    const runId = answered.job.id;
    expect(JSON.parse(rows.find(preview.id)!.progress)).toMatchObject({ appliedAs: runId });
    // Written queued with its sites in one go; the site not connected ended already.
    expect(answered.job).toMatchObject({ state: 'queued', attempts: 0 });
    expect(rows.list({ kind: 'site-update', limit: 10 }).map((row) => [row.siteId, row.state, row.reason])).toEqual(
      expect.arrayContaining([
        [ok, 'queued', null],
        [bad, 'queued', null],
        [gone, 'cancelled', 'site-not-connected'],
      ]),
    );
    expect(answered.sites.map((site) => site.state)).toEqual(['queued', 'queued', 'skipped']);

    await service.idle();
    expect(rows.find(runId)).toMatchObject({
      state: 'failed',
      reason: 'sites-failed',
      message: '1 of 3 sites failed',
      attempts: 1,
      startedAt: expect.any(Date),
      finishedAt: expect.any(Date),
    });
    expect(JSON.parse(rows.find(runId)!.progress)).toEqual({
      total: 3,
      done: 3,
      succeeded: 1,
      failed: 1,
      skipped: 1,
      cancelled: 0,
    });
    const { sites } = await service.run(runId);
    const row = (siteId: string) => rows.find(sites.find((site) => site.siteId === siteId)!.jobId!)!;
    expect(row(ok)).toMatchObject({ state: 'succeeded', reason: null, attempts: 1, startedAt: expect.any(Date) });
    expect(JSON.parse(row(ok).progress)).toEqual({ items: [expect.objectContaining({ state: 'succeeded' })] });
    expect(row(bad)).toMatchObject({ state: 'failed', reason: 'site-error', message: 'plugin akismet: no' });
    expect(row(gone)).toMatchObject({ state: 'cancelled', attempts: 0, startedAt: null });
  });

  it('a site update that crashed: failed, and nothing it had not committed is kept (not even its start)', async () => {
    const { rows, service } = setup(async () => {
      await new Promise((resolve) => setImmediate(resolve));
      throw new Error('a bug');
    });
    const siteId = insertConnectedSite(t);
    const job = await service.start({ targets: [{ siteId, ...plugin }], trigger });
    await service.idle();
    const [child] = rows.list({ kind: 'site-update', limit: 1 });
    expect(child).toMatchObject({ state: 'failed', reason: 'internal-error', attempts: 0, startedAt: null });
    expect(child!.message).toContain('a bug');
    expect(rows.find(job.id)).toMatchObject({ state: 'failed', reason: 'sites-failed' });
    expect(JSON.parse(rows.find(job.id)!.progress)).toMatchObject({ total: 1, done: 1, failed: 1 });
  });

  it('a site another process runs (a cluster): counted from its row, which is all this process hears of it', async () => {
    const { rows, jobs, service } = setup(updating());
    const sites = [insertConnectedSite(t), insertConnectedSite(t)];
    // The site updates' pool held here: what the run starts waits for another process, as a worker's would.
    await jobs.stop(['site-update'], { graceMs: 0 });
    const job = await service.start({ targets: sites.map((siteId) => ({ siteId, ...plugin })), trigger });
    const children = async () => (await jobs.list({ kind: 'site-update', limit: 10 })).map((row) => row.id);
    const store = createJobStore(t.state);
    for (let wait = 0; wait < 100 && rows.find(job.id)?.state !== 'running'; wait++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    // Another process's runner runs each: started, then ended (one succeeded, one failed); no `settle` here.
    const [first, second] = await children();
    for (const [id, state] of [
      [first!, 'succeeded'],
      [second!, 'failed'],
    ] as const) {
      await store.start(id, t.clock.now());
      await store.finish(id, {
        state,
        reason: state === 'failed' ? 'site-error' : null,
        message: null,
        finishedAt: t.clock.now(),
        progress: JSON.stringify({ items: [{ ...plugin, state, reason: null, message: null }] }),
      });
    }
    for (let wait = 0; wait < 250 && rows.find(job.id)?.state === 'running'; wait++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(rows.find(job.id)).toMatchObject({
      state: 'failed',
      reason: 'sites-failed',
      message: '1 of 2 sites failed',
    });
    expect(JSON.parse(rows.find(job.id)!.progress)).toMatchObject({ total: 2, done: 2, succeeded: 1, failed: 1 });
  });

  it('a queued run cancelled: its sites not started are cancelled with it', async () => {
    const { rows, jobs, service } = setup(updating());
    const sites = [insertConnectedSite(t), insertConnectedSite(t)];
    // Stopped first (as the daemon stops), so that the run stays queued: cancelled before it started.
    await service.stop(0);
    const job = await service.start({ targets: sites.map((siteId) => ({ siteId, ...plugin })), trigger });
    expect(rows.find(job.id)).toMatchObject({ state: 'queued' });
    expect(await jobs.cancel(job.id)).toMatchObject({ state: 'cancelled' });
    await service.idle();
    expect(rows.find(job.id)).toMatchObject({ state: 'cancelled', reason: 'cancelled' });
    expect(rows.list({ kind: 'site-update', limit: 10 }).map((row) => [row.state, row.reason, row.attempts])).toEqual([
      ['cancelled', 'cancelled', 0],
      ['cancelled', 'cancelled', 0],
    ]);
  });

  it('a run cancelled as its first site starts: that site finishes, the run ends cancelled', async () => {
    // Each site's update told once it has begun (before its first commit).
    let begun = 0;
    let bothBegun!: () => void;
    const begunBoth = new Promise<void>((resolve) => (bothBegun = resolve));
    const { rows, jobs, service } = setup((request) => {
      if (++begun === 2) bothBegun();
      return updating()(request);
    });
    const sites = [insertConnectedSite(t), insertConnectedSite(t)];
    const job = await service.start({ targets: sites.map((siteId) => ({ siteId, ...plugin })), trigger });
    await begunBoth;
    // The run has started its sites, whose starts are held until their first commit: their rows still read queued,
    // and they cannot be stopped halfway (before, the run ended failed, internal-error, refused that site's cancel).
    expect(rows.list({ kind: 'site-update', limit: 10 }).map((row) => row.state)).toEqual(['queued', 'queued']);
    await jobs.cancel(job.id);
    await service.idle();
    expect(rows.find(job.id)).toMatchObject({ state: 'cancelled', reason: 'cancelled' });
    // Both had started (one host each): each finished its update.
    expect(rows.list({ kind: 'site-update', limit: 10 }).map((row) => [row.state, row.reason, row.attempts])).toEqual([
      ['succeeded', null, 1],
      ['succeeded', null, 1],
    ]);
  });

  it('recovery: a run the last process left running fails, its sites not started are skipped', async () => {
    const { rows, service } = setup(updating());
    const siteIds = [insertConnectedSite(t), insertConnectedSite(t)];
    // Stopped: what it queues stays queued, as a killed process leaves it.
    await service.stop(0);
    const job = await service.start({ targets: siteIds.map((siteId) => ({ siteId, ...plugin })), trigger });
    // As a killed process left it: the run running, one site running (no attempt recorded yet), one queued.
    rows.write(job.id, { state: 'running', attempts: 1, startedAt: t.clock.now() });
    const [first] = rows.list({ kind: 'site-update', limit: 10 }).sort((a, b) => a.id.localeCompare(b.id));
    rows.write(first!.id, { state: 'running', attempts: 1, startedAt: t.clock.now() });

    await service.recover();
    await service.idle();
    expect(rows.find(job.id)).toMatchObject({ state: 'failed', reason: 'interrupted' });
    expect(JSON.parse(rows.find(job.id)!.progress)).toMatchObject({ total: 2, done: 2, skipped: 2 });
    expect(rows.list({ kind: 'site-update', limit: 10 }).map((row) => [row.state, row.reason])).toEqual([
      ['cancelled', 'interrupted'],
      ['cancelled', 'interrupted'],
    ]);
  });
});
