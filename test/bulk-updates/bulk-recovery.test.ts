import { afterEach, describe, expect, it } from 'vitest';
import { createJobsRepository } from '../../src/jobs/jobs.repository.js';
import { createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';

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
});
