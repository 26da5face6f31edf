import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';

/** A fleet action's job: cancelled before it runs, and recovered after the daemon stopped in the middle of one. */
describe('fleet action jobs', () => {
  let t: TestApp;
  beforeEach(() => {
    t = createTestApp();
  });
  afterEach(() => t.close());

  it('cancels an action: no further site starts, those not reached are skipped as cancelled', async () => {
    await t.close();
    // One site at a time: the first is under way when the cancel comes.
    t = createTestApp({ config: { siteConcurrency: 1 } });
    const ids = [insertConnectedSite(t), insertConnectedSite(t), insertConnectedSite(t)];
    const started = await t.services.fleetActions.start(
      { action: 'install', type: 'plugin', slug: 'akismet', sites: ids, tag: [] },
      { kind: 'token', id: 'tok_1' },
    );
    // In the same turn as the start: whether the job has started or not, no further site does.
    expect(['queued', 'running', 'cancelled']).toContain((await t.services.jobs.cancel(started.id)).state);
    await t.services.fleetActions.idle();
    const view = (await t.call('GET', `/api/fleet/actions/${started.id}`)).json;
    expect(view).toMatchObject({ state: 'cancelled', requestedBy: { kind: 'token', id: 'tok_1' } });
    expect(view.sites.slice(1).map((site: { state: string; reason: string }) => [site.state, site.reason])).toEqual([
      ['skipped', 'cancelled'],
      ['skipped', 'cancelled'],
    ]);
    expect((await t.call('POST', `/api/jobs/${started.id}/cancel`)).json.type).toBe('/problems/job-finished');
  });

  it('fails an action the last process left running as interrupted, and runs a queued one', async () => {
    const id = insertConnectedSite(t);
    const sites = (state: string) => [
      {
        siteId: id,
        url: 'http://a',
        state,
        reason: null,
        message: null,
        version: null,
        status: null,
        finishedAt: null,
      },
    ];
    const params = JSON.stringify({
      action: 'activate',
      type: 'plugin',
      slug: 'seo',
      activate: false,
      deactivate: false,
      requestedBy: null,
    });
    const jobRow = (jobId: string, state: 'running' | 'queued', siteState: string) =>
      t.database.sqlite
        .prepare(
          `insert into jobs (id, kind, site_id, state, params, progress, attempts, created_at) values (?, 'fleet-action', null, ?, ?, ?, 1, ?)`,
        )
        .run(jobId, state, params, JSON.stringify({ sites: sites(siteState) }), Date.now());
    jobRow('fact_running', 'running', 'running');
    jobRow('fact_queued', 'queued', 'queued');
    expect(await t.services.fleetActions.recover()).toEqual({ requeued: 1, interrupted: 1 });
    await t.services.fleetActions.idle();
    const interrupted = await t.services.fleetActions.get('fact_running');
    expect(interrupted).toMatchObject({ state: 'failed', reason: 'interrupted' });
    expect(interrupted.sites[0]).toMatchObject({ state: 'failed', reason: 'interrupted' });
    // The queued one ran: its site (nothing listens at its port) failed on its own.
    const ran = await t.services.fleetActions.get('fact_queued');
    expect(ran.state).toBe('failed');
    expect(ran.sites[0]).toMatchObject({ state: 'failed', reason: 'site-unreachable' });
    expect(t.logs.events('job.interrupted')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'fleet-action', jobId: 'fact_running', action: 'failed' }),
        expect.objectContaining({ kind: 'fleet-action', jobId: 'fact_queued', action: 'requeued' }),
      ]),
    );
  });
});
