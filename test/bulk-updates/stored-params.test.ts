import { afterEach, describe, expect, it } from 'vitest';
import { createJobsRepository } from '../../src/jobs/jobs.repository.js';
import { createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';

/** A bulk update whose stored rows cannot be read ends failed with a reason, never crashes nor answers a 500. */
let t: TestApp;
afterEach(async () => {
  await t.close();
});

const goodParams = { trigger: { kind: 'policy', id: 'pol_1' }, dryRun: false, notAfter: null, sites: 2 };

function queued(bulkParams: string, childParams: (bulkId: string) => string[]) {
  const rows = createJobsRepository({ db: t.database.db });
  const now = t.clock.now();
  const bulkId = 'bulk_unreadable000000000000000';
  rows.insert({ id: bulkId, kind: 'bulk-update', siteId: null, state: 'queued', params: bulkParams, createdAt: now });
  childParams(bulkId).forEach((params, index) => {
    rows.insert({
      id: `${bulkId}-${String(index).padStart(5, '0')}`,
      kind: 'site-update',
      siteId: insertConnectedSite(t),
      state: 'queued',
      params,
      createdAt: now,
    });
  });
  return bulkId;
}

const child = (bulkId: string) =>
  JSON.stringify({
    bulkId,
    url: 'http://127.0.0.1:9',
    host: '127.0.0.1',
    items: [{ type: 'plugin', slug: 'akismet', fromVersion: '1.0.0', toVersion: '1.1.0' }],
  });

describe('stored bulk update rows that cannot be read', () => {
  it('fails a bulk update whose params are corrupt as stored-data-unreadable, its sites not started', async () => {
    t = createTestApp();
    const bulkId = queued('{"trigger":', (id) => [child(id), child(id)]);
    await t.services.bulkUpdates.recover();
    await t.services.bulkUpdates.idle();
    const job = await t.call('GET', `/api/jobs/${bulkId}`, { token: t.readToken });
    expect(job.status).toBe(200);
    expect(job.json).toMatchObject({ state: 'failed', reason: 'stored-data-unreadable' });
    expect(job.json.message).toContain(`the params of bulk update ${bulkId}`);
    const children = await t.call('GET', '/api/jobs?kind=site-update', { token: t.readToken });
    expect(children.json.items.map((row: { state: string; reason: string }) => [row.state, row.reason])).toEqual([
      ['cancelled', 'stored-data-unreadable'],
      ['cancelled', 'stored-data-unreadable'],
    ]);
    // Its view cannot be built: a problem with a stable type, not a 500.
    const run = await t.call('GET', `/api/fleet/updates/runs/${bulkId}`, { token: t.readToken });
    expect(run.status).toBe(409);
    expect(run.json).toMatchObject({ type: '/problems/stored-data-unreadable' });
  });

  it('fails only the site whose params are of another shape; the others run', async () => {
    t = createTestApp();
    const bulkId = queued(JSON.stringify(goodParams), (id) => [
      JSON.stringify({ bulkId: id, url: 'http://127.0.0.1:9', items: 'all' }),
      child(id),
    ]);
    await t.services.bulkUpdates.recover();
    await t.services.bulkUpdates.idle();
    const children = await t.call('GET', '/api/jobs?kind=site-update', { token: t.readToken });
    const byId = Object.fromEntries(
      children.json.items.map((row: { id: string; state: string; reason: string }) => [
        row.id,
        [row.state, row.reason],
      ]),
    );
    expect(byId[`${bulkId}-00000`]).toEqual(['failed', 'stored-data-unreadable']);
    // The other site was tried (it does not answer: site-unreachable), not left behind.
    expect(byId[`${bulkId}-00001`]).toEqual(['failed', 'site-unreachable']);
    const job = await t.call('GET', `/api/jobs/${bulkId}`, { token: t.readToken });
    expect(job.json).toMatchObject({ state: 'failed', reason: 'sites-failed' });
  });
});
