import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createJobsRepository } from '../../src/jobs/jobs.repository.js';
import { createFakeClock, insertConnectedSite, type TestApp } from '../support/test-app.js';
import { apply, closeFleets, finished, fleet, gated, holdUntil } from './bulk-fleet.js';
import { EXPECTED_VERSION_CONNECTOR } from './updatable-fake.js';

/** Bulk updates against fake WordPress sites whose plugin and theme versions really change. */
afterEach(closeFleets);
afterAll(closeFleets);

describe('a bulk update', () => {
  it('updates every pending plugin and theme on every site, one failing site not stopping the others', async () => {
    const { t, sites } = await fleet(3, { failing: [1] });
    const queued = await apply(t, { all: true });
    expect(queued.status, queued.text).toBe(202);
    expect(queued.json.job).toMatchObject({ kind: 'bulk-update', siteId: null });
    expect(queued.json.progress).toMatchObject({ total: 3 });

    const run = await finished(t, queued.json.job.id);
    expect(run.job).toMatchObject({ state: 'failed', reason: 'sites-failed', message: '1 of 3 sites failed' });
    expect(run.progress).toEqual({ total: 3, done: 3, succeeded: 2, failed: 1, skipped: 0, cancelled: 0 });
    const bySite = new Map(run.sites.map((site: { siteId: string }) => [site.siteId, site]));
    for (const index of [0, 2]) {
      expect(bySite.get(sites[index]!.id)).toMatchObject({
        state: 'succeeded',
        items: [
          { type: 'plugin', slug: 'akismet', fromVersion: '1.0.0', toVersion: '1.1.0', state: 'succeeded' },
          { type: 'theme', slug: 'twentytwentythree', fromVersion: '1.0.0', toVersion: '1.1.0', state: 'succeeded' },
        ],
      });
      expect(sites[index]!.state).toMatchObject({ plugin: '1.1.0', theme: '1.1.0' });
    }
    // The failing site's plugin failed with its reason; its theme was still updated.
    expect(bySite.get(sites[1]!.id)).toMatchObject({
      state: 'failed',
      reason: 'site-refused',
      items: [
        { type: 'plugin', slug: 'akismet', state: 'failed', reason: 'site-refused' },
        { type: 'theme', slug: 'twentytwentythree', state: 'succeeded' },
      ],
    });
    expect(sites[1]!.state).toMatchObject({ plugin: '1.0.0', theme: '1.1.0' });

    // The job rows: the bulk job and one site-update child per site.
    const children = await t.call('GET', '/api/jobs?kind=site-update', { token: t.readToken });
    expect(children.json.items).toHaveLength(3);

    // The inventory follows: the fleet view no longer offers what was updated.
    const pending = await t.call('GET', '/api/fleet/updates', { token: t.readToken });
    expect(pending.json.items).toEqual([expect.objectContaining({ type: 'plugin', slug: 'akismet', sites: 1 })]);

    // History: one row per attempt, with the bulk job and its trigger.
    const history = await t.call('GET', `/api/fleet/updates/history?limit=10`, { token: t.readToken });
    expect(history.status, history.text).toBe(200);
    expect(history.json.items).toHaveLength(6);
    expect(history.json.items).toContainEqual(
      expect.objectContaining({
        siteId: sites[1]!.id,
        type: 'plugin',
        slug: 'akismet',
        fromVersion: '1.0.0',
        result: 'failed',
        reason: 'site-refused',
        jobId: queued.json.job.id,
        trigger: { kind: 'request', id: expect.any(String) },
      }),
    );
    const failed = await t.call('GET', `/api/fleet/updates/history?result=failed`, { token: t.readToken });
    expect(failed.json.items).toHaveLength(1);
    const ofSite = await t.call('GET', `/api/sites/${sites[0]!.id}/updates/history?type=theme`, { token: t.readToken });
    expect(ofSite.json.items).toEqual([
      expect.objectContaining({
        slug: 'twentytwentythree',
        fromVersion: '1.0.0',
        toVersion: '1.1.0',
        result: 'succeeded',
      }),
    ]);

    expect(t.logs.events('update.applied')).toHaveLength(5);
    expect(t.logs.events('update.failed')[0]).toMatchObject({
      bulkId: queued.json.job.id,
      siteId: sites[1]!.id,
      type: 'plugin',
      slug: 'akismet',
      reason: 'site-refused',
    });
    expect(t.logs.events('bulk-update.started')[0]).toMatchObject({ sites: 3, items: 6 });
    expect(t.logs.events('bulk-update.finished')[0]).toMatchObject({
      state: 'failed',
      total: 3,
      succeeded: 2,
      failed: 1,
      skipped: 0,
      cancelled: 0,
    });
  });

  it('answers a dry run with the per-site plan and changes nothing', async () => {
    const { t, sites } = await fleet(2);
    const plan = await apply(t, { sites: [sites[0]!.id], dryRun: true, items: [{ type: 'plugin' }, { type: 'core' }] });
    expect(plan.status, plan.text).toBe(200);
    expect(plan.json).toMatchObject({
      dryRun: true,
      job: { kind: 'bulk-update', state: 'succeeded' },
      sites: [
        {
          siteId: sites[0]!.id,
          jobId: null,
          items: [
            { type: 'plugin', slug: 'akismet', fromVersion: '1.0.0', toVersion: '1.1.0', state: 'pending' },
            { type: 'core', slug: null, fromVersion: '6.6', toVersion: null, state: 'pending' },
          ],
        },
      ],
    });
    await t.services.bulkUpdates.idle();
    expect(sites[0]!.state.plugin).toBe('1.0.0');
    expect((await t.call('GET', `/api/fleet/updates/runs/${plan.json.job.id}`)).json.sites).toHaveLength(1);
  });

  it('resolves tags, items and exclusions against the inventory', async () => {
    const { t, sites } = await fleet(3, {
      tags: (index) => (index < 2 ? ['client:acme', ...(index === 1 ? ['ecommerce'] : [])] : ['client:other']),
    });
    const plan = async (json: object) => {
      const answer = await apply(t, { ...json, dryRun: true });
      expect(answer.status, answer.text).toBe(200);
      return answer.json.sites.map((site: { siteId: string; items: { type: string; slug: string }[] }) => [
        sites.findIndex((candidate) => candidate.id === site.siteId),
        site.items.map((item) => `${item.type}:${item.slug}`),
      ]);
    };
    expect(await plan({ tag: 'client:acme' })).toEqual([
      [0, ['plugin:akismet', 'theme:twentytwentythree']],
      [1, ['plugin:akismet', 'theme:twentytwentythree']],
    ]);
    // Several tags: the sites carrying every one of them; sites by id, each once however often it is named.
    expect(await plan({ tag: ['client:acme', 'ecommerce'] })).toEqual([
      [1, ['plugin:akismet', 'theme:twentytwentythree']],
    ]);
    expect(await plan({ sites: [sites[2]!.id, sites[0]!.id, sites[2]!.id] })).toEqual([
      [0, ['plugin:akismet', 'theme:twentytwentythree']],
      [2, ['plugin:akismet', 'theme:twentytwentythree']],
    ]);
    expect(await plan({ all: true, items: [{ type: 'theme', slug: 'twentytwentythree' }] })).toHaveLength(3);
    expect(
      await plan({
        all: true,
        items: [{ type: 'plugin' }, { type: 'theme' }, { type: 'translations' }],
        exclude: { sites: [sites[2]!.id], items: [{ type: 'plugin', slug: 'akismet' }] },
      }),
    ).toEqual([
      [0, ['theme:twentytwentythree', 'translations:null']],
      [1, ['theme:twentytwentythree', 'translations:null']],
    ]);
  });

  it('answers problems for bad selections', async () => {
    const { t, sites } = await fleet(1);
    const problem = async (json: unknown, status: number, type: string) => {
      const answer = await apply(t, json);
      expect(answer.status, answer.text).toBe(status);
      expect(answer.headers.get('content-type')).toContain('application/problem+json');
      expect(answer.json.type).toBe(`/problems/${type}`);
    };
    await problem({ all: true, tag: 'x' }, 400, 'bulk-selection-invalid');
    await problem({}, 400, 'bulk-selection-invalid');
    await problem({ all: true, items: [{ type: 'core', slug: 'x' }] }, 400, 'bulk-selection-invalid');
    await problem({ all: true, items: [{ type: 'widget' }] }, 400, 'validation-failed');
    await problem({ all: true, notAfter: 'tomorrow' }, 400, 'validation-failed');
    await problem({ sites: ['site_nope'] }, 404, 'site-not-found');
    await problem({ all: true, items: [{ type: 'plugin', slug: 'hello-dolly' }] }, 422, 'bulk-selection-empty');
    await problem({ all: true, exclude: { sites: [sites[0]!.id] } }, 422, 'bulk-selection-empty');
    const missing = await t.call('GET', '/api/fleet/updates/runs/bulk_nope', { token: t.readToken });
    expect(missing.status).toBe(404);
    const noSite = await t.call('GET', '/api/sites/site_nope/updates/history', { token: t.readToken });
    expect(noSite.status).toBe(404);
    // Read tokens may look, not apply.
    const read = await t.call('POST', '/api/fleet/updates/apply', { json: { all: true }, token: t.readToken });
    expect(read.status).toBe(403);
  });
});

