import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJobsRepository } from '../../src/jobs/jobs.repository.js';
import { createUpdateHistoryRepository } from '../../src/update-history/update-history.repository.js';
import { createId } from '../../src/shared/ids.js';
import { scopedPrincipal } from '../support/scoped-principal.js';
import { createFakeClock, createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';

const UNKNOWN = 'zzz_01kzzzzzzzzzzzzzzzzzzzzzzz';

interface Site {
  id: string;
  url: string;
  name: string;
}

/**
 * Site scopes across sites (issue 33, docs/design/team-access.md): the fleet views, the update history,
 * jobs, fleet actions and bulk runs, by API and dashboard, for a client of tag A (by token and signed in).
 * Site A and site B each have an inventory (a plugin and a theme only B runs), jobs, history entries, fleet
 * actions and bulk runs (previews); every list, count and detail shows A's and never B's, and B's ids (or
 * an object spanning A and B) answer exactly as unknown ids do, bodies included.
 */
describe('site scopes: the cross-site lists show a client of tag A only its sites', () => {
  let t: TestApp;
  const a: Site = { id: '', url: 'http://127.0.0.1:9/alpha', name: 'Alpha Bakery' };
  const b: Site = { id: '', url: 'http://127.0.0.1:9/bravo-secret', name: 'Bravo Confidential' };
  let clientToken: string;
  let managerToken: string;
  let cookie: string;
  const ids = {
    jobA: '',
    jobB: '',
    fleetJob: '',
    entryA: '',
    entryB: '',
    actionA: '',
    actionB: '',
    actionAB: '',
    runA: '',
    runB: '',
    runAB: '',
  };

  /** Fails when `text` names anything of B: its site, its only items, its jobs, entries, actions and runs. */
  const expectNothingOfB = (text: string, what: string, asked?: string) => {
    if (asked) text = text.replaceAll(asked, 'ID');
    for (const secret of [
      b.id,
      b.url,
      b.url.replace(/^https?:\/\//, ''),
      b.name,
      'bravo-only-plugin',
      'bravo-only-theme',
      '6.9.1',
      ids.jobB,
      ids.fleetJob,
      ids.entryB,
      ids.actionB,
      ids.actionAB,
      ids.runB,
      ids.runAB,
    ])
      expect(text.includes(secret), `${what} names ${secret}`).toBe(false);
  };

  const get = (path: string, token = clientToken) => t.call('GET', path, { token });
  const page = async (path: string) => {
    const response = await t.app.request(path, { headers: { cookie } });
    return { status: response.status, text: await response.text() };
  };

  /** The answer to `path` with `id` is exactly the answer with an unknown id (the id itself aside). */
  async function expectAnsweredAsUnknown(
    path: (id: string) => string,
    id: string,
    fetch: (path: string) => Promise<{ status: number; text: string }> = get,
  ) {
    const [of, unknown] = [await fetch(path(id)), await fetch(path(UNKNOWN))];
    expect(of.status, path(id)).toBe(404);
    expect({ status: of.status, text: of.text.replaceAll(id, 'ID') }, path(id)).toEqual({
      status: unknown.status,
      text: unknown.text.replaceAll(UNKNOWN, 'ID'),
    });
  }

  beforeAll(async () => {
    t = createTestApp({ clock: createFakeClock(new Date('2026-03-01T10:00:00Z')) });
    const now = t.clock.now();
    a.id = insertConnectedSite(t, { url: a.url, name: a.name, tags: ['client-a'], wordpressVersion: '6.8' });
    b.id = insertConnectedSite(t, { url: b.url, name: b.name, tags: ['client-b'], wordpressVersion: '6.8' });
    const plugin = (slug: string, version: string, update: string | null) => ({
      slug,
      file: `${slug}/${slug}.php`,
      name: slug,
      version,
      status: 'active' as const,
      update: update ? { version: update } : null,
    });
    const theme = (slug: string) => ({
      slug,
      name: slug,
      version: '1.0',
      status: 'inactive' as const,
      parent: null,
      update: null,
    });
    const extras = (coreOffers: string[], translations: number) => ({
      databaseType: null,
      databaseVersion: null,
      timeZone: 'UTC',
      coreOffers,
      translations: Array.from({ length: translations }, (_, i) => ({
        type: 'plugin',
        slug: `pack-${i}`,
        language: 'de_DE',
        version: '1.0',
      })),
    });
    await t.services.inventories.write(a.id, {
      plugins: [plugin('shared-plugin', '1.0', '2.0'), plugin('alpha-plugin', '1.0', null)],
      themes: [theme('shared-theme')],
      syncedAt: now,
      extras: extras(['6.8.1'], 0),
    });
    await t.services.inventories.write(b.id, {
      plugins: [plugin('shared-plugin', '1.5', '2.0'), plugin('bravo-only-plugin', '3.0', '3.1')],
      themes: [theme('shared-theme'), theme('bravo-only-theme')],
      syncedAt: now,
      extras: extras(['6.9.1'], 2),
    });

    // Jobs: one of each site, and a fleet job (no site).
    const jobRows = createJobsRepository({ db: t.database.db });
    const job = (siteId: string | null, kind = 'backup') =>
      jobRows.insert({ id: createId('job', now), kind, siteId, state: 'succeeded', createdAt: now }).id;
    ids.jobA = job(a.id);
    ids.jobB = job(b.id);
    ids.fleetJob = job(null, 'fleet-refresh');

    // The update history: an attempt on each site.
    const history = createUpdateHistoryRepository(t.state);
    const entry = async (siteId: string, slug: string) =>
      (
        await history.insert({
          id: createId('upd', now),
          siteId,
          type: 'plugin',
          slug,
          fromVersion: '1.0',
          toVersion: '2.0',
          startedAt: now,
          triggerKind: 'user',
          triggerId: null,
          jobId: null,
          safeUpdateId: null,
          result: 'running',
        })
      ).id;
    ids.entryA = await entry(a.id, 'shared-plugin');
    ids.entryB = await entry(b.id, 'bravo-only-plugin');

    // Fleet actions, as their rows are written when queued: on A, on B, on both.
    const action = (sites: Site[], slug: string) =>
      jobRows.insert({
        id: createId('fact', now),
        kind: 'fleet-action',
        siteId: null,
        state: 'succeeded',
        params: JSON.stringify({
          action: 'activate',
          type: 'plugin',
          slug,
          activate: false,
          deactivate: false,
          requestedBy: null,
        }),
        progress: JSON.stringify({
          sites: sites.map((site) => ({
            siteId: site.id,
            url: site.url,
            state: 'succeeded',
            reason: null,
            message: null,
            version: '1.0',
            status: 'active',
            finishedAt: now.toISOString(),
          })),
        }),
        createdAt: now,
      }).id;
    ids.actionA = action([a], 'shared-plugin');
    ids.actionB = action([b], 'bravo-only-plugin');
    ids.actionAB = action([a, b], 'shared-plugin');

    // Bulk runs (previews), by the owner: of A, of B, of both.
    const preview = async (sites: Site[]) => {
      const planned = await t.call('POST', '/api/fleet/updates/apply', {
        json: { sites: sites.map((site) => site.id), dryRun: true },
      });
      expect(planned.status, planned.text).toBe(200);
      return planned.json.job.id as string;
    };
    ids.runA = await preview([a]);
    ids.runB = await preview([b]);
    ids.runAB = await preview([a, b]);

    ({ token: clientToken, cookie } = await scopedPrincipal(t, {
      username: 'client-of-a',
      role: 'client',
      tags: ['client-a'],
      tokenName: 'client-a-token',
    }));
    ({ token: managerToken } = await scopedPrincipal(t, {
      username: 'manager-of-a',
      role: 'manager',
      tags: ['client-a'],
      tokenName: 'manager-a-token',
    }));
  });
  afterAll(() => t.close());

  it('counts pending updates over the sites in scope only, by item and by site', async () => {
    const byItem = await get('/api/fleet/updates');
    expect(byItem.status, byItem.text).toBe(200);
    expect(byItem.json.items).toEqual([
      expect.objectContaining({ type: 'core', toVersion: '6.8.1', sites: 1 }),
      expect.objectContaining({ type: 'plugin', slug: 'shared-plugin', fromVersions: ['1.0'], sites: 1 }),
    ]);
    expectNothingOfB(byItem.text, 'GET /api/fleet/updates');
    const bySite = await get('/api/fleet/updates?groupBy=site');
    expect(bySite.json.items.map((row: { siteId: string }) => row.siteId)).toEqual([a.id]);
    expectNothingOfB(bySite.text, 'GET /api/fleet/updates?groupBy=site');
    for (const query of ['?type=translations', '?groupBy=site&type=translations', '?tag=client-b', '?type=core']) {
      const narrowed = await get(`/api/fleet/updates${query}`);
      expect(narrowed.status).toBe(200);
      expectNothingOfB(narrowed.text, `GET /api/fleet/updates${query}`);
    }
    expect((await get('/api/fleet/updates?type=translations')).json.items).toEqual([]);
    expect((await get('/api/fleet/updates?tag=client-b')).json.items).toEqual([]);
    // The owner, unscoped, still counts both sites.
    const all = await get('/api/fleet/updates', t.writeToken);
    expect(all.json.items).toContainEqual(
      expect.objectContaining({ type: 'plugin', slug: 'shared-plugin', fromVersions: ['1.0', '1.5'], sites: 2 }),
    );
    expect(all.json.items).toContainEqual(expect.objectContaining({ type: 'translations', sites: 1, packs: 2 }));
  });

  it('lists plugins and themes installed on the sites in scope, counted over them; B’s only item is an unknown slug', async () => {
    const plugins = await get('/api/fleet/plugins');
    expect(plugins.status, plugins.text).toBe(200);
    expect(
      plugins.json.items.map((row: { slug: string; sites: number; withUpdate: number }) => [
        row.slug,
        row.sites,
        row.withUpdate,
      ]),
    ).toEqual([
      ['alpha-plugin', 1, 0],
      ['shared-plugin', 1, 1],
    ]);
    expectNothingOfB(plugins.text, 'GET /api/fleet/plugins');
    const themes = await get('/api/fleet/themes');
    expect(themes.json.items.map((row: { slug: string; sites: number }) => [row.slug, row.sites])).toEqual([
      ['shared-theme', 1],
    ]);
    expectNothingOfB(themes.text, 'GET /api/fleet/themes');
    const shared = await get('/api/fleet/plugins/shared-plugin');
    expect(shared.json.items.map((row: { siteId: string }) => row.siteId)).toEqual([a.id]);
    expectNothingOfB(shared.text, 'GET /api/fleet/plugins/shared-plugin');
    // An item only B runs: the answer to a slug no site has.
    for (const [path, slug] of [
      ['/api/fleet/plugins/', 'bravo-only-plugin'],
      ['/api/fleet/themes/', 'bravo-only-theme'],
    ] as const) {
      const only = await get(`${path}${slug}`);
      const unknown = await get(`${path}no-such-item`);
      expect({ status: only.status, text: only.text }).toEqual({ status: unknown.status, text: unknown.text });
    }
    // The owner reads the fleet's totals (the read model of drizzle/0017): both sites, B's only items.
    const all = await get('/api/fleet/plugins', t.writeToken);
    expect(all.json.items.map((row: { slug: string; sites: number }) => [row.slug, row.sites])).toEqual([
      ['alpha-plugin', 1],
      ['bravo-only-plugin', 1],
      ['shared-plugin', 2],
    ]);
  });

  it('lists the update history of the sites in scope only', async () => {
    const history = await get('/api/fleet/updates/history');
    expect(history.status, history.text).toBe(200);
    expect(history.json.items.map((row: { id: string }) => row.id)).toEqual([ids.entryA]);
    expectNothingOfB(history.text, 'GET /api/fleet/updates/history');
    const ofB = await get(`/api/fleet/updates/history?siteId=${b.id}`);
    expect([ofB.status, ofB.json.items]).toEqual([200, []]);
    const all = await get('/api/fleet/updates/history', t.writeToken);
    expect(all.json.items).toHaveLength(2);
  });

  it('lists and shows the jobs of the sites in scope; any other job is an unknown job', async () => {
    const jobs = await get('/api/jobs');
    expect(jobs.status, jobs.text).toBe(200);
    expect(jobs.json.items.map((job: { id: string }) => job.id)).toEqual([ids.jobA]);
    expectNothingOfB(jobs.text, 'GET /api/jobs');
    expect((await get(`/api/jobs?siteId=${b.id}`)).json.items).toEqual([]);
    expect((await get(`/api/jobs/${ids.jobA}`)).json).toMatchObject({ id: ids.jobA, siteId: a.id });
    // B's job, a fleet job (no site) and a fleet action's job: exactly an unknown job's answer.
    for (const id of [ids.jobB, ids.fleetJob, ids.actionA, ids.runA])
      await expectAnsweredAsUnknown((jobId) => `/api/jobs/${jobId}`, id);
    // The owner sees every job.
    expect((await get(`/api/jobs/${ids.jobB}`, t.writeToken)).status).toBe(200);
  });

  it('shows a fleet action only when all its sites are in scope', async () => {
    const actions = await get('/api/fleet/actions');
    expect(actions.status, actions.text).toBe(200);
    expect(actions.json.items.map((action: { id: string }) => action.id)).toEqual([ids.actionA]);
    expectNothingOfB(actions.text, 'GET /api/fleet/actions');
    expect((await get(`/api/fleet/actions/${ids.actionA}`)).json).toMatchObject({ id: ids.actionA });
    for (const id of [ids.actionB, ids.actionAB])
      await expectAnsweredAsUnknown((actionId) => `/api/fleet/actions/${actionId}`, id);
    expect((await get('/api/fleet/actions', t.writeToken)).json.items).toHaveLength(3);
  });

  it('shows a bulk run only when all its sites are in scope', async () => {
    const run = await get(`/api/fleet/updates/runs/${ids.runA}`);
    expect(run.status, run.text).toBe(200);
    expect(run.json.sites.map((site: { siteId: string }) => site.siteId)).toEqual([a.id]);
    for (const id of [ids.runB, ids.runAB])
      await expectAnsweredAsUnknown((jobId) => `/api/fleet/updates/runs/${jobId}`, id);
    expect((await get(`/api/fleet/updates/runs/${ids.runAB}`, t.writeToken)).status).toBe(200);
  });

  it('filters the dashboard’s fleet, updates, history, activity, run and action pages the same way', async () => {
    for (const path of [
      '/fleet/plugins',
      '/fleet/themes',
      '/fleet/plugins/shared-plugin',
      '/updates',
      '/updates/history',
      `/updates/history?site=${a.id}`,
      '/activity',
      `/updates/runs/${ids.runA}`,
      `/fleet/actions/${ids.actionA}`,
    ]) {
      const shown = await page(path);
      expect(shown.status, path).toBe(200);
      expectNothingOfB(shown.text, `page ${path}`);
    }
    const plugins = await page('/fleet/plugins');
    expect(plugins.text).toContain('alpha-plugin');
    const updates = await page('/updates');
    expect(updates.text).toContain(`/updates/runs/${ids.runA}`);
    expect(updates.text).toContain('shared-plugin');
    expect((await page('/activity')).text).toContain(ids.jobA);
    expect((await page('/updates/history')).text).toContain(a.name);
    // B's run, action and only item: the pages of unknown ones.
    for (const id of [ids.runB, ids.runAB]) await expectAnsweredAsUnknown((run) => `/updates/runs/${run}`, id, page);
    for (const id of [ids.actionB, ids.actionAB])
      await expectAnsweredAsUnknown((action) => `/fleet/actions/${action}`, id, page);
    const only = await page('/fleet/plugins/bravo-only-plugin');
    const unknown = await page('/fleet/plugins/no-such-item');
    expect({ status: only.status, text: only.text.replaceAll('bravo-only-plugin', 'SLUG') }).toEqual({
      status: unknown.status,
      text: unknown.text.replaceAll('no-such-item', 'SLUG'),
    });
    // A page of B's site in the history's filter: B's id echoed as any unknown id, never its name.
    const historyOfB = await page(`/updates/history?site=${b.id}`);
    expectNothingOfB(historyOfB.text, 'the history filtered by B', b.id);
  });

  it('keeps changes across sites refused to a scoped manager', async () => {
    for (const [path, json] of [
      ['/api/fleet/actions', { action: 'activate', type: 'plugin', slug: 'shared-plugin', sites: [a.id] }],
      ['/api/fleet/updates/apply', { sites: [a.id], dryRun: true }],
      [`/api/fleet/updates/runs/${ids.runA}/apply`, {}],
      [`/api/jobs/${ids.jobA}/cancel`, undefined],
      ['/api/fleet/refresh', { sites: [a.id] }],
    ] as const) {
      const refused = await t.call('POST', path, { token: managerToken, json });
      expect([refused.status, refused.json.type], path).toEqual([403, '/problems/forbidden']);
      expect(refused.json.detail).toContain('not available to accounts limited to tags');
    }
    // Reads are the scoped manager's as the client's.
    expect((await get('/api/fleet/actions', managerToken)).json.items).toHaveLength(1);
  });
});
