import { afterEach, describe, expect, it } from 'vitest';
import { createUpdateHistoryRepository } from '../../src/update-history/update-history.repository.js';
import { createJobsRepository } from '../../src/jobs/jobs.repository.js';
import { createSafeUpdatesRepository } from '../../src/safe-updates/index.js';
import { createFakeClock, createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';

/** What a bulk update the last process left behind becomes at start. */
let t: TestApp;
afterEach(async () => {
  await t.close();
});

function leftBehind(bulkState: 'queued' | 'running', childStates: ('queued' | 'running')[]) {
  const rows = createJobsRepository({ db: t.database.db });
  const now = t.clock.now();
  const bulkId = `bulk_${bulkState}${'0'.repeat(26 - bulkState.length)}`;
  rows.insert({
    id: bulkId,
    kind: 'bulk-update',
    siteId: null,
    state: bulkState,
    params: JSON.stringify({ trigger: { kind: 'policy', id: 'pol_1' }, dryRun: false, notAfter: null, sites: 2 }),
    createdAt: now,
  });
  childStates.forEach((state, index) => {
    const siteId = insertConnectedSite(t);
    rows.insert({
      id: `${bulkId}-${String(index).padStart(5, '0')}`,
      kind: 'site-update',
      siteId,
      state,
      params: JSON.stringify({
        bulkId,
        url: 'http://127.0.0.1:9',
        host: '127.0.0.1',
        items: [{ type: 'plugin', slug: 'akismet', fromVersion: '1.0.0', toVersion: '1.1.0' }],
      }),
      createdAt: now,
    });
  });
  return bulkId;
}

describe('recovery at start', () => {
  it('fails a running bulk update as interrupted and leaves its sites not started', async () => {
    t = createTestApp();
    const bulkId = leftBehind('running', ['running', 'queued']);
    await t.services.bulkUpdates.recover();
    await t.services.bulkUpdates.idle();
    const run = await t.services.bulkUpdates.run(bulkId);
    expect(run.job).toMatchObject({ state: 'failed', reason: 'interrupted' });
    expect(run.job.message).not.toContain('before this site was updated');
    // The running site had not begun any update (no attempt recorded): it says so, as the one never started.
    expect(run.sites.map((site) => [site.state, site.reason, site.message])).toEqual([
      ['skipped', 'interrupted', 'the daemon stopped before this site was updated'],
      ['skipped', 'interrupted', 'the daemon stopped before this site was updated'],
    ]);
    expect(run.sites[0]!.items[0]).toMatchObject({ state: 'skipped', reason: 'interrupted' });
    expect(run.progress).toMatchObject({ total: 2, done: 2, skipped: 2 });
    expect(t.logs.events('job.interrupted')).toHaveLength(2);
  });

  it('runs a queued bulk update again: each site is tried, and a site that does not answer fails alone', async () => {
    t = createTestApp();
    const bulkId = leftBehind('queued', ['queued', 'queued']);
    await t.services.bulkUpdates.recover();
    await t.services.bulkUpdates.idle();
    const run = await t.services.bulkUpdates.run(bulkId);
    expect(run.job).toMatchObject({ state: 'failed', reason: 'sites-failed' });
    expect(run.progress).toMatchObject({ total: 2, done: 2, failed: 2 });
    expect(run.sites[0]!.items[0]).toMatchObject({ state: 'failed', reason: 'site-unreachable' });
  });

  it('ends the update attempts the last process left under way as interrupted, not a queued safe update’s', async () => {
    const clock = createFakeClock();
    t = createTestApp({ clock });
    const history = createUpdateHistoryRepository(t.state);
    const siteId = insertConnectedSite(t);
    const attempt = (id: string, safeUpdateId: string | null) =>
      history.insert({
        id,
        siteId,
        type: 'plugin',
        slug: 'akismet',
        fromVersion: '1.0.0',
        toVersion: '1.1.0',
        startedAt: t.clock.now(),
        triggerKind: 'request',
        triggerId: null,
        jobId: null,
        safeUpdateId,
        result: 'running',
      });
    await attempt('uph_cut_short', null);
    await attempt('uph_safe', 'sup_queued');
    await attempt('uph_done', null);
    await history.finish('uph_done', { result: 'succeeded', toVersion: '1.1.0', finishedAt: t.clock.now() });
    clock.advance(60_000);

    expect(await t.services.bulkUpdates.recover()).toEqual({ attemptsEnded: 1 });
    const rows = new Map((await history.list({ siteId, limit: 10 })).map((row) => [row.id, row]));
    expect(rows.get('uph_cut_short')).toMatchObject({
      result: 'failed',
      reason: 'interrupted',
      error: 'the daemon stopped during the update; the inventory shows what the site now runs',
      finishedAt: t.clock.now(),
    });
    expect(rows.get('uph_safe')).toMatchObject({ result: 'running', finishedAt: null });
    expect(rows.get('uph_done')).toMatchObject({ result: 'succeeded', reason: null });
    // Once ended, a second start finds nothing to end.
    expect(await t.services.bulkUpdates.recover()).toEqual({ attemptsEnded: 0 });
  });
});

/** A bulk update the daemon was killed in the middle of: one site under way, its attempts as the history holds them. */
async function stoppedDuring({ safe }: { safe: boolean }) {
  const rows = createJobsRepository({ db: t.database.db });
  const history = createUpdateHistoryRepository(t.state);
  const startedAt = t.clock.now();
  const bulkId = 'bulk_01stopped0000000000000000';
  const siteId = insertConnectedSite(t);
  const item = (slug: string) => ({ type: 'plugin' as const, slug, fromVersion: '1.0.0', toVersion: '1.1.0' });
  rows.insert({
    id: bulkId,
    kind: 'bulk-update',
    siteId: null,
    state: 'running',
    params: JSON.stringify({ trigger: { kind: 'user', id: 'usr_1' }, dryRun: false, safe, notAfter: null, sites: 1 }),
    createdAt: startedAt,
    startedAt,
  });
  // Three plugins in their order: the first done, the second under way, the third not begun.
  rows.insert({
    id: `${bulkId}-00000`,
    kind: safe ? 'safe-site-update' : 'site-update',
    siteId,
    state: 'running',
    params: JSON.stringify({ bulkId, url: 'http://127.0.0.1:9', host: '127.0.0.1', items: ['a', 'b', 'c'].map(item) }),
    progress: JSON.stringify({
      items: [
        { ...item('a'), state: 'succeeded', reason: null, message: null },
        { ...item('b'), state: 'pending', reason: null, message: null },
        { ...item('c'), state: 'pending', reason: null, message: null },
      ],
    }),
    createdAt: startedAt,
    startedAt,
  });
  const attempt = (id: string, slug: string) =>
    history.insert({
      id,
      siteId,
      ...item(slug),
      startedAt: t.clock.now(),
      triggerKind: 'user',
      triggerId: 'usr_1',
      jobId: bulkId,
      safeUpdateId: null,
      result: 'running',
    });
  await attempt('upd_a', 'a');
  await history.finish('upd_a', { result: 'succeeded', toVersion: '1.1.0', finishedAt: t.clock.now() });
  const underWay = await attempt('upd_b', 'b');
  return { bulkId, siteId, history, underWay };
}

/** The safe update a bulk item ran as, as safe-updates writes it (created in the same turn as the item's history row). */
function safeUpdateOf(siteId: string, slug: string, createdAt: Date, status: 'running' | 'kept' = 'running') {
  return createSafeUpdatesRepository(t.state).insert({
    id: `sup_${slug}0000000000000000000000000`,
    siteId,
    itemType: 'plugin',
    slug,
    status,
    phase: status === 'running' ? 'after-check' : 'done',
    policy: '{}',
    fromVersion: '1.0.0',
    toVersion: '1.1.0',
    createdAt,
    startedAt: createdAt,
    finishedAt: status === 'running' ? null : createdAt,
  });
}

describe('recovery at start, of a site the daemon stopped in the middle of', () => {
  const run = (bulkId: string) => t.services.bulkUpdates.run(bulkId);

  it('a safe update under way: the item follows it, linked to its report, and ends as it ends (rolled back)', async () => {
    t = createTestApp();
    const { bulkId, siteId, history, underWay } = await stoppedDuring({ safe: true });
    const safeUpdate = await safeUpdateOf(siteId, 'b', underWay.startedAt);
    await t.services.bulkUpdates.recover();
    await t.services.bulkUpdates.idle();

    const stopped = await run(bulkId);
    const site = stopped.sites[0]!;
    expect(site).toMatchObject({
      state: 'failed',
      reason: 'interrupted',
      message: 'the daemon stopped during this site’s update; see the safe-update report',
    });
    expect(site.items.map((item) => [item.slug, item.state, item.reason, item.safeUpdateId ?? null])).toEqual([
      ['a', 'succeeded', null, null],
      ['b', 'pending', 'interrupted', safeUpdate.id],
      ['c', 'skipped', 'interrupted', null],
    ]);
    expect(site.items[2]!.message).toBe('the daemon stopped before this item was updated');
    // The history row names the safe update and stays running: the safe update's end ends it.
    const rows = new Map((await history.list({ siteId, limit: 10 })).map((row) => [row.id, row]));
    expect(rows.get('upd_b')).toMatchObject({ result: 'running', safeUpdateId: safeUpdate.id });

    // The safe update resumed after the restart and rolled the update back.
    await t.services.bulkUpdates.followSafeUpdate({
      id: safeUpdate.id,
      status: 'rolled-back',
      reason: 'fatal-error',
      message: 'the home page answered 500',
      fromVersion: '1.0.0',
      toVersion: '1.1.0',
    });
    const followed = await run(bulkId);
    expect(followed.sites[0]).toMatchObject({ state: 'failed', reason: 'update-rolled-back' });
    expect(followed.sites[0]!.message).toContain('plugin b rolled back');
    expect(followed.sites[0]!.message).not.toContain('before this site was updated');
    expect(followed.sites[0]!.items[1]).toMatchObject({
      state: 'failed',
      reason: 'update-rolled-back',
      safeUpdateId: safeUpdate.id,
      message: expect.stringContaining('fatal-error'),
    });
    expect(followed.progress).toMatchObject({ total: 1, done: 1, failed: 1 });
  });

  it('a safe update that had already decided: the item and its history row end as it did (kept)', async () => {
    t = createTestApp();
    const { bulkId, siteId, history, underWay } = await stoppedDuring({ safe: true });
    const safeUpdate = await safeUpdateOf(siteId, 'b', underWay.startedAt, 'kept');
    await t.services.bulkUpdates.recover();
    await t.services.bulkUpdates.idle();

    const site = (await run(bulkId)).sites[0]!;
    expect(site.items[1]).toMatchObject({ state: 'succeeded', reason: null, safeUpdateId: safeUpdate.id });
    // One item was never begun, so the site is not wholly updated; what happened is said.
    expect(site).toMatchObject({ state: 'failed', reason: 'interrupted' });
    expect(site.message).toContain('plugin b kept');
    expect(site.message).toContain('not started: plugin c');
    const rows = new Map((await history.list({ siteId, limit: 10 })).map((row) => [row.id, row]));
    expect(rows.get('upd_b')).toMatchObject({ result: 'succeeded', safeUpdateId: safeUpdate.id, reason: null });
  });

  it('a plain update under way: failed as cut short, the history says so, and the site’s inventory is read again', async () => {
    t = createTestApp();
    const { bulkId, siteId, history } = await stoppedDuring({ safe: false });
    expect(await t.services.bulkUpdates.recover()).toEqual({ attemptsEnded: 0 });
    await t.services.bulkUpdates.idle();

    const site = (await run(bulkId)).sites[0]!;
    const cut = 'the daemon stopped during the update; the inventory shows what the site now runs';
    expect(site).toMatchObject({ state: 'failed', reason: 'interrupted' });
    expect(site.message).toContain(cut);
    expect(site.items.map((item) => [item.slug, item.state, item.message])).toEqual([
      ['a', 'succeeded', null],
      ['b', 'failed', cut],
      ['c', 'skipped', 'the daemon stopped before this item was updated'],
    ]);
    const rows = new Map((await history.list({ siteId, limit: 10 })).map((row) => [row.id, row]));
    expect(rows.get('upd_b')).toMatchObject({ result: 'failed', reason: 'interrupted', error: cut });
    // The site (not answering here) was asked for its inventory again.
    for (let waited = 0; t.logs.events('site.sync_failed').length === 0 && waited < 3_000; waited += 20)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(t.logs.events('site.sync_failed')).toMatchObject([{ siteId }]);
  });
});