describe('bounded concurrency', () => {
  it('runs at most SITEWARDEN_BULK_UPDATE_CONCURRENCY sites at once', async () => {
    const { t, watch } = await fleet(5, { config: { bulkUpdates: { concurrency: 3, perHost: 10 } } });
    holdUntil(watch, 3);
    const queued = await apply(t, { all: true, items: [{ type: 'plugin' }] });
    const run = await finished(t, queued.json.job.id);
    expect(run.progress).toMatchObject({ succeeded: 5 });
    expect(watch.maxInFlight).toBe(3);
  });

  it('runs at most SITEWARDEN_BULK_UPDATE_PER_HOST sites of one host at once (every fake is on 127.0.0.1)', async () => {
    const { t, watch } = await fleet(5, { config: { bulkUpdates: { concurrency: 10, perHost: 2 } } });
    holdUntil(watch, 2);
    const queued = await apply(t, { all: true, items: [{ type: 'plugin' }] });
    const run = await finished(t, queued.json.job.id);
    expect(run.progress).toMatchObject({ succeeded: 5 });
    expect(watch.maxInFlight).toBe(2);
  });
});

describe('stopping a bulk update', () => {
  it('cancel: queued sites are cancelled, the running one finishes', async () => {
    const { t, watch, sites } = await fleet(3, { config: { bulkUpdates: { concurrency: 1, perHost: 1 } } });
    const { open, first } = gated(watch);
    const queued = await apply(t, { all: true, items: [{ type: 'plugin' }] });
    await first;
    const cancel = await t.call('POST', `/api/jobs/${queued.json.job.id}/cancel`);
    expect(cancel.status, cancel.text).toBe(202);
    open();
    const run = await finished(t, queued.json.job.id);
    expect(run.job).toMatchObject({ state: 'cancelled', reason: 'cancelled' });
    expect(run.progress).toEqual({ total: 3, done: 3, succeeded: 1, failed: 0, skipped: 0, cancelled: 2 });
    expect(sites.map((site) => site.state.plugin).sort()).toEqual(['1.0.0', '1.0.0', '1.1.0']);
    expect(t.logs.events('job.cancelled')[0]).toMatchObject({ kind: 'bulk-update' });
  });

  it('stores a site update as running before the site hears of it, and its end with the inventory patch', async () => {
    const { t, watch, sites } = await fleet(1);
    const { open, first } = gated(watch);
    const queued = await apply(t, { all: true, items: [{ type: 'plugin' }] });
    await first;
    // The request is at the site: what a crash now would leave says the update was under way.
    const during = await t.call('GET', `/api/fleet/updates/runs/${queued.json.job.id}`, { token: t.readToken });
    expect(during.json.sites[0]).toMatchObject({ siteId: sites[0]!.id, state: 'running' });
    const history = () => t.call('GET', `/api/sites/${sites[0]!.id}/updates/history`, { token: t.readToken });
    expect((await history()).json.items).toEqual([
      expect.objectContaining({ slug: 'akismet', result: 'running', jobId: queued.json.job.id }),
    ]);
    const site = () => t.call('GET', `/api/sites/${sites[0]!.id}`, { token: t.readToken });
    expect((await site()).json.plugins).toContainEqual(expect.objectContaining({ slug: 'akismet', version: '1.0.0' }));
    open();
    const run = await finished(t, queued.json.job.id);
    expect(run.sites[0]).toMatchObject({ state: 'succeeded' });
    expect((await history()).json.items).toEqual([
      expect.objectContaining({ slug: 'akismet', result: 'succeeded', fromVersion: '1.0.0', toVersion: '1.1.0' }),
    ]);
    expect((await site()).json.plugins).toContainEqual(
      expect.objectContaining({ slug: 'akismet', version: '1.1.0', update: null }),
    );
  });

  it('keeps the counts a running bulk update stores (the dashboard’s list) current while a site takes long', async () => {
    const { t, watch } = await fleet(3, { config: { bulkUpdates: { concurrency: 1, perHost: 1 } } });
    // The first two sites' updates answer at once (the second's count comes too soon to be written then); the third's waits.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let updates = 0;
    watch.hold = () => (++updates < 3 ? Promise.resolve() : gate);
    const queued = await apply(t, { all: true, items: [{ type: 'plugin' }] });
    const listed = async () => (await t.services.bulkUpdates.runs(5)).find((run) => run.id === queued.json.job.id)!;
    // Written at most once a second: within two, while the third site is still held.
    let counted = await listed();
    for (let waited = 0; counted.done < 2 && waited < 2_000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      counted = await listed();
    }
    expect(updates).toBe(3);
    expect(counted).toMatchObject({ state: 'running', sites: 3, done: 2, succeeded: 2 });
    open();
    await finished(t, queued.json.job.id);
    expect(await listed()).toMatchObject({ state: 'succeeded', done: 3, succeeded: 3 });
  });

  it('notAfter: sites not started by then are skipped (window-closed)', async () => {
    const clock = createFakeClock(new Date());
    const { t, watch } = await fleet(3, { config: { bulkUpdates: { concurrency: 1, perHost: 1 } }, clock });
    const { open, first } = gated(watch);
    const notAfter = new Date(clock.now().getTime() + 60_000).toISOString();
    const queued = await apply(t, { all: true, items: [{ type: 'plugin' }], notAfter });
    await first;
    clock.advance(120_000);
    open();
    const run = await finished(t, queued.json.job.id);
    expect(run.notAfter).toBe(notAfter);
    expect(run.progress).toEqual({ total: 3, done: 3, succeeded: 1, failed: 0, skipped: 2, cancelled: 0 });
    expect(run.sites.filter((site: { reason: string }) => site.reason === 'window-closed')).toHaveLength(2);
    expect(run.job.state).toBe('succeeded');
  });
});

