import type { ServerResponse } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyProbe, initialState } from '../../src/uptime/monitor-state.js';
import { causeOf } from '../../src/uptime/prober.js';
import { latestSlotAt, siteOffsetMs } from '../../src/jobs/spread.js';
import { createFakeClock } from '../../src/shared/clock.js';
import { createUptimeScheduler, nextSlot } from '../../src/uptime/uptime-scheduler.js';
import { startFakeSite } from '../support/fake-wordpress/index.js';
import { freePort } from '../support/served-app.js';
import { createUptimeTestApp, statusOf, type UptimeTestApp } from '../support/uptime.js';

const MINUTE = 60_000;

/** A loopback target whose behaviour the test switches between answers. */
async function startTarget() {
  let behaviour: (res: ServerResponse) => void = (res) => res.end('<html>Hello from the site</html>');
  let hits = 0;
  const site = await startFakeSite((_req, res) => {
    hits++;
    behaviour(res);
  });
  return {
    ...site,
    get hits() {
      return hits;
    },
    answer(status: number, body = 'ok') {
      behaviour = (res) => {
        res.statusCode = status;
        res.end(body);
      };
    },
    hang() {
      behaviour = () => undefined;
    },
  };
}

describe('the monitor state machine', () => {
  it('declares a site down only after the configured number of consecutive failures, dated from the first', () => {
    let state = initialState('up', 0);
    const first = applyProbe(state, { at: 1000, up: false, cause: 'connect' }, 2);
    expect(first).toMatchObject({ transition: null, recheck: true, state: { status: 'up', failures: 1 } });
    state = first.state;
    const second = applyProbe(state, { at: 6000, up: false, cause: 'timeout' }, 2);
    expect(second.transition).toEqual({ kind: 'down', startedAt: 1000, cause: 'connect' });
    const third = applyProbe(second.state, { at: 66_000, up: false, cause: 'timeout' }, 2);
    expect(third.transition).toBeNull();
    const back = applyProbe(third.state, { at: 126_000, up: true, cause: null }, 2);
    expect(back.transition).toEqual({ kind: 'up', at: 126_000, downSince: 1000, downtimeMs: 125_000 });
    expect(back.state).toMatchObject({ status: 'up', since: 126_000, failures: 0 });
  });

  it('forgets a single failure once a probe succeeds', () => {
    const blip = applyProbe(initialState('up', 0), { at: 1000, up: false, cause: 'http_status' }, 3);
    const ok = applyProbe(blip.state, { at: 2000, up: true, cause: null }, 3);
    expect(ok.transition).toBeNull();
    expect(ok.state).toMatchObject({ status: 'up', since: 0, failures: 0 });
  });

  it('with one confirmation goes down on the first failure', () => {
    expect(applyProbe(initialState(), { at: 5, up: false, cause: 'dns' }, 1).transition).toEqual({
      kind: 'down',
      startedAt: 5,
      cause: 'dns',
    });
  });
});

describe('the probe schedule', () => {
  it('spreads one interval’s probes evenly across it', () => {
    const perTenth = new Array<number>(10).fill(0);
    for (let i = 0; i < 10_000; i++)
      perTenth[
        Math.floor(siteOffsetMs(`site_01jc0z6x8m3yq4x0h7a9b${String(i).padStart(5, '0')}`, MINUTE, 1) / (MINUTE / 10))
      ]!++;
    for (const count of perTenth) expect(count).toBeGreaterThan(850);
  });

  it('gives each site the same slot after a restart, within one interval', () => {
    const offset = siteOffsetMs('site_x', MINUTE, 1);
    for (const now of [0, 12_345, 59_999, 1_000_000]) {
      const slot = nextSlot(now, MINUTE, offset);
      expect(slot).toBeGreaterThanOrEqual(now);
      expect(slot - now).toBeLessThan(MINUTE);
      expect(slot % MINUTE).toBe(offset);
    }
  });
});

