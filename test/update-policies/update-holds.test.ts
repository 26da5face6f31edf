import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
 * Holds: a version a safe update rolled back on a site is not applied there again by a policy
 * (a newer one is), until a user releases it; the dry run says why, with the rollback's date.
 */
const DAY = 24 * 60 * 60_000;
// Wednesday 14 January 2026, 00:00 UTC; the policy's window is Wednesdays 12:00–13:00 UTC.
const START = new Date('2026-01-14T00:00:00Z');
const WINDOW = new Date('2026-01-14T12:00:00Z');
let t: TestApp;
let clock: ReturnType<typeof createFakeClock>;
let calls: Parameters<ApplyUpdates>[0][];
let policies: UpdatePoliciesService;

beforeAll(() => {
  clock = createFakeClock(START);
  t = createTestApp({ clock });
  calls = [];
  // The service as composed, with bulk updates replaced by a recorder; the holds are the app's.
  policies = createUpdatePoliciesService({
    repository: createUpdatePoliciesRepository(t.state),
    states: createUpdateStateReader(t.state),
    sites: t.services.sitesRepository,
    applyUpdates: (request) => (calls.push(request), { id: `job_${calls.length}` }),
    clock,
    events: t.services.events,
    logger: t.logs.logger,
  });
});
afterAll(() => t.close());

const plugin = (version: string, update: string | null): Plugin => ({
  slug: 'forms',
  file: 'forms/forms.php',
  name: 'Forms',
  version,
  status: 'active',
  update: update ? { version: update } : null,
});

async function offer(siteId: string, update: string) {
  await t.services.inventories.write(siteId, {
    plugins: [plugin('1.0.0', update)],
    themes: [],
    syncedAt: START,
    extras: { databaseType: null, databaseVersion: null, timeZone: 'UTC', coreOffers: [], translations: [] },
  });
}

async function addSite(update: string) {
  clock.advance(1);
  const id = insertConnectedSite(t, { tags: ['holds'], wordpressVersion: '6.5.3' });
  await offer(id, update);
  return id;
}

/** What safe updates emit when the after-checks failed and the previous version was put back. */
function rollBack(siteId: string, event: 'update.rolled-back' | 'update.rollback-failed' = 'update.rolled-back') {
  t.services.events.emit(event, {
    siteId,
    safeUpdateId: 'supd_1',
    type: 'plugin',
    slug: 'forms',
    fromVersion: '1.0.0',
    toVersion: '1.1.0',
    reason: 'after-check-failed',
    message: 'the home page answered 500',
    durationMs: 4_000,
  });
}
/** Subscribers get events after the emitter's synchronous work. */
const settled = () => new Promise((resolve) => setImmediate(resolve));
const targetsOf = (call: Parameters<ApplyUpdates>[0] | undefined) =>
  call?.targets.map(({ siteId, version }) => `${siteId} ${version}`).sort();