describe('a safe bulk update', () => {
  it('applies each item as a safe update, and does not update a site whose rollback path does not answer', async () => {
    const { t, sites } = await fleet(1);
    const queued = await apply(t, { sites: [sites[0]!.id], items: [{ type: 'plugin', slug: 'akismet' }], safe: true });
    expect(queued.status, queued.text).toBe(202);
    expect(queued.json.safe).toBe(true);

    const run = await finished(t, queued.json.job.id);
    // The fake site has no standalone rollback path: a safe update refuses to start, so nothing changed.
    expect(run.sites[0]).toMatchObject({
      state: 'failed',
      items: [{ type: 'plugin', slug: 'akismet', state: 'failed', reason: 'update-not-safe' }],
    });
    expect(run.sites[0].items[0].message).toContain('rollback-path-unavailable');
    expect(sites[0]!.state.plugin).toBe('1.0.0');

    const reports = await t.call('GET', `/api/sites/${sites[0]!.id}/safe-updates`, { token: t.readToken });
    expect(reports.status, reports.text).toBe(200);
    expect(reports.json.items ?? reports.json).toEqual([
      expect.objectContaining({
        type: 'plugin',
        slug: 'akismet',
        status: 'failed',
        reason: 'rollback-path-unavailable',
      }),
    ]);
    const history = await t.call('GET', `/api/sites/${sites[0]!.id}/updates/history`, { token: t.readToken });
    expect(history.json.items).toEqual([
      expect.objectContaining({ slug: 'akismet', result: 'failed', reason: 'update-not-safe' }),
    ]);
    expect(t.logs.events('update.failed')).toEqual([expect.objectContaining({ reason: 'update-not-safe' })]);
  });
});

