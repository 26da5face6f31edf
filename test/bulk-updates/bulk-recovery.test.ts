import { afterEach, describe, expect, it } from 'vitest';
import { createUpdateHistoryRepository } from '../../src/bulk-updates/update-history.repository.js';
import { createJobsRepository } from '../../src/jobs/jobs.repository.js';
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
    t.services.bulkUpdates.recover();
    await t.services.bulkUpdates.idle();
    const run = t.services.bulkUpdates.run(bulkId);
    expect(run.job).toMatchObject({ state: 'failed', reason: 'interrupted' });
    expect(run.sites.map((site) => [site.state, site.reason])).toEqual([
      ['failed', 'interrupted'],
      ['skipped', 'interrupted'],
    ]);
    expect(t.logs.events('job.interrupted')).toHaveLength(2);
  });

  it('runs a queued bulk update again: each site is tried, and a site that does not answer fails alone', async () => {
    t = createTestApp();
    const bulkId = leftBehind('queued', ['queued', 'queued']);
    t.services.bulkUpdates.recover();
    await t.services.bulkUpdates.idle();
    const run = t.services.bulkUpdates.run(bulkId);
    expect(run.job).toMatchObject({ state: 'failed', reason: 'sites-failed' });
    expect(run.progress).toMatchObject({ total: 2, done: 2, failed: 2 });
    expect(run.sites[0]!.items[0]).toMatchObject({ state: 'failed', reason: 'site-unreachable' });
  });

  it('ends the update attempts the last process left under way as interrupted, not a queued safe update’s', async () => {
    const clock = createFakeClock();
    t = createTestApp({ clock });
    const history = createUpdateHistoryRepository({ db: t.database.db });
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
    attempt('uph_cut_short', null);
    attempt('uph_safe', 'sup_queued');
    attempt('uph_done', null);
    history.finish('uph_done', { result: 'succeeded', toVersion: '1.1.0', finishedAt: t.clock.now() });
    clock.advance(60_000);

    expect(t.services.bulkUpdates.recover()).toEqual({ attemptsEnded: 1 });
    const rows = new Map(history.list({ siteId, limit: 10 }).map((row) => [row.id, row]));
    expect(rows.get('uph_cut_short')).toMatchObject({
      result: 'failed',
      reason: 'interrupted',
      error: expect.stringContaining('the daemon stopped while this update was under way'),
      finishedAt: t.clock.now(),
    });
    expect(rows.get('uph_safe')).toMatchObject({ result: 'running', finishedAt: null });
    expect(rows.get('uph_done')).toMatchObject({ result: 'succeeded', reason: null });
    // Once ended, a second start finds nothing to end.
    expect(t.services.bulkUpdates.recover()).toEqual({ attemptsEnded: 0 });
  });
});