describe('the probe schedule of a shard taken over (cluster mode)', () => {
  const start = new Date('2026-11-28T10:00:00.000Z').getTime();
  const scheduled = (from?: number) => {
    const clock = createFakeClock(new Date(start));
    const probed: number[] = [];
    const scheduler = createUptimeScheduler({
      clock,
      concurrency: 4,
      probe: async (_siteId, dueAt) => void probed.push(dueAt),
    });
    scheduler.upsert('site_x', MINUTE, from);
    return { clock, probed, scheduler };
  };
  const offset = siteOffsetMs('site_x', MINUTE, 1);

  it('starts at the first slot at or after where the last holder’s claim ended', () => {
    const ahead = start + 2 * MINUTE;
    expect(scheduled(ahead).scheduler.nextDueAt('site_x')).toBe(nextSlot(ahead, MINUTE, offset));
    expect(scheduled().scheduler.nextDueAt('site_x')).toBe(nextSlot(start, MINUTE, offset));
  });

  it('probes once, late, for the latest slot passed since the claim ended, however many were missed', async () => {
    const { clock, probed, scheduler } = scheduled(start - 3 * MINUTE);
    const latest = latestSlotAt(offset, MINUTE, new Date(start)).getTime();
    expect(scheduler.nextDueAt('site_x')).toBe(latest);
    expect(await scheduler.runDue()).toBe(1);
    expect(await scheduler.runDue()).toBe(0);
    expect(probed).toEqual([latest]);
    clock.set(new Date(latest + MINUTE));
    await scheduler.runDue();
    expect(probed).toEqual([latest, latest + MINUTE]);
  });

  it('keeps a site still scheduled here as it is, skipping only the slots another holder took since', () => {
    const { scheduler } = scheduled();
    const due = scheduler.nextDueAt('site_x')!;
    scheduler.upsert('site_x', MINUTE, due - 1);
    expect(scheduler.nextDueAt('site_x')).toBe(due);
    scheduler.upsert('site_x', MINUTE, due + 1);
    expect(scheduler.nextDueAt('site_x')).toBe(due + MINUTE);
  });

  it('queues only the slots before the claimed instant, of the sites accepted; the others stay due', async () => {
    const { clock, scheduler } = scheduled();
    const due = scheduler.nextDueAt('site_x')!;
    clock.set(new Date(due - 500));
    expect(scheduler.tick(1_000, { until: due })).toBe(0);
    expect(scheduler.tick(1_000, { until: due + 1, accept: () => false })).toBe(0);
    expect(scheduler.nextDueAt('site_x')).toBe(due);
    expect(scheduler.tick(1_000, { until: due + 1, accept: (siteId) => siteId === 'site_x' })).toBe(1);
    expect(scheduler.nextDueAt('site_x')).toBe(due + MINUTE);
    await scheduler.stop();
  });

  it('queues every slot before the claimed instant in one tick, a late one and the next alike', async () => {
    // A tick late under load: the site's slot passed, and its next one falls inside the claim too. The next
    // tick may find the shard held elsewhere, resuming where this claim ended: a slot left would be lost.
    const { clock, scheduler } = scheduled();
    const due = scheduler.nextDueAt('site_x')!;
    clock.set(new Date(due + 500));
    expect(scheduler.tick(1_000, { until: due + MINUTE + 1, accept: () => true })).toBe(2);
    expect(scheduler.nextDueAt('site_x')).toBe(due + 2 * MINUTE);
    await scheduler.stop();
  });

  it('after a stall, probes once, late, for the latest slot passed, not each one missed', async () => {
    const { clock, probed, scheduler } = scheduled();
    const due = scheduler.nextDueAt('site_x')!;
    clock.set(new Date(due + 3 * MINUTE + 10));
    expect(await scheduler.runDue()).toBe(1);
    expect(await scheduler.runDue()).toBe(0);
    expect(probed).toEqual([due + 3 * MINUTE]);
    expect(scheduler.nextDueAt('site_x')).toBe(due + 4 * MINUTE);
  });
});