describe('startBulkUpdate (the entry policies use)', () => {
  it.each([
    ['one request per item, the site checking the offer (connector 1.5.0)', EXPECTED_VERSION_CONNECTOR],
    ['the offers read first (connector 1.4.0)', '1.4.0'],
  ])('skips an item whose offered version is not the one expected: %s', async (_, connector) => {
    const { t, sites } = await fleet(1, { connectors: [connector] });
    const job = await t.services.bulkUpdates.start({
      targets: [
        { siteId: sites[0]!.id, type: 'plugin', slug: 'akismet', version: '9.9.9' },
        { siteId: sites[0]!.id, type: 'theme', slug: 'twentytwentythree', version: '1.1.0' },
      ],
      trigger: { kind: 'policy', id: 'pol_nightly' },
    });
    const run = await finished(t, job.id);
    expect(run.trigger).toEqual({ kind: 'policy', id: 'pol_nightly' });
    expect(run.sites[0].items).toMatchObject([
      {
        type: 'plugin',
        state: 'skipped',
        reason: 'version-changed',
        message: 'the site now offers akismet 1.1.0, not 9.9.9',
        fromVersion: '1.0.0',
        toVersion: '9.9.9',
      },
      { type: 'theme', state: 'succeeded', fromVersion: '1.0.0', toVersion: '1.1.0' },
    ]);
    expect(sites[0]!.state).toMatchObject({ plugin: '1.0.0', theme: '1.1.0' });
    const history = await t.call('GET', `/api/sites/${sites[0]!.id}/updates/history`, { token: t.readToken });
    // Both attempts started within a millisecond or so: ids of one millisecond do not order among themselves.
    expect(
      history.json.items
        .map((row: Record<string, unknown>) => [row.result, row.trigger, row.fromVersion, row.toVersion, row.error])
        .sort(),
    ).toEqual([
      [
        'skipped',
        { kind: 'policy', id: 'pol_nightly' },
        '1.0.0',
        '9.9.9',
        'the site now offers akismet 1.1.0, not 9.9.9',
      ],
      ['succeeded', { kind: 'policy', id: 'pol_nightly' }, '1.0.0', '1.1.0', null],
    ]);
    // The inventory follows either way: the theme's offer is gone, the plugin's stays.
    const pending = await t.call('GET', '/api/fleet/updates', { token: t.readToken });
    expect(pending.json.items).toEqual([expect.objectContaining({ type: 'plugin', slug: 'akismet', sites: 1 })]);
  });

  it('skips an item no longer offered, as the offers read would', async () => {
    const { t, sites } = await fleet(2, { connectors: [EXPECTED_VERSION_CONNECTOR, '1.4.0'] });
    // Updated behind Sitewarden's back since the last sync: the site offers nothing for it any more.
    for (const site of sites) site.state.plugin = '1.1.0';
    const job = await t.services.bulkUpdates.start({
      targets: sites.map((site) => ({ siteId: site.id, type: 'plugin' as const, slug: 'akismet', version: '1.1.0' })),
      trigger: { kind: 'request', id: null },
    });
    const run = await finished(t, job.id);
    const expected = {
      type: 'plugin',
      state: 'skipped',
      reason: 'no-update-available',
      message: 'the site offers no update of plugin akismet any more',
      fromVersion: '1.0.0',
    };
    expect(run.sites.map((site: { items: unknown[] }) => site.items)).toEqual([
      [expect.objectContaining(expected)],
      [expect.objectContaining(expected)],
    ]);
    // The stored offer follows what each site answered.
    const pending = await t.call('GET', '/api/fleet/updates', { token: t.readToken });
    expect(pending.json.items).toEqual([expect.objectContaining({ type: 'theme', sites: 2 })]);
  });

  it('makes one request per item update when the connector takes the version expected, two with an older one', async () => {
    const { t, sites } = await fleet(2, { connectors: [EXPECTED_VERSION_CONNECTOR, '1.4.0'] });
    const before = sites.map((site) => site.requests.length);
    const run = await finished(t, (await apply(t, { all: true })).json.job.id);
    expect(run.progress).toMatchObject({ total: 2, succeeded: 2 });
    for (const site of sites) expect(site.state).toMatchObject({ plugin: '1.1.0', theme: '1.1.0' });
    const made = sites.map((site, index) => site.requests.slice(before[index]));
    // Before each plain update, its restore point: this fake site has no rollback routes, so one
    // request (the secret's provisioning, refused) finds that out and the update goes on without.
    const saved = (update: string) => ['sitewarden/v1/rollback/secret', update];
    expect(made[0]).toEqual([...saved('sitewarden/v1/plugins/update'), ...saved('sitewarden/v1/themes/update')]);
    // An older connector's offer is read before each update (the connector client's updateExpecting).
    expect(made[1]).toEqual([
      'sitewarden/v1/rollback/secret',
      'sitewarden/v1/updates',
      'sitewarden/v1/plugins/update',
      'sitewarden/v1/rollback/secret',
      'sitewarden/v1/updates',
      'sitewarden/v1/themes/update',
    ]);
    // Either way the inventory is patched from the answers, with nothing left to offer.
    const pending = await t.call('GET', '/api/fleet/updates', { token: t.readToken });
    expect(pending.json.items).toEqual([]);
  });

  it('still updates when the stored connector version is newer than the site’s (downgraded since the last sync)', async () => {
    const { t, sites } = await fleet(1, { connectors: ['1.4.0'] });
    // The last sync saw 1.5.0; the site now runs 1.4.0, whose update route ignores the version expected.
    await t.services.sitesRepository.update(sites[0]!.id, { connectorVersion: EXPECTED_VERSION_CONNECTOR });
    const before = sites[0]!.requests.length;
    const run = await finished(t, (await apply(t, { all: true })).json.job.id);
    expect(run.sites[0].items).toMatchObject([
      { type: 'plugin', state: 'succeeded', fromVersion: '1.0.0', toVersion: '1.1.0' },
      { type: 'theme', state: 'succeeded', fromVersion: '1.0.0', toVersion: '1.1.0' },
    ]);
    // Each update after its restore point's request (refused by this fake site: no rollback routes).
    expect(sites[0]!.requests.slice(before)).toEqual([
      'sitewarden/v1/rollback/secret',
      'sitewarden/v1/plugins/update',
      'sitewarden/v1/rollback/secret',
      'sitewarden/v1/themes/update',
    ]);
    const pending = await t.call('GET', '/api/fleet/updates', { token: t.readToken });
    expect(pending.json.items).toEqual([]);
  });

  it('skips a site that is no longer connected', async () => {
    const { t } = await fleet(0);
    const siteId = insertConnectedSite(t, { state: 'authorization_expired' });
    const job = await t.services.bulkUpdates.start({
      targets: [{ siteId, type: 'core' }],
      trigger: { kind: 'policy', id: 'p' },
    });
    const run = await finished(t, job.id);
    expect(run.sites[0]).toMatchObject({ state: 'skipped', reason: 'site-not-connected' });
  });

  it('answers a bulk update with the run exactly as the database holds it when queued', async () => {
    const { t, sites } = await fleet(1);
    const gone = insertConnectedSite(t, { state: 'authorization_expired' });
    const request = {
      targets: [
        { siteId: sites[0]!.id, type: 'plugin' as const, slug: 'akismet' },
        { siteId: gone, type: 'core' as const },
      ],
      trigger: { kind: 'request' as const, id: 'token' },
    };
    // The bulk updates stopped first (as the daemon stops), so that the run stays queued as written: read back, it
    // is the answer.
    await t.services.bulkUpdates.stop(0);
    const answered = await t.services.bulkUpdates.apply(request);
    const [queued] = createJobsRepository({ db: t.database.db }).list({
      kind: 'bulk-update',
      state: 'queued',
      limit: 1,
    });
    expect(queued!.id).toBe(answered.job.id);
    expect(answered).toEqual(await t.services.bulkUpdates.run(queued!.id));
    expect(answered.sites.map((site) => site.state)).toEqual(['queued', 'skipped']);
    const preview = await t.services.bulkUpdates.apply({ ...request, dryRun: true });
    expect(preview).toEqual(await t.services.bulkUpdates.run(preview.job.id));
    await t.services.bulkUpdates.idle();
  });
});