describe('a version rolled back on a site', () => {
  let broken: string;
  let healthy: string;
  let policyId: string;

  it('is held there: the policy skips it on that site, applies it on the others, and the dry run says why', async () => {
    broken = await addSite('1.1.0');
    healthy = await addSite('1.1.0');
    const created = await t.call('POST', '/api/update-policies', {
      json: {
        name: 'holds',
        tag: 'holds',
        kinds: { plugins: true },
        window: { days: ['wed'], start: '12:00', end: '13:00', timeZone: 'UTC' },
      },
    });
    expect(created.status, created.text).toBe(201);
    policyId = created.json.id;

    clock.set(new Date('2026-01-14T09:30:00Z'));
    rollBack(broken);
    await settled();

    clock.set(WINDOW);
    expect(await policies.tick()).toBe(1);
    expect(targetsOf(calls[0])).toEqual([`${healthy} 1.1.0`]);

    const preview = await t.call('GET', `/api/update-policies/${policyId}/preview`, { token: t.readToken });
    expect(preview.status, preview.text).toBe(200);
    const plan = preview.json.sites.find((site: { siteId: string }) => site.siteId === broken);
    expect(plan.updates).toEqual([]);
    expect(plan.skipped).toEqual([
      {
        type: 'plugin',
        slug: 'forms',
        version: '1.1.0',
        reason: 'held',
        eligibleAt: null,
        hold: expect.objectContaining({
          id: expect.stringMatching(/^hold_/),
          siteId: broken,
          version: '1.1.0',
          outcome: 'rolled-back',
          reason: 'after-check-failed',
          message: 'the home page answered 500',
          heldAt: '2026-01-14T09:30:00.000Z',
          releasedAt: null,
        }),
      },
    ]);
    const listed = await t.call('GET', `/api/update-policies/holds?siteId=${broken}`, { token: t.readToken });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.json).toEqual({ items: [plan.skipped[0].hold], nextCursor: null });
    expect((await t.call('GET', `/api/update-policies/holds?siteId=${healthy}`)).json.items).toEqual([]);
    // The site's own dry run says the same.
    const own = await t.call('GET', `/api/sites/${broken}/update-policy`);
    expect(own.json.plan.skipped[0]).toMatchObject({ reason: 'held', hold: { heldAt: '2026-01-14T09:30:00.000Z' } });
  });

  it('does not hold a newer version: it applies as soon as it is offered', async () => {
    await offer(broken, '1.2.0');
    clock.set(new Date(WINDOW.getTime() + 7 * DAY));
    expect(await policies.tick()).toBe(2);
    expect(targetsOf(calls[1])).toEqual([`${broken} 1.2.0`, `${healthy} 1.1.0`].sort());
    // The held version itself stays held (offered again, say, once 1.2.0 was withdrawn).
    await offer(broken, '1.1.0');
    const preview = await t.call('GET', `/api/update-policies/${policyId}/preview`);
    const plan = preview.json.sites.find((site: { siteId: string }) => site.siteId === broken);
    expect(plan.skipped).toEqual([expect.objectContaining({ version: '1.1.0', reason: 'held' })]);
  });

  it('is applied again once a user releases the hold, which records who released it', async () => {
    const [hold] = (await t.call('GET', `/api/update-policies/holds?siteId=${broken}`)).json.items;

    const read = await t.call('POST', `/api/update-policies/holds/${hold.id}/release`, { token: t.readToken });
    expect([read.status, read.json.type]).toEqual([403, '/problems/forbidden']);
    expect(read.headers.get('content-type')).toContain('application/problem+json');
    const unknown = await t.call('POST', '/api/update-policies/holds/hold_00000000000000000000000000/release');
    expect([unknown.status, unknown.json.type]).toEqual([404, '/problems/update-hold-not-found']);
    expect(unknown.headers.get('content-type')).toContain('application/problem+json');

    const released = await t.call('POST', `/api/update-policies/holds/${hold.id}/release`);
    expect(released.status, released.text).toBe(200);
    expect(released.json).toMatchObject({
      id: hold.id,
      releasedAt: clock.now().toISOString(),
      releasedBy: { kind: 'token', id: expect.stringMatching(/^tok_/) },
    });
    expect(t.logs.events('update_policy.hold_released').at(-1)).toMatchObject({
      holdId: hold.id,
      siteId: broken,
      type: 'plugin',
      slug: 'forms',
      version: '1.1.0',
      releasedByKind: 'token',
    });
    const twice = await t.call('POST', `/api/update-policies/holds/${hold.id}/release`);
    expect([twice.status, twice.json.type]).toEqual([409, '/problems/update-hold-released']);

    // Gone from the active holds, kept among the released ones; the next window applies it.
    expect((await t.call('GET', `/api/update-policies/holds?siteId=${broken}`)).json.items).toEqual([]);
    const history = await t.call('GET', `/api/update-policies/holds?siteId=${broken}&state=released`);
    expect(history.json.items).toEqual([released.json]);
    clock.set(new Date(WINDOW.getTime() + 14 * DAY));
    expect(await policies.tick()).toBe(2);
    expect(targetsOf(calls[2])).toEqual([`${broken} 1.1.0`, `${healthy} 1.1.0`].sort());
  });

  it('is held after a failed rollback too, once per version, and a list page at a time', async () => {
    rollBack(healthy, 'update.rollback-failed');
    rollBack(healthy, 'update.rollback-failed');
    rollBack(broken);
    await settled();
    const active = await t.call('GET', `/api/update-policies/holds?siteId=${healthy}`);
    expect(active.json.items).toEqual([expect.objectContaining({ siteId: healthy, outcome: 'rollback-failed' })]);

    const first = await t.call('GET', '/api/update-policies/holds?state=all&limit=2');
    expect(first.json.items.map((hold: { siteId: string }) => hold.siteId)).toEqual([broken, healthy]);
    const next = await t.call('GET', `/api/update-policies/holds?state=all&limit=2&cursor=${first.json.nextCursor}`);
    expect(next.json).toEqual({
      items: [expect.objectContaining({ siteId: broken, releasedAt: expect.any(String) })],
      nextCursor: null,
    });
    const bad = await t.call('GET', '/api/update-policies/holds?state=maybe');
    expect([bad.status, bad.json.type]).toEqual([400, '/problems/validation-failed']);
  });
});
