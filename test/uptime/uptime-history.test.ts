import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSiteLifecycle } from '../../src/sites/site-lifecycle.js';
import { createProber } from '../../src/uptime/prober.js';
import { DEFAULT_UPTIME_CONFIG } from '../../src/uptime/uptime.config.js';
import { createUptimeRepository } from '../../src/uptime/uptime.repository.js';
import { createUptimeService } from '../../src/uptime/uptime.service.js';
import { startFakeSite } from '../support/fake-wordpress/index.js';
import { makeTestAuthority } from '../support/tls-certificates.js';
import { createUptimeTestApp, statusOf, type UptimeTestApp } from '../support/uptime.js';
import { loopbackNetwork } from '../support/network.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

async function switchableTarget() {
  const control = { up: true, hits: 0 };
  const site = await startFakeSite((_req, res) => {
    control.hits++;
    res.statusCode = control.up ? 200 : 500;
    res.end(control.up ? 'fine' : 'broken');
  });
  return Object.assign(control, site);
}

describe('uptime history', () => {
  let t: UptimeTestApp;
  let target: Awaited<ReturnType<typeof switchableTarget>>;
  const count = (table: string) =>
    (t.database.sqlite.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n;

  beforeEach(async () => {
    t = await createUptimeTestApp({
      uptime: { confirmations: 1, rawRetentionHours: 1 },
      start: new Date('2026-03-02T10:00:00Z'),
    });
    target = await switchableTarget();
  });
  afterEach(async () => {
    await t.stop();
    await target.close();
  });

  /** One probe a minute through hours 10:00 and 11:00: every 4th of the first hour fails. */
  async function twoKnownHours(siteId: string) {
    for (let i = 0; i < 120; i++) {
      target.up = !(i < 60 && i % 4 === 0);
      await t.probeNext(siteId);
    }
    target.up = true;
  }

  it('computes uptime percentages over 24 hours, 7 and 30 days from a known history', async () => {
    const siteId = await t.addSite(target.url);
    await twoKnownHours(siteId);
    expect(target.hits).toBe(120);
    const repository = createUptimeRepository(t.state);
    const older = (bucket: number, up: number, down: number) => ({
      siteId,
      bucket,
      up,
      down,
      responseSum: 0,
      responseCount: 0,
      responseMin: null,
      responseMax: null,
    });
    const today = Date.parse('2026-03-02T00:00:00Z');
    await repository.addHourly(
      [older(today - 3 * DAY, 0, 60), older(today - 10 * DAY, 60, 0), older(today - 40 * DAY, 0, 60)],
      0,
    );

    const open = await t.services.uptime.report(siteId);
    expect(open.uptimePercent).toEqual({ last24h: 87.5, last7d: 58.33, last30d: 68.75 });

    t.clock.set(new Date('2026-03-02T12:05:00Z'));
    await t.services.uptime.maintain();
    // Two closed hours and the two older rows inside the hourly retention; the 40-day-old one is pruned.
    expect(count('uptime_hourly')).toBe(4);
    const closed = await t.services.uptime.report(siteId);
    expect(closed.uptimePercent).toEqual(open.uptimePercent);
    expect(closed.hourly).toEqual([
      {
        hour: '2026-03-02T10:00:00.000Z',
        up: 45,
        down: 15,
        responseTimeMs: { avg: expect.any(Number), min: expect.any(Number), max: expect.any(Number) },
      },
      {
        hour: '2026-03-02T11:00:00.000Z',
        up: 60,
        down: 0,
        responseTimeMs: expect.objectContaining({ avg: expect.any(Number) }),
      },
    ]);
    expect(closed.recentProbes).toHaveLength(10);
  });

  it('prunes raw probes after their window while the roll-ups keep the percentages and the long history', async () => {
    const siteId = await t.addSite(target.url);
    await twoKnownHours(siteId);
    const before = (await t.services.uptime.report(siteId)).uptimePercent;
    await t.services.uptime.flush();
    expect(count('uptime_probes')).toBe(120);

    t.clock.set(new Date('2026-03-02T13:30:00Z'));
    const result = await t.services.uptime.maintain();
    expect(result.rawPruned).toBe(120);
    expect(count('uptime_probes')).toBe(0);
    expect((await t.services.uptime.report(siteId)).uptimePercent).toEqual(before);

    t.clock.set(new Date('2026-03-03T00:10:00Z'));
    await t.services.uptime.maintain();
    expect(
      t.database.sqlite.prepare('select bucket, up, down from uptime_daily where site_id = ?').all(siteId),
    ).toEqual([{ bucket: Date.parse('2026-03-02T00:00:00Z'), up: 105, down: 15 }]);

    // Past the hourly retention only the daily roll-up remains; nothing grows without bound.
    t.clock.set(new Date('2026-04-10T00:10:00Z'));
    await t.services.uptime.maintain();
    expect(count('uptime_hourly')).toBe(0);
    expect(count('uptime_daily')).toBe(1);
    t.clock.set(new Date('2027-05-01T00:10:00Z'));
    await t.services.uptime.maintain();
    expect(count('uptime_daily')).toBe(0);
  });

  it('keeps rows small: roll-ups are WITHOUT ROWID tables', () => {
    for (const table of ['uptime_hourly', 'uptime_daily']) {
      expect(
        (t.database.sqlite.prepare('select sql from sqlite_master where name = ?').get(table) as { sql: string }).sql,
      ).toMatch(/WITHOUT ROWID/i);
    }
  });

  it('after a restart keeps the status and the open outage, and probes every site again within one interval on its slot', async () => {
    const siteId = await t.addSite(target.url);
    await t.probeNext(siteId);
    target.up = false;
    await t.probeNext(siteId);
    const downSince = t.clock.now().getTime();
    const slot = t.services.uptime.nextDueAt(siteId)! % MINUTE;
    await t.services.uptime.stop();

    t.clock.advance(7 * MINUTE + 1234);
    const restarted = createUptimeService({
      repository: createUptimeRepository(t.state),
      sitesRepository: t.services.sitesRepository,
      lifecycle: createSiteLifecycle(),
      prober: createProber({ network: loopbackNetwork, maxBodyBytes: 4096, userAgent: 'test' }),
      clock: t.clock,
      logger: t.logs.logger,
      events: t.services.events,
      config: { ...DEFAULT_UPTIME_CONFIG, confirmations: 1 },
    });
    try {
      await restarted.start();
      expect(await statusOf(restarted, siteId)).toMatchObject({
        status: 'down',
        since: new Date(downSince).toISOString(),
        lastCheckedAt: new Date(downSince).toISOString(),
      });
      const due = restarted.nextDueAt(siteId)!;
      expect(due - t.clock.now().getTime()).toBeLessThan(MINUTE);
      expect(due % MINUTE).toBe(slot);

      target.up = true;
      t.clock.set(new Date(due));
      await restarted.runDue();
      await restarted.flush();
      expect(
        t.database.sqlite.prepare('select started_at as startedAt, ended_at as endedAt from downtime_events').all(),
      ).toEqual([{ startedAt: downSince, endedAt: due }]);
      expect(t.logs.events('site.up')).toEqual([expect.objectContaining({ downtimeMs: due - downSince })]);
      expect(t.logs.events('site.down')).toHaveLength(1);
    } finally {
      await restarted.stop();
    }
  });
});

describe('https certificates', () => {
  it('records the certificate’s expiry and reports one that expires soon, once', async () => {
    const authority = makeTestAuthority();
    const { key, cert } = authority.issue('127.0.0.1', { days: 5 });
    const server = createServer({ key, cert }, (_req, res) => res.end('secure'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const t = await createUptimeTestApp({ start: new Date() });
    const service = createUptimeService({
      repository: createUptimeRepository(t.state),
      sitesRepository: t.services.sitesRepository,
      lifecycle: t.services.lifecycle,
      prober: createProber({ network: loopbackNetwork, maxBodyBytes: 4096, userAgent: 'test', ca: authority.ca }),
      clock: t.clock,
      logger: t.logs.logger,
      events: t.services.events,
      config: DEFAULT_UPTIME_CONFIG,
    });
    try {
      await service.start();
      const siteId = await t.addSite(url);
      for (let i = 0; i < 2; i++) {
        t.clock.set(new Date(service.nextDueAt(siteId)!));
        await service.runDue();
      }
      const report = await service.report(siteId);
      expect(report.recentProbes[0]).toMatchObject({ up: true, httpStatus: 200 });
      expect(report.certificate).toMatchObject({ daysLeft: expect.any(Number), expiringSoon: true });
      expect(report.certificate!.daysLeft).toBeGreaterThanOrEqual(3);
      expect(report.certificate!.daysLeft).toBeLessThanOrEqual(5);
      expect(t.logs.events('site.certificate_expiring')).toEqual([
        expect.objectContaining({
          siteId,
          daysLeft: report.certificate!.daysLeft,
          expiresAt: report.certificate!.expiresAt,
        }),
      ]);
    } finally {
      await service.stop();
      await t.stop();
      server.close();
      authority.remove();
    }
  });
});
