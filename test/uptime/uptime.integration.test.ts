import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestSite, type TestSite } from '../support/wordpress/index.js';
import { createUptimeTestApp, type UptimeTestApp } from '../support/uptime.js';

describe('uptime of a real WordPress site', () => {
  let site: TestSite;
  let t: UptimeTestApp;
  let siteId: string;

  beforeAll(async () => {
    site = await createTestSite();
    // Half past an hour already gone: the probes below then land in one hour of the history,
    // whenever the test runs (from the real time, its probes crossed an hour near the hour).
    const hour = 3_600_000;
    t = await createUptimeTestApp({ start: new Date(Math.floor(Date.now() / hour) * hour - hour / 2) });
    const { username, applicationPassword } = site.admin;
    const connected = await t.call('POST', '/api/sites', { json: { url: site.url, username, applicationPassword } });
    expect(connected.status, connected.text).toBe(201);
    siteId = connected.json.id;
  });
  afterAll(async () => {
    await t?.stop();
    await site?.stop();
  });

  it('starts monitoring a site as soon as it is connected and answers from real probes', async () => {
    expect(t.services.uptime.isScheduled(siteId)).toBe(true);
    const blogname = String(await site.option('blogname'));
    const patched = await t.call('PATCH', `/api/sites/${siteId}`, {
      json: { monitoring: { keyword: { text: blogname } } },
    });
    expect(patched.status, patched.text).toBe(200);
    await t.probeNext(siteId);
    await t.probeNext(siteId);
    const checkedAt = t.clock.now().toISOString();

    const uptime = await t.call('GET', `/api/sites/${siteId}/uptime`, { token: t.readToken });
    expect(uptime.status).toBe(200);
    expect(uptime.json).toMatchObject({
      siteId,
      status: 'up',
      lastCheckedAt: checkedAt,
      uptimePercent: { last24h: 100, last7d: 100, last30d: 100 },
      certificate: null,
    });
    expect(uptime.json.monitoring).toEqual({
      intervalSeconds: 60,
      timeoutMs: 10_000,
      expectedStatus: null,
      keyword: { text: blogname, mode: 'present' },
      paused: false,
    });
    expect(uptime.json.recentProbes).toHaveLength(2);
    expect(uptime.json.recentProbes[0]).toEqual({
      at: checkedAt,
      up: true,
      httpStatus: 200,
      responseTimeMs: expect.any(Number),
      cause: null,
    });
    expect(uptime.json.hourly).toEqual([expect.objectContaining({ up: 2, down: 0 })]);

    const listed = (await t.call('GET', '/api/sites')).json.items[0];
    expect(listed.status.uptime).toMatchObject({
      status: 'up',
      lastCheckedAt: checkedAt,
      responseTimeMs: uptime.json.lastResponseTimeMs,
    });
    expect((await t.call('GET', `/api/sites/${siteId}/uptime/downtime`)).json).toEqual({ items: [], nextCursor: null });
  });

  it('records the outage when the site stops answering', async () => {
    await site.stop();
    await t.probeNext(siteId);
    const firstFailure = t.clock.now().toISOString();
    await t.probeNext(siteId);

    const uptime = (await t.call('GET', `/api/sites/${siteId}/uptime`)).json;
    expect(uptime).toMatchObject({ status: 'down', since: firstFailure });
    expect(uptime.recentProbes[0]).toMatchObject({ up: false, cause: 'connect', httpStatus: null });
    const downtime = (await t.call('GET', `/api/sites/${siteId}/uptime/downtime`)).json;
    expect(downtime.items).toEqual([
      expect.objectContaining({ startedAt: firstFailure, endedAt: null, ongoing: true, cause: 'connect' }),
    ]);
    expect(t.logs.events('site.down')).toEqual([
      expect.objectContaining({ siteId, cause: 'connect', firstFailureAt: firstFailure }),
    ]);
  });
});