const writeTokenId = async (t: TestApp) =>
  (await t.services.tokens.list()).find((token) => token.name === 'test-write')!.id;

describe('update history of single-site updates', () => {
  it('records a plugin update made through the site’s own route', async () => {
    const { t, sites } = await fleet(1);
    const updated = await t.call('POST', `/api/sites/${sites[0]!.id}/plugins/akismet/update`);
    expect(updated.status, updated.text).toBe(200);
    const history = await t.call('GET', `/api/sites/${sites[0]!.id}/updates/history`, { token: t.readToken });
    expect(history.json.items).toEqual([
      expect.objectContaining({
        type: 'plugin',
        slug: 'akismet',
        fromVersion: '1.0.0',
        toVersion: '1.1.0',
        result: 'succeeded',
        trigger: { kind: 'request', id: await writeTokenId(t) },
        jobId: null,
      }),
    ]);
    // Paginated newest first, filterable by tag and since.
    await t.call('POST', `/api/sites/${sites[0]!.id}/themes/twentytwentythree/update`);
    const first = await t.call('GET', '/api/fleet/updates/history?limit=1', { token: t.readToken });
    expect(first.json.items[0]).toMatchObject({ type: 'theme' });
    const next = await t.call('GET', `/api/fleet/updates/history?limit=1&cursor=${first.json.nextCursor}`, {
      token: t.readToken,
    });
    expect(next.json).toMatchObject({ items: [{ type: 'plugin' }], nextCursor: null });
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const none = await t.call('GET', `/api/fleet/updates/history?since=${encodeURIComponent(future)}`, {
      token: t.readToken,
    });
    expect(none.json.items).toEqual([]);
    const tagged = await t.call('GET', '/api/fleet/updates/history?tag=nobody', { token: t.readToken });
    expect(tagged.json.items).toEqual([]);
  });

  it('records who asked: the API token of each request, the signed-in user of a dashboard action', async () => {
    const { t, sites } = await fleet(1);
    const siteId = sites[0]!.id;
    const other = await t.services.tokens.create('deploy-bot', 'write');
    expect(
      (await t.call('POST', `/api/sites/${siteId}/themes/twentytwentythree/update`, { token: other.token })).status,
    ).toBe(200);

    const user = await t.services.users.create('alice', 'correct horse battery staple');
    const signedIn = await t.app.request('/sign-in', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username: 'alice', password: 'correct horse battery staple' }).toString(),
    });
    const cookie = /sw_session=[^;]+/.exec(signedIn.headers.get('set-cookie')!)![0];
    const csrf = /data-csrf="([^"]+)"/.exec(await (await t.app.request('/', { headers: { cookie } })).text())![1]!;
    const action = await t.app.request(`/sites/${siteId}/plugins/akismet/update`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf }).toString(),
    });
    expect(action.status).toBe(303);
    expect(sites[0]!.state.plugin).toBe('1.1.0');

    const history = await t.call('GET', `/api/sites/${siteId}/updates/history`, { token: t.readToken });
    expect(
      history.json.items
        .map((row: { type: string; result: string; trigger: object }) => [row.type, row.result, row.trigger])
        .sort(),
    ).toEqual([
      ['plugin', 'succeeded', { kind: 'user', id: user.id }],
      ['theme', 'succeeded', { kind: 'request', id: other.summary.id }],
    ]);
    const byUser = await t.call('GET', `/api/fleet/updates/history?type=plugin`, { token: t.readToken });
    expect(byUser.json.items[0].trigger).toEqual({ kind: 'user', id: user.id });
  });
});
