import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Plugin } from '../../src/inventory/index.js';
import { createUpdateStateReader } from '../../src/inventory/index.js';
import {
  createUpdatePoliciesRepository,
  createUpdatePoliciesService,
  type ApplyUpdates,
  type UpdatePoliciesService,
} from '../../src/update-policies/index.js';
import { createFakeClock, createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';

/**
 * Update policies through the API, and the minute tick on a controlled clock: it starts a run
 * exactly when a window opens, never after it closes, and never twice in one window.
 */
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
// Wednesday 14 January 2026, 00:00 UTC.
const START = new Date('2026-01-14T00:00:00Z');
let t: TestApp;
let clock: ReturnType<typeof createFakeClock>;

beforeAll(() => {
  clock = createFakeClock(START);
  t = createTestApp({ clock });
});
afterAll(() => t.close());

const plugin = (slug: string, version: string, update: string | null): Plugin => ({
  slug,
  file: `${slug}/${slug}.php`,
  name: slug,
  version,
  status: 'active',
  update: update ? { version: update } : null,
});

/** A connected site whose last sync saw `plugins`, in `timeZone`, written the way the sync writes it. */
async function addSite(tags: string[], plugins: Plugin[], timeZone: string | null = null) {
  const syncedAt = clock.now();
  // Ids are time-ordered: a millisecond apart, sites list in the order they were added.
  clock.advance(1);
  const id = insertConnectedSite(t, { tags, wordpressVersion: '6.5.3' });
  await t.services.inventories.write(id, {
    plugins,
    themes: [],
    syncedAt,
    extras: { databaseType: null, databaseVersion: null, timeZone, coreOffers: [], translations: [] },
  });
  return id;
}

const nightly = { days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: '02:00', end: '04:00' };

describe('the API', () => {
  it('creates, reads, replaces and removes a policy, with defaults filled in', async () => {
    const created = await t.call('POST', '/api/update-policies', {
      json: { name: 'Acme nights', tag: 'client:acme', kinds: { plugins: true }, window: nightly },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.json).toMatchObject({
      id: expect.stringMatching(/^upol_/),
      name: 'Acme nights',
      siteId: null,
      tag: 'client:acme',
      priority: 0,
      enabled: true,
      kinds: { plugins: true, themes: false, coreMinor: false, coreMajor: false, translations: false },
      window: { ...nightly, timeZone: null },
      releaseDelayDays: 0,
      pins: [],
      ignore: [],
    });
    const id = created.json.id;
    // Tags are matched as sites store them: lowercase.
    const upper = await t.call('POST', '/api/update-policies', {
      json: { name: 'x', tag: 'Client:ACME', window: nightly },
    });
    expect([upper.status, upper.json.type]).toEqual([409, '/problems/update-policy-exists']);
    expect((await t.call('GET', `/api/update-policies/${id}`, { token: t.readToken })).json.name).toBe('Acme nights');
    const listed = await t.call('GET', '/api/update-policies', { token: t.readToken });
    expect(listed.json.items.map((p: { id: string }) => p.id)).toContain(id);

    const replaced = await t.call('PUT', `/api/update-policies/${id}`, {
      json: {
        name: 'Acme weekends',
        kinds: { themes: true },
        window: { ...nightly, days: ['sun', 'sat'] },
        releaseDelayDays: 3,
      },
    });
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.json).toMatchObject({ tag: 'client:acme', releaseDelayDays: 3, window: { days: ['sat', 'sun'] } });
    expect(replaced.json.kinds.plugins).toBe(false);

    expect((await t.call('DELETE', `/api/update-policies/${id}`)).status).toBe(204);
    const gone = await t.call('GET', `/api/update-policies/${id}`);
    expect([gone.status, gone.json.type]).toEqual([404, '/problems/update-policy-not-found']);
  });

  it('takes the checks of its safe updates, rolling back on a visual change unless told otherwise', async () => {
    const byDefault = await t.call('POST', '/api/update-policies', {
      json: { name: 'checks default', tag: 'checks-default', window: nightly },
    });
    expect(byDefault.status, byDefault.text).toBe(201);
    expect(byDefault.json.checks).toMatchObject({ visual: { enabled: true, threshold: 0.03, rollback: true } });
    // A threshold alone keeps the unattended default; a policy may turn the rollback off, and add URLs.
    const threshold = await t.call('POST', '/api/update-policies', {
      json: {
        name: 'checks threshold',
        tag: 'checks-threshold',
        window: nightly,
        checks: { visual: { threshold: 0.1 } },
      },
    });
    expect(threshold.json.checks.visual).toEqual({ enabled: true, threshold: 0.1, rollback: true });
    const kept = await t.call('PUT', `/api/update-policies/${threshold.json.id}`, {
      json: {
        name: 'checks threshold',
        window: nightly,
        checks: { urls: ['/shop/'], visual: { rollback: false, threshold: 0.2 } },
      },
    });
    expect(kept.status, kept.text).toBe(200);
    expect(kept.json.checks).toMatchObject({
      urls: ['/shop/'],
      visual: { enabled: true, threshold: 0.2, rollback: false },
    });
    expect((await t.services.updatePolicies.get(threshold.json.id)).settings.checks.visual.rollback).toBe(false);
    const wrong = await t.call('POST', '/api/update-policies', {
      json: { name: 'checks wrong', tag: 'checks-wrong', window: nightly, checks: { visual: { threshold: 2 } } },
    });
    expect([wrong.status, wrong.headers.get('content-type')]).toEqual([400, 'application/problem+json']);
    for (const id of [byDefault.json.id, threshold.json.id]) await t.call('DELETE', `/api/update-policies/${id}`);
  });

  it('answers clear problems for what it cannot take', async () => {
    const post = (json: Record<string, unknown>) => t.call('POST', '/api/update-policies', { json });
    const base = { name: 'p', tag: 'bad-input', window: nightly };

    const zone = await post({ ...base, window: { ...nightly, timeZone: 'Mars/Olympus' } });
    expect([zone.status, zone.json.type]).toEqual([400, '/problems/validation-failed']);
    expect(zone.json.errors).toEqual([
      expect.objectContaining({ field: 'window.timeZone', message: expect.stringContaining('not a time zone') }),
    ]);

    const time = await post({ ...base, window: { ...nightly, start: '24:00' } });
    expect(time.json.errors).toEqual([expect.objectContaining({ field: 'window.start' })]);
    const noDays = await post({ ...base, window: { ...nightly, days: [] } });
    expect(noDays.json.errors).toEqual([expect.objectContaining({ field: 'window.days' })]);
    const delay = await post({ ...base, releaseDelayDays: -1 });
    expect(delay.json.errors).toEqual([expect.objectContaining({ field: 'releaseDelayDays' })]);
    const pin = await post({ ...base, pins: [{ type: 'plugin', slug: '../x', version: '1.0' }] });
    expect(pin.json.errors).toEqual([expect.objectContaining({ field: 'pins.0.slug' })]);

    const neither = await post({ name: 'p', window: nightly });
    expect([neither.status, neither.json.type]).toEqual([400, '/problems/invalid-policy-scope']);
    const both = await post({ ...base, siteId: 'site_x' });
    expect(both.json.type).toBe('/problems/invalid-policy-scope');
    const unknownSite = await post({ name: 'p', siteId: 'site_00000000000000000000000000', window: nightly });
    expect([unknownSite.status, unknownSite.json.type]).toEqual([404, '/problems/site-not-found']);

    // Crossing midnight is allowed, and a tag has one policy.
    const night = await post({ ...base, window: { ...nightly, start: '22:00', end: '03:00' } });
    expect(night.status, night.text).toBe(201);
    const again = await post(base);
    expect([again.status, again.json.type]).toEqual([409, '/problems/update-policy-exists']);
    // A read token only reads.
    const read = await t.call('POST', '/api/update-policies', { json: base, token: t.readToken });
    expect(read.status).toBe(403);
    await t.call('DELETE', `/api/update-policies/${night.json.id}`);
  });

  it('previews what the policy would do in its next window, per site, with the reasons it skips', async () => {
    const a = await addSite(['preview'], [plugin('seo', '1.0', '2.0'), plugin('cache', '1.0', '1.1')], 'Asia/Tokyo');
    const b = await addSite(['preview'], [plugin('seo', '1.0', '2.0')]);
    const created = await t.call('POST', '/api/update-policies', {
      json: {
        name: 'preview',
        tag: 'preview',
        kinds: { plugins: true },
        window: nightly,
        pins: [{ type: 'plugin', slug: 'seo', version: '1.5' }],
      },
    });
    const preview = await t.call('GET', `/api/update-policies/${created.json.id}/preview`, { token: t.readToken });
    expect(preview.status, preview.text).toBe(200);
    expect(preview.json.sites).toEqual([
      expect.objectContaining({
        siteId: a,
        timeZone: 'Asia/Tokyo',
        timeZoneSource: 'site',
        windowOpen: false,
        // 02:00 in Tokyo is 17:00 UTC the day before: the next is 17:00 today.
        window: { start: '2026-01-14T17:00:00.000Z', end: '2026-01-14T19:00:00.000Z' },
        updates: [{ siteId: a, type: 'plugin', slug: 'cache', version: '1.1' }],
        skipped: [{ type: 'plugin', slug: 'seo', version: '2.0', reason: 'pinned', eligibleAt: null }],
        alreadyRun: false,
      }),
      expect.objectContaining({
        siteId: b,
        timeZone: 'UTC',
        timeZoneSource: 'default',
        window: { start: '2026-01-14T02:00:00.000Z', end: '2026-01-14T04:00:00.000Z' },
        updates: [],
      }),
    ]);
    // The same for one site, with the policy that governs it; a site no policy governs has none.
    const one = await t.call('GET', `/api/sites/${a}/update-policy`, { token: t.readToken });
    expect(one.status, one.text).toBe(200);
    expect(one.json).toEqual({
      at: clock.now().toISOString(),
      policyId: created.json.id,
      enabled: true,
      plan: preview.json.sites[0],
    });
    const lone = await addSite(['nobody'], []);
    expect((await t.call('GET', `/api/sites/${lone}/update-policy`)).json).toMatchObject({
      policyId: null,
      plan: null,
    });
    const missing = await t.call('GET', '/api/sites/site_00000000000000000000000000/update-policy');
    expect([missing.status, missing.json.type]).toEqual([404, '/problems/site-not-found']);

    const page = await t.call('GET', `/api/update-policies/${created.json.id}/preview?limit=1`, { token: t.readToken });
    expect(page.json.sites.map((s: { siteId: string }) => s.siteId)).toEqual([a]);
    const next = await t.call(
      'GET',
      `/api/update-policies/${created.json.id}/preview?limit=1&cursor=${page.json.nextCursor}`,
    );
    expect(next.json.sites.map((s: { siteId: string }) => s.siteId)).toEqual([b]);
    expect(next.json.nextCursor).toBeNull();
    await t.call('DELETE', `/api/update-policies/${created.json.id}`);
  });
});

describe('the minute tick', () => {
  let calls: Parameters<ApplyUpdates>[0][];
  let policies: UpdatePoliciesService;
  let failNext = false;

  beforeEach(() => {
    calls = [];
    // The service as composed, with bulk updates replaced by a recorder that answers a job.
    policies = createUpdatePoliciesService({
      repository: createUpdatePoliciesRepository(t.state),
      states: createUpdateStateReader(t.state),
      sites: t.services.sitesRepository,
      applyUpdates: (request) => {
        if (failNext) {
          failNext = false;
          throw new Error('bulk updates refused');
        }
        calls.push(request);
        return { id: `job_${calls.length}` };
      },
      clock,
      events: t.services.events,
      logger: t.logs.logger,
    });
  });

  it('starts at the minute the window opens, once per window, with notAfter at its end', async () => {
    clock.set(START);
    const berlin = await addSite(['tick'], [plugin('seo', '1.0', '2.0')], 'Europe/Berlin');
    const utc = await addSite(['tick'], [plugin('seo', '1.0', '2.0')], 'UTC');
    const upToDate = await addSite(['tick'], [plugin('seo', '2.0', null)], 'UTC');
    const own = await addSite(['tick'], [plugin('seo', '1.0', '2.0')], 'UTC');
    const policy = await t.call('POST', '/api/update-policies', {
      json: { name: 'tick', tag: 'tick', kinds: { plugins: true }, window: nightly },
    });
    // The site's own (disabled) policy keeps it out of the tag's.
    await t.call('POST', '/api/update-policies', {
      json: { name: 'not this one', siteId: own, enabled: false, kinds: { plugins: true }, window: nightly },
    });

    // 00:59 UTC: Berlin's 02:00 is a minute away; nothing starts.
    clock.set(new Date('2026-01-14T00:59:00Z'));
    expect(await policies.tick()).toBe(0);
    // 01:00 UTC = 02:00 Berlin: Berlin starts, exactly then.
    clock.set(new Date('2026-01-14T01:00:00Z'));
    expect(await policies.tick()).toBe(1);
    expect(calls).toEqual([
      {
        targets: [{ siteId: berlin, type: 'plugin', slug: 'seo', version: '2.0' }],
        trigger: { kind: 'policy', id: policy.json.id },
        safe: true,
        // Unattended: a page that changed beyond the threshold is rolled back by default.
        checks: expect.objectContaining({ visual: { enabled: true, threshold: 0.03, rollback: true } }),
        notAfter: new Date('2026-01-14T03:00:00Z'),
      },
    ]);
    expect(t.logs.events('update_policy.run_started').at(-1)).toMatchObject({
      policyId: policy.json.id,
      jobId: 'job_1',
      sites: 1,
      targets: 1,
      windowStart: '2026-01-14T01:00:00.000Z',
      windowEnd: '2026-01-14T03:00:00.000Z',
    });
    // The next minutes of the same window start nothing more on it.
    clock.set(new Date('2026-01-14T01:01:00Z'));
    expect(await policies.tick()).toBe(0);
    // 02:00 UTC: the UTC site's window; the up-to-date one has nothing due.
    clock.set(new Date('2026-01-14T02:00:00Z'));
    expect(await policies.tick()).toBe(1);
    expect(calls[1]?.targets.map((target) => target.siteId)).toEqual([utc]);
    expect(calls.flatMap((call) => call.targets.map((target) => target.siteId))).not.toContain(upToDate);
    expect(calls.flatMap((call) => call.targets.map((target) => target.siteId))).not.toContain(own);
    // A service built again (a restart) knows the window already ran.
    clock.set(new Date('2026-01-14T02:30:00Z'));
    expect(await policies.tick()).toBe(0);
  });

  it('starts nothing once the window has closed, and the next window starts again', async () => {
    clock.set(START);
    const site = await addSite(['closed'], [plugin('late', '1.0', '2.0')], 'UTC');
    await t.call('POST', '/api/update-policies', {
      json: {
        name: 'closed',
        tag: 'closed',
        kinds: { plugins: true },
        window: { days: ['wed'], start: '05:00', end: '05:30' },
      },
    });
    clock.set(new Date('2026-01-14T05:30:00Z'));
    expect(await policies.tick()).toBe(0);
    clock.set(new Date('2026-01-14T05:29:00Z'));
    expect(await policies.tick()).toBe(1);
    expect(calls[0]?.notAfter).toEqual(new Date('2026-01-14T05:30:00Z'));
    // A week later, the same site's next window.
    clock.set(new Date(new Date('2026-01-14T05:00:00Z').getTime() + 7 * DAY));
    expect(await policies.tick()).toBe(1);
    expect(calls[1]?.targets).toEqual([{ siteId: site, type: 'plugin', slug: 'late', version: '2.0' }]);
  });

  it('gives the window back when the run could not start, and starts it at the next tick', async () => {
    clock.set(START);
    await addSite(['retry'], [plugin('retry', '1.0', '2.0')], 'UTC');
    await t.call('POST', '/api/update-policies', {
      json: {
        name: 'retry',
        tag: 'retry',
        kinds: { plugins: true },
        window: { days: ['wed'], start: '06:00', end: '07:00' },
      },
    });
    clock.set(new Date('2026-01-14T06:00:00Z'));
    failNext = true;
    expect(await policies.tick()).toBe(0);
    clock.set(new Date('2026-01-14T06:01:00Z'));
    expect(await policies.tick()).toBe(1);
  });

  it('waits for the release delay within the window, and honours it to the minute', async () => {
    clock.set(new Date('2026-01-10T08:15:00Z'));
    await addSite(['delay'], [plugin('fresh', '1.0', '2.0')], 'UTC');
    await t.call('POST', '/api/update-policies', {
      json: {
        name: 'delay',
        tag: 'delay',
        kinds: { plugins: true },
        releaseDelayDays: 4,
        window: { days: ['wed'], start: '08:00', end: '09:00' },
      },
    });
    clock.set(new Date('2026-01-14T08:14:00Z'));
    expect(await policies.tick()).toBe(0);
    clock.set(new Date('2026-01-14T08:15:00Z'));
    expect(await policies.tick()).toBe(1);
  });

  it('starts one bulk update for the window, ending at the window’s end, with what the policy allows', async () => {
    clock.set(START);
    const siteId = await addSite(['planned'], [plugin('planned', '1.0', '2.0')], 'UTC');
    const created = await t.call('POST', '/api/update-policies', {
      json: {
        name: 'planned',
        tag: 'planned',
        kinds: { plugins: true },
        window: { days: ['wed'], start: '10:00', end: '11:00' },
      },
    });
    clock.set(new Date('2026-01-14T10:00:00Z'));
    expect(await t.services.updatePolicies.tick()).toBe(1);
    const started = t.logs.events('update_policy.run_started').at(-1);
    expect(started).toMatchObject({ policyId: created.json.id, jobId: expect.any(String) });

    const run = await t.call('GET', `/api/fleet/updates/runs/${started!['jobId'] as string}`);
    expect(run.status, run.text).toBe(200);
    expect(run.json).toMatchObject({
      trigger: { kind: 'policy', id: created.json.id },
      notAfter: '2026-01-14T11:00:00.000Z',
      safe: true,
      // The policy's checks go with the run, stored with it: rolled back on a visual change, unattended.
      checks: expect.objectContaining({ visual: { enabled: true, threshold: 0.03, rollback: true } }),
      progress: { total: 1 },
    });
    expect(run.json.sites[0]).toMatchObject({
      siteId,
      items: [expect.objectContaining({ type: 'plugin', slug: 'planned', fromVersion: '1.0', toVersion: '2.0' })],
    });
    const preview = await t.call('GET', `/api/update-policies/${created.json.id}/preview`);
    expect(preview.json.sites[0]).toMatchObject({ windowOpen: true, alreadyRun: true });
  });
});
