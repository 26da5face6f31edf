import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createScheduler } from '../src/jobs/scheduler.js';
import { latestSlot } from '../src/jobs/spread.js';
import { DEFAULT_PERFORMANCE_CONFIG } from '../src/performance/performance.config.js';
import type { ScheduledWorkSwitches } from '../src/config.js';
import { scheduleSiteWork } from '../src/scheduled-work.js';
import { createId } from '../src/shared/ids.js';
import { type TestApp, createFakeClock, createTestApp, insertSiteRow } from './support/test-app.js';

/**
 * SITEWARDEN_SCHEDULED_*: the daemon's scheduler, on a fake clock, with a connected site that
 * answers on loopback. Each kind of scheduled work switched off starts nothing on its own; the
 * others go on, and what the API asks for still runs.
 */
const START = new Date('2026-03-02T10:00:00Z');
const running: { t: TestApp; dataDir: string; stop: () => Promise<void> }[] = [];

async function siteServer(): Promise<{ url: string; hits: () => number; server: Server }> {
  let hits = 0;
  const server = createServer((_request, response) => {
    hits++;
    response.writeHead(503).end('no WordPress here');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`,
    hits: () => hits,
    server,
  };
}

async function daemonScheduler(switches: ScheduledWorkSwitches) {
  const clock = createFakeClock(START);
  const dataDir = mkdtempSync(join(tmpdir(), 'sitewarden-scheduled-'));
  // A scheduled audit fails at once without a browser: what counts here is that it was queued.
  const t = createTestApp({
    clock,
    config: { dataDir, performance: { ...DEFAULT_PERFORMANCE_CONFIG, chromePath: '/nonexistent/chromium' } },
  });
  await t.services.uptime.start();
  const scheduler = createScheduler({ logger: t.logs.logger, clock });
  scheduleSiteWork({ scheduler, services: t.services, switches, logger: t.logs.logger });
  const site = await siteServer();
  const now = clock.now();
  // A site whose daily audit slot does not come within the hour the test runs (ids are random, and one in 24
  // would have it there, a second pair of audits): its scheduled audits are its first ones only.
  const auditIntervalMs = DEFAULT_PERFORMANCE_CONFIG.intervalHours * 3_600_000;
  let siteId: string;
  do siteId = createId('site', now);
  while (latestSlot(siteId, auditIntervalMs, new Date(now.getTime() + 3_600_000)) > now);
  insertSiteRow(t, {
    id: siteId,
    url: site.url,
    restUrl: `${site.url}/wp-json/`,
    state: 'connected',
    username: 'admin',
    credentialSealed: t.services.secrets.seal('xxxx xxxx xxxx xxxx xxxx xxxx'),
    createdAt: now,
    updatedAt: now,
    connectedAt: now,
  });
  t.services.lifecycle.connected({ id: siteId, url: site.url });
  await t.services.uptime.settled();
  running.push({
    t,
    dataDir,
    stop: async () => {
      await scheduler.stop();
      await t.services.uptime.stop();
      await t.services.backups.idle();
      await t.services.performance.stop();
      site.server.close();
    },
  });

  /** An hour of the daemon's ticks, a minute apart (cron stands still under a fake clock: runAll() is each tick). */
  async function anHourPasses() {
    for (let minute = 0; minute < 60; minute++) {
      clock.advance(60_000);
      await scheduler.runAll();
      while (t.services.uptime.pendingProbes > 0) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await t.services.uptime.flush();
  }
  const count = (sql: string) => (t.database.sqlite.prepare(sql).get(siteId) as { n: number }).n;
  const started = () => ({
    uptimeProbes: count('select count(*) as n from uptime_probes where site_id = ?'),
    audits: count("select count(*) as n from performance_audits where site_id = ? and trigger = 'scheduled'"),
    backups: count("select count(*) as n from backups where site_id = ? and kind = 'scheduled'"),
  });
  return { t, siteId, anHourPasses, started, siteHits: site.hits };
}

afterEach(async () => {
  for (const { t, dataDir, stop } of running.splice(0)) {
    await stop();
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

describe('scheduled work', () => {
  it('runs uptime probes, audits and backups on its own by default', async () => {
    expect(loadConfig({}).scheduled).toEqual({ uptimeProbes: true, audits: true, backups: true });
    const daemon = await daemonScheduler(loadConfig({}).scheduled);
    await daemon.anHourPasses();
    const started = daemon.started();
    expect(started.uptimeProbes).toBeGreaterThanOrEqual(55);
    expect(started.audits).toBe(2); // A site never audited is due at once, both form factors.
    expect(started.backups).toBeGreaterThanOrEqual(1);
  });

  it.each([
    ['SITEWARDEN_SCHEDULED_UPTIME_PROBES', 'uptimeProbes'],
    ['SITEWARDEN_SCHEDULED_AUDITS', 'audits'],
    ['SITEWARDEN_SCHEDULED_BACKUPS', 'backups'],
  ] as const)(
    '%s=off stops that kind of scheduled work for every site and leaves the others',
    async (variable, kind) => {
      const switches = loadConfig({ [variable]: 'off' }).scheduled;
      expect(switches).toEqual({ uptimeProbes: true, audits: true, backups: true, [kind]: false });
      const daemon = await daemonScheduler(switches);
      await daemon.anHourPasses();
      const started = daemon.started();
      expect(started[kind]).toBe(0);
      for (const other of (['uptimeProbes', 'audits', 'backups'] as const).filter((name) => name !== kind))
        expect(started[other], other).toBeGreaterThan(0);
    },
  );

  it('with everything switched off, starts nothing on its own, not even a newly connected site’s first audit, and still runs what the API asks for', async () => {
    const daemon = await daemonScheduler(
      loadConfig({
        SITEWARDEN_SCHEDULED_UPTIME_PROBES: 'off',
        SITEWARDEN_SCHEDULED_AUDITS: 'off',
        SITEWARDEN_SCHEDULED_BACKUPS: 'off',
      }).scheduled,
    );
    await daemon.anHourPasses();
    expect(daemon.started()).toEqual({ uptimeProbes: 0, audits: 0, backups: 0 });
    expect(daemon.siteHits()).toBe(0);

    const audit = await daemon.t.call('POST', `/api/sites/${daemon.siteId}/performance`, {
      json: { formFactor: 'mobile' },
    });
    expect(audit.status, audit.text).toBe(202);
    expect(audit.json).toMatchObject({ trigger: 'manual', formFactor: 'mobile' });
    const backup = await daemon.t.call('POST', `/api/sites/${daemon.siteId}/backups`);
    expect(backup.status, backup.text).toBe(202);
    expect(backup.json).toMatchObject({ kind: 'manual' });
    await daemon.t.services.backups.idle();
    await daemon.t.services.performance.idle();
    // Both ran (and failed: the site is no WordPress and there is no browser), rather than waiting for a tick that never comes.
    expect((await daemon.t.call('GET', `/api/sites/${daemon.siteId}/backups/${backup.json.id}`)).json.status).toBe(
      'failed',
    );
    expect((await daemon.t.call('GET', `/api/sites/${daemon.siteId}/performance/${audit.json.id}`)).json.status).toBe(
      'failed',
    );
    expect(daemon.siteHits()).toBeGreaterThan(0);
  });

  it('refuses a switch that is neither on nor off, naming the variable', () => {
    expect(() => loadConfig({ SITEWARDEN_SCHEDULED_AUDITS: 'no' })).toThrow(
      'invalid configuration: SITEWARDEN_SCHEDULED_AUDITS: SITEWARDEN_SCHEDULED_AUDITS must be on or off',
    );
  });
});