describe('probing loopback targets', () => {
  let t: UptimeTestApp;
  let target: Awaited<ReturnType<typeof startTarget>>;

  beforeEach(async () => {
    t = await createUptimeTestApp({ uptime: { defaultTimeoutMs: 400, maxBodyBytes: 4096 } });
    target = await startTarget();
  });
  afterEach(async () => {
    await t.stop();
    await target.close();
  });

  const lastCause = async (siteId: string) => (await t.services.uptime.report(siteId)).recentProbes[0]?.cause;

  it('records an answering site as up with its status and response time', async () => {
    const siteId = await t.addSite(target.url);
    expect(await t.probeNext(siteId)).toBe(1);
    const report = await t.services.uptime.report(siteId);
    expect(report).toMatchObject({
      status: 'up',
      since: t.clock.now().toISOString(),
      lastCheckedAt: t.clock.now().toISOString(),
      certificate: null,
    });
    expect(report.recentProbes).toEqual([
      { at: t.clock.now().toISOString(), up: true, httpStatus: 200, responseTimeMs: expect.any(Number), cause: null },
    ]);
    expect(target.hits).toBe(1);
  });

  it('gives each kind of failure its cause', async () => {
    const siteId = await t.addSite(target.url);
    target.hang();
    await t.probeNext(siteId);
    expect(await lastCause(siteId)).toBe('timeout');

    target.answer(503);
    await t.probeNext(siteId);
    expect(await lastCause(siteId)).toBe('http_status');

    target.answer(200, 'x'.repeat(5000));
    await t.probeNext(siteId);
    expect(await lastCause(siteId)).toBe('body_too_large');

    target.answer(200, 'Welcome');
    expect(
      (await t.call('PATCH', `/api/sites/${siteId}`, { json: { monitoring: { keyword: { text: 'Hello' } } } })).status,
    ).toBe(200);
    await t.probeNext(siteId);
    expect(await lastCause(siteId)).toBe('keyword');
    target.answer(200, 'Hello, maintenance mode');
    await t.call('PATCH', `/api/sites/${siteId}`, {
      json: { monitoring: { keyword: { text: 'maintenance', mode: 'absent' } } },
    });
    await t.probeNext(siteId);
    expect(await lastCause(siteId)).toBe('keyword');

    const refused = await t.addSite(`http://127.0.0.1:${await freePort()}`);
    await t.probeNext(refused);
    expect(await lastCause(refused)).toBe('connect');

    const plain = await t.addSite(target.url.replace('http://', 'https://'));
    target.answer(200);
    await t.probeNext(plain);
    expect(await lastCause(plain)).toBe('tls');

    expect(causeOf(Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.invalid'), { code: 'ENOTFOUND' }))).toBe(
      'dns',
    );
  });

  it('follows redirects and accepts only the expected statuses when set', async () => {
    const siteId = await t.addSite(target.url);
    target.answer(404, 'gone');
    await t.call('PATCH', `/api/sites/${siteId}`, { json: { monitoring: { expectedStatus: [404] } } });
    await t.probeNext(siteId);
    expect((await t.services.uptime.report(siteId)).recentProbes[0]).toMatchObject({ up: true, httpStatus: 404 });
  });

  it('opens exactly one downtime event for an outage and closes it with the right duration', async () => {
    const siteId = await t.addSite(target.url);
    await t.probeNext(siteId);
    target.answer(500);
    await t.probeNext(siteId);
    const firstFailure = t.clock.now().getTime();
    expect((await statusOf(t.services.uptime, siteId))?.status).toBe('up');
    // The unconfirmed failure is re-checked after 5 s rather than a whole interval later.
    expect(t.services.uptime.nextDueAt(siteId)).toBe(firstFailure + 5000);
    await t.probeNext(siteId);
    expect(await statusOf(t.services.uptime, siteId)).toMatchObject({
      status: 'down',
      since: new Date(firstFailure).toISOString(),
    });
    for (let i = 0; i < 3; i++) await t.probeNext(siteId);
    target.answer(200);
    await t.probeNext(siteId);
    const recovered = t.clock.now().getTime();

    expect(t.logs.events('site.down')).toEqual([
      expect.objectContaining({
        siteId,
        cause: 'http_status',
        firstFailureAt: new Date(firstFailure).toISOString(),
        level: 'error',
      }),
    ]);
    expect(t.logs.events('site.up')).toEqual([
      expect.objectContaining({ siteId, downtimeMs: recovered - firstFailure }),
    ]);
    const events = await t.call('GET', `/api/sites/${siteId}/uptime/downtime`, { token: t.readToken });
    expect(events.status).toBe(200);
    expect(events.json).toEqual({
      items: [
        {
          id: expect.any(String),
          startedAt: new Date(firstFailure).toISOString(),
          endedAt: new Date(recovered).toISOString(),
          durationMs: recovered - firstFailure,
          ongoing: false,
          cause: 'http_status',
        },
      ],
      nextCursor: null,
    });
  });

  it('does not open an event for a single blip', async () => {
    const siteId = await t.addSite(target.url);
    await t.probeNext(siteId);
    target.answer(502);
    await t.probeNext(siteId);
    target.answer(200);
    await t.probeNext(siteId);
    await t.probeNext(siteId);
    expect((await statusOf(t.services.uptime, siteId))?.status).toBe('up');
    expect(t.logs.events('site.down')).toEqual([]);
    expect((await t.call('GET', `/api/sites/${siteId}/uptime/downtime`)).json.items).toEqual([]);
  });

  it('pages downtime events newest first and filters them by time', async () => {
    const siteId = await t.addSite(target.url);
    const starts: number[] = [];
    for (let outage = 0; outage < 3; outage++) {
      target.answer(500);
      await t.probeNext(siteId);
      starts.push(t.clock.now().getTime());
      await t.probeNext(siteId);
      target.answer(200);
      await t.probeNext(siteId);
      t.clock.advance(60 * MINUTE);
    }
    const first = await t.call('GET', `/api/sites/${siteId}/uptime/downtime?limit=2`);
    expect(first.json.items.map((event: { startedAt: string }) => event.startedAt)).toEqual(
      [starts[2], starts[1]].map((ms) => new Date(ms!).toISOString()),
    );
    const second = await t.call('GET', `/api/sites/${siteId}/uptime/downtime?limit=2&cursor=${first.json.nextCursor}`);
    expect(second.json).toEqual({
      items: [expect.objectContaining({ startedAt: new Date(starts[0]!).toISOString() })],
      nextCursor: null,
    });
    const ranged = await t.call(
      'GET',
      `/api/sites/${siteId}/uptime/downtime?from=${new Date(starts[1]! - 1000).toISOString()}&to=${new Date(starts[1]! + 1000).toISOString()}`,
    );
    expect(ranged.json.items.map((event: { startedAt: string }) => event.startedAt)).toEqual([
      new Date(starts[1]!).toISOString(),
    ]);
    expect(
      (await t.call('GET', `/api/sites/${siteId}/uptime/downtime?from=2026-05-01T00:00:00Z&to=2026-04-01T00:00:00Z`))
        .json.type,
    ).toBe('/problems/invalid-time-range');
    expect((await t.call('GET', `/api/sites/${siteId}/uptime/downtime?cursor=bm9wZQ`)).json.type).toBe(
      '/problems/invalid-cursor',
    );
  });

  it('does not probe paused, pending or deleted sites', async () => {
    const paused = await t.addSite(target.url);
    const pending = await t.addSite(`${target.url}/pending`, 'pending');
    const deleted = await t.addSite(`${target.url}/deleted`);
    const pausing = await t.call('PATCH', `/api/sites/${paused}`, { json: { monitoring: { paused: true } } });
    expect(pausing.json.monitoring).toEqual({
      intervalSeconds: 60,
      timeoutMs: 400,
      expectedStatus: null,
      keyword: null,
      paused: true,
    });
    expect((await t.call('DELETE', `/api/sites/${deleted}`)).status).toBe(204);
    expect(
      t.services.uptime.isScheduled(paused) ||
        t.services.uptime.isScheduled(pending) ||
        t.services.uptime.isScheduled(deleted),
    ).toBe(false);
    t.clock.advance(10 * MINUTE);
    expect(await t.services.uptime.runDue()).toBe(0);
    expect(target.hits).toBe(0);
    expect(await statusOf(t.services.uptime, paused)).toMatchObject({ status: 'unknown', paused: true });

    await t.call('PATCH', `/api/sites/${paused}`, { json: { monitoring: { paused: false } } });
    await t.probeNext(paused);
    expect(target.hits).toBe(1);
  });

  it('does not start monitoring a site removed while its monitor was being read', async () => {
    const siteId = await t.addSite(target.url, 'pending');
    t.services.lifecycle.connected({ id: siteId, url: target.url });
    t.services.lifecycle.removed(siteId);
    await t.services.uptime.settled();
    expect(t.services.uptime.isScheduled(siteId)).toBe(false);
    expect(await statusOf(t.services.uptime, siteId)).toBeNull();
  });

  it('stops a deleted site’s probe that was already running from counting', async () => {
    const siteId = await t.addSite(target.url);
    target.hang();
    const due = t.services.uptime.nextDueAt(siteId)!;
    t.clock.set(new Date(due));
    const running = t.services.uptime.runDue();
    while (target.hits === 0) await new Promise((resolve) => setImmediate(resolve));
    await t.call('DELETE', `/api/sites/${siteId}`);
    await running;
    await t.services.uptime.flush();
    expect(await statusOf(t.services.uptime, siteId)).toBeNull();
    expect(t.database.sqlite.prepare('select count(*) as n from uptime_probes').get()).toEqual({ n: 0 });
  });

  it('validates monitoring settings and documents them', async () => {
    const siteId = await t.addSite(target.url);
    const tooLong = await t.call('PATCH', `/api/sites/${siteId}`, {
      json: { monitoring: { intervalSeconds: 10, timeoutMs: 20_000 } },
    });
    expect(tooLong.status).toBe(400);
    expect(tooLong.json.errors).toEqual([expect.objectContaining({ field: 'monitoring.timeoutMs' })]);
    const bad = await t.call('PATCH', `/api/sites/${siteId}`, {
      json: { monitoring: { intervalSeconds: 1, expectedStatus: [99], colour: 'red' } },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.type).toBe('/problems/validation-failed');
    expect(
      (await t.call('PATCH', `/api/sites/${siteId}`, { json: { monitoring: { paused: true } }, token: t.readToken }))
        .status,
    ).toBe(403);
    expect(
      (await t.call('PATCH', '/api/sites/site_00000000000000000000000000', { json: { monitoring: { paused: true } } }))
        .status,
    ).toBe(404);
    expect((await t.call('GET', '/api/sites/site_00000000000000000000000000/uptime')).json.type).toBe(
      '/problems/site-not-found',
    );

    const changed = await t.call('PATCH', `/api/sites/${siteId}`, {
      json: { monitoring: { intervalSeconds: 300, timeoutMs: 5000 } },
    });
    expect(changed.json.monitoring).toMatchObject({ intervalSeconds: 300, timeoutMs: 5000 });
    const due = t.services.uptime.nextDueAt(siteId)!;
    expect(due - t.clock.now().getTime()).toBeLessThan(300_000);
    expect(due % 300_000).toBe(siteOffsetMs(siteId, 300_000, 1));
    const reset = await t.call('PATCH', `/api/sites/${siteId}`, { json: { monitoring: { intervalSeconds: null } } });
    expect(reset.json.monitoring.intervalSeconds).toBe(60);

    const doc = (await t.call('GET', '/api/openapi.json')).json;
    expect(doc.paths['/sites/{id}'].patch.requestBody.content['application/json'].schema.$ref).toBe(
      '#/components/schemas/UpdateSiteInput',
    );
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/sites/{siteId}/uptime', '/sites/{siteId}/uptime/downtime']),
    );
    expect(doc.components.schemas.MonitoringSettingsInput.properties).toHaveProperty('keyword');
  });

  it('shows the uptime status in the site list from memory', async () => {
    const up = await t.addSite(target.url);
    const pending = await t.addSite(`${target.url}/pending`, 'pending');
    await t.probeNext(up);
    const list = await t.call('GET', '/api/sites');
    const byId = Object.fromEntries(
      list.json.items.map((item: { id: string; status: unknown }) => [item.id, item.status]),
    );
    expect(byId[up].uptime).toEqual({
      status: 'up',
      since: t.clock.now().toISOString(),
      lastCheckedAt: t.clock.now().toISOString(),
      responseTimeMs: expect.any(Number),
      paused: false,
    });
    expect(byId[pending].uptime).toBeNull();
    expect((await t.call('GET', `/api/sites/${up}`)).json.status.uptime.status).toBe('up');
  });
});
