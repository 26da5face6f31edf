import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { StateDatabase } from '../../src/db/state-db.js';
import { createEvents } from '../../src/shared/event-bus.js';
import { createFakeClock, systemClock, type Clock } from '../../src/shared/clock.js';
import { createSiteLifecycle } from '../../src/sites/site-lifecycle.js';
import { createSitesRepository } from '../../src/sites/sites.repository.js';
import type { ProbeSettings } from '../../src/uptime/prober.js';
import { DEFAULT_UPTIME_CONFIG } from '../../src/uptime/uptime.config.js';
import { createUptimeRepository } from '../../src/uptime/uptime.repository.js';
import { createUptimeService } from '../../src/uptime/uptime.service.js';
import { stateDatabaseFor } from '../support/dialects.js';
import { statusOf } from '../support/uptime.js';

/**
 * Uptime in a cluster (issue 34), on PostgreSQL: uptime services as separate processes would make them, on one
 * database. Two workers share the shards (the second joining while the first probes), and an API service that
 * never starts probing answers statuses and reports from the database and changes a site's settings, which the
 * worker holding it follows. The probes are a fake prober's, timed by the real clock and scheduler.
 */
const INTERVAL_MS = 10_000;
const LEASE_MS = 6_000;
/** A worker's reconciliation comes a third of a lease apart; what it follows is in effect by then (plus a slot's start slice). */
const FOLLOW_MS = LEASE_MS / 3 + 1_000;
const HOUR = 3_600_000;

interface Probed {
  url: string;
  at: number;
  worker: string;
}

describe('uptime in a cluster', () => {
  const state = stateDatabaseFor('postgres', 'cluster-uptime');

  function uptimeService(
    workerId: string,
    { clock = systemClock, probed }: { clock?: Clock; probed?: Probed[] } = {},
  ): ReturnType<typeof createUptimeService> {
    const db: StateDatabase = state();
    return createUptimeService({
      repository: createUptimeRepository(db),
      sitesRepository: createSitesRepository(db),
      lifecycle: createSiteLifecycle(),
      prober: {
        probe: async (settings: ProbeSettings) => {
          probed?.push({ url: settings.url, at: Date.now(), worker: workerId });
          return { up: true, httpStatus: 200, responseMs: 40, cause: null, certificateExpiresAt: null };
        },
        close: async () => undefined,
      },
      clock,
      logger: pino({ level: 'silent' }),
      events: createEvents(),
      config: { ...DEFAULT_UPTIME_CONFIG, defaultIntervalSeconds: INTERVAL_MS / 1000, defaultTimeoutMs: 5_000 },
      cluster: { state: db, workerId, leaseMs: LEASE_MS },
    });
  }

  async function addSites(ids: readonly string[], at: Date) {
    const sites = createSitesRepository(state());
    for (const id of ids)
      await sites.insert({
        id,
        url: `http://${id}.test`,
        restUrl: `http://${id}.test/wp-json/`,
        state: 'connected',
        createdAt: at,
        updatedAt: at,
        connectedAt: at,
      });
  }

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it(
    'probes every site once a slot across two workers as they share the shards, and follows changes made elsewhere',
    { timeout: 60_000 },
    async () => {
      const ids = Array.from({ length: 30 }, (_, i) => `site_${String(i).padStart(2, '0')}`);
      await addSites(ids, new Date());
      const probed: Probed[] = [];
      const api = uptimeService('api');
      const a = uptimeService('a', { probed });
      const b = uptimeService('b', { probed });
      const ticking = new Set<ReturnType<typeof uptimeService>>();
      const ticker = setInterval(() => {
        for (const worker of ticking) worker.tick();
      }, 1_000);
      try {
        const started = Date.now();
        await a.start();
        ticking.add(a);
        await sleep(3_000);
        await b.start();
        ticking.add(b);
        await sleep(5_000);

        // Through the API process (news only in the database): one site removed and one connected, which the
        // workers read in a new digest of the connected sites; then one paused, the same sites, read as a change.
        const [paused, removed] = [ids[3]!, ids[4]!];
        await createSitesRepository(state()).delete(removed);
        await addSites(['site_new'], new Date());
        const changedAt = Date.now();
        await sleep(FOLLOW_MS + 500);
        await (
          await api.prepareSettings(paused, { paused: true })
        )();
        const pausedAt = Date.now();
        await sleep(26_000 - (Date.now() - started));
        ticking.clear();
        await Promise.all([a.stop(), b.stop()]);

        const times = (id: string) => probed.filter((p) => p.url === `http://${id}.test`).map((p) => p.at);
        // Every slot of every site kept all along, once, whichever worker held it: before, while and after
        // the second worker took its share.
        for (const id of ids.filter((id) => id !== paused && id !== removed)) {
          const at = times(id);
          expect(at.length, id).toBeGreaterThanOrEqual(2);
          for (let i = 1; i < at.length; i++) {
            expect(at[i]! - at[i - 1]!, `${id}: probes ${i - 1} and ${i}`).toBeGreaterThan(INTERVAL_MS - 1_000);
            expect(at[i]! - at[i - 1]!, `${id}: probes ${i - 1} and ${i}`).toBeLessThan(INTERVAL_MS + 1_000);
          }
        }
        expect(new Set(probed.map((p) => p.worker))).toEqual(new Set(['a', 'b']));
        expect(probed.filter((p) => p.worker === 'b' && p.at < started + 3_000)).toEqual([]);
        expect(times(paused).filter((at) => at > pausedAt + FOLLOW_MS)).toEqual([]);
        expect(times(removed).filter((at) => at > changedAt + FOLLOW_MS)).toEqual([]);
        expect(times('site_new').length).toBeGreaterThanOrEqual(1);

        // What the API process answers, from the database.
        const status = await statusOf(api, ids[0]!);
        expect(status).toMatchObject({ status: 'up', paused: false, responseTimeMs: 40 });
        expect(Date.parse(status!.lastCheckedAt!)).toBeGreaterThan(started);
        expect(await statusOf(api, paused)).toMatchObject({ paused: true });
        expect(await statusOf(api, removed)).toBeNull();
        const report = await api.report(ids[0]!);
        expect(report.recentProbes).toHaveLength(times(ids[0]!).length);
        expect(report.hourly.reduce((sum, hour) => sum + hour.up, 0)).toBe(times(ids[0]!).length);
        expect(report.uptimePercent.last24h).toBe(100);
      } finally {
        clearInterval(ticker);
        await Promise.all([a.stop(), b.stop(), api.stop()]);
      }
    },
  );

  it('closes the hours from the raw probes that every worker wrote, and reports across the mark', async () => {
    const t0 = Date.UTC(2026, 10, 30, 8);
    const clock = createFakeClock(new Date(t0 + 2 * HOUR + 5 * 60_000));
    await addSites(['site_h'], new Date(t0));
    const repository = createUptimeRepository(state());
    await repository.ensureMonitor('site_h', t0);
    const probe = (at: number, up: boolean) => ({
      siteId: 'site_h',
      at,
      up,
      httpStatus: up ? 200 : 500,
      responseMs: up ? 50 : null,
      cause: up ? null : 'status',
      certificateExpiresAt: null,
    });
    // Two workers' probes of the first hour, one's of the second, and the open third.
    await repository.insertProbes([probe(t0 + 60_000, true), probe(t0 + 120_000, false)]);
    await repository.insertProbes([probe(t0 + 30 * 60_000, true), probe(t0 + HOUR + 60_000, true)]);
    await repository.insertProbes([probe(t0 + 2 * HOUR + 60_000, true)]);
    const api = uptimeService('api', { clock });
    const before = await api.report('site_h');
    const result = await api.maintain();
    expect(result.hoursClosed).toBeGreaterThanOrEqual(2);
    expect(await repository.mark('hourly')).toBe(t0 + 2 * HOUR);
    expect((await repository.hourly('site_h', t0)).map((row) => [row.bucket, row.up, row.down])).toEqual([
      [t0, 2, 1],
      [t0 + HOUR, 1, 0],
    ]);
    // The same report before and after the hours were closed: nothing counted twice or lost at the mark.
    const after = await api.report('site_h');
    expect(after.hourly).toEqual(before.hourly);
    expect(after.uptimePercent).toEqual(before.uptimePercent);
    expect(after.hourly.map((hour) => [hour.up, hour.down])).toEqual([
      [2, 1],
      [1, 0],
      [1, 0],
    ]);
    expect(after.uptimePercent.last24h).toBe(80);
    // An hour written past the mark the report read (maintenance closing it between the report's reads) counts once.
    await repository.addHourly(
      [
        {
          siteId: 'site_h',
          bucket: t0 + 2 * HOUR,
          up: 1,
          down: 0,
          responseSum: 50,
          responseCount: 1,
          responseMin: 50,
          responseMax: 50,
        },
      ],
      t0 + 2 * HOUR,
    );
    expect((await api.report('site_h')).hourly).toEqual(after.hourly);
    expect((await api.report('site_h')).uptimePercent).toEqual(after.uptimePercent);
    await api.stop();
  });
});
