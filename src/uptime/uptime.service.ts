import type { Logger } from 'pino';
import type { Clock } from '../shared/clock.js';
import { sitesProblems, type ConnectedSiteNotice, type SiteLifecycle, type SitesRepository } from '../sites/index.js';
import { initialState, type MonitorState, type SiteMonitor } from './monitor-state.js';
import { createMonitoringSettings, settingsOf } from './monitor-settings.js';
import { createProbeRecorder, RECENT_PROBES } from './probe-recorder.js';
import { createProbeWriter } from './probe-writer.js';
import type { Prober } from './prober.js';
import { createHourlyRollups, HOUR_MS, runMaintenance } from './rollups.js';
import type { UptimeConfig } from './uptime.config.js';
import type { UptimeRepository } from './uptime.repository.js';
import { createUptimeReports } from './uptime-reports.js';
import { createUptimeScheduler } from './uptime-scheduler.js';
import type { UptimeMonitorRow } from './uptime.table.js';
import type { Events } from '../shared/event-bus.js';

/**
 * The uptime feature's service, one object composed of its parts: here the monitors held in
 * memory (loaded at start, tracked when a site connects or its settings change, dropped when it is
 * removed), the probes the scheduler runs for them, and the tick, maintenance and stop around
 * them; what a probe's outcome does is probe-recorder.ts, a site's monitoring settings
 * monitor-settings.ts, and what is answered about a site (status, report, downtime) uptime-reports.ts.
 */

const RECENT_REBUILD_WINDOW_MS = 15 * 60_000;

/** What the daemon holds in memory per monitored site; the database has it too, minus the hot part. */
export interface UptimeServiceDeps {
  repository: UptimeRepository;
  sitesRepository: SitesRepository;
  lifecycle: SiteLifecycle;
  prober: Prober;
  clock: Clock;
  logger: Logger;
  events: Events;
  config: UptimeConfig;
  /** Called with each probe's lag behind its due time (ms); the benchmark measures with it. */
  onProbeStart?: (lagMs: number) => void;
  /** Counts probes by outcome and their response times (the daemon's /metrics). */
  metrics?: { observeProbe(outcome: 'up' | 'down', responseMs: number | null): void };
}

export function createUptimeService(deps: UptimeServiceDeps) {
  const { repository, prober, clock, logger, config } = deps;
  const monitors = new Map<string, SiteMonitor>();
  const writer = createProbeWriter({ repository, logger });
  const rollups = createHourlyRollups({ repository });
  const scheduler = createUptimeScheduler({
    clock,
    concurrency: config.concurrency,
    probe: probeSite,
    onStart: deps.onProbeStart,
  });
  const now = () => clock.now().getTime();
  const { record } = createProbeRecorder({ ...deps, writer, rollups, scheduler, now });
  let stopping: Promise<void> | undefined;

  function track(siteId: string, url: string, row: UptimeMonitorRow, state: MonitorState): SiteMonitor {
    const settings = settingsOf(row, config);
    const monitor: SiteMonitor = {
      siteId,
      url,
      settings: {
        url,
        timeoutMs: settings.timeoutMs,
        expectedStatus: settings.expectedStatus,
        keyword: settings.keyword?.text ?? null,
        keywordMode: settings.keyword?.mode ?? 'present',
      },
      intervalMs: settings.intervalSeconds * 1000,
      paused: settings.paused,
      state,
      recent: monitors.get(siteId)?.recent ?? [],
      certificateExpiresAt: row.certificateExpiresAt,
      certificateWarnedFor: row.certificateWarnedFor,
    };
    monitors.set(siteId, monitor);
    if (monitor.paused) scheduler.remove(siteId);
    else scheduler.upsert(siteId, monitor.intervalMs);
    return monitor;
  }

  function untrack(siteId: string): void {
    connecting.delete(siteId);
    scheduler.remove(siteId);
    monitors.delete(siteId);
    writer.forget(siteId);
    rollups.forget(siteId);
  }

  async function probeSite(siteId: string): Promise<void> {
    const monitor = monitors.get(siteId);
    if (!monitor || monitor.paused) return;
    const at = now();
    const outcome = await prober.probe(monitor.settings);
    // Removed, paused or reconfigured while the probe ran: its answer no longer counts.
    if (monitors.get(siteId) !== monitor || monitor.paused) return;
    await record(monitor, at, outcome);
  }

  /**
   * Site notices being handled: a connected site's monitor is read (made if missing) before it is
   * tracked. Its token is dropped when the site is removed meanwhile, and the read then tracks nothing.
   */
  const connecting = new Map<string, object>();
  const noticesInFlight = new Set<Promise<void>>();

  async function connect(site: ConnectedSiteNotice): Promise<void> {
    const token = {};
    connecting.set(site.id, token);
    try {
      const row = await repository.ensureMonitor(site.id, now());
      if (connecting.get(site.id) !== token) return;
      track(site.id, site.url, row, initialState(row.status, row.statusSince));
    } finally {
      if (connecting.get(site.id) === token) connecting.delete(site.id);
    }
  }

  function onConnected(site: ConnectedSiteNotice): void {
    const handled = connect(site).catch((error: unknown) =>
      logger.error({ err: error, siteId: site.id }, 'starting to monitor a connected site failed'),
    );
    noticesInFlight.add(handled);
    void handled.finally(() => noticesInFlight.delete(handled));
  }

  async function requireSite(siteId: string) {
    const site = await deps.sitesRepository.findById(siteId);
    if (!site) throw sitesProblems.notFound.create(`no site has the id ${siteId}`);
    return site;
  }

  const { statusOf, report, downtime } = createUptimeReports({ ...deps, rollups, now, requireSite, monitors });
  const { monitoringSettings, prepareSettings } = createMonitoringSettings({
    ...deps,
    now,
    requireSite,
    monitors,
    track,
  });

  return {
    /** Loads every connected site's monitor, rebuilds the in-memory state and starts listening for site changes. */
    async start(): Promise<void> {
      const at = now();
      for (const { siteId, url, monitor } of await repository.connectedSites(at))
        track(siteId, url, monitor, initialState(monitor.status, monitor.statusSince));
      for (const probe of await repository.probesSince(at - RECENT_REBUILD_WINDOW_MS)) {
        const monitor = monitors.get(probe.siteId);
        if (!monitor) continue;
        monitor.recent.push(probe);
        if (monitor.recent.length > RECENT_PROBES) monitor.recent.shift();
      }
      await rollups.rebuild(at, config.rawRetentionHours * HOUR_MS);
      deps.lifecycle.onConnected(onConnected);
      deps.lifecycle.onRemoved((siteId) => untrack(siteId));
    },

    /**
     * The once-a-second tick: queue what falls due before the next one, write what was probed. The write
     * goes on without the tick (the writer takes one at a time and logs a failure), so a slow one never
     * holds the next tick's probes back.
     */
    tick(): void {
      scheduler.tick();
      void writer.flush();
    },

    /** Runs every probe due now and waits for them (tests, with a fake clock). */
    runDue: () => scheduler.runDue(),
    /** Writes what was probed so far; resolves once it is written. */
    flush: () => writer.flush(),
    /** Resolves once the site notices received so far are handled (a connected site tracked). */
    settled: async (): Promise<void> => void (await Promise.all(noticesInFlight)),
    maintain: async () => {
      await writer.flush();
      return runMaintenance({ repository, rollups, config, now: now(), logger });
    },
    nextDueAt: (siteId: string) => scheduler.nextDueAt(siteId),
    isScheduled: (siteId: string) => scheduler.has(siteId),
    /** Probes waiting for their start or running (metrics, readiness). */
    get pendingProbes() {
      return scheduler.pending;
    },
    get monitoredSites() {
      return monitors.size;
    },

    /** Stops probing and writes what was probed; safe to call more than once. */
    stop(): Promise<void> {
      stopping ??= (async () => {
        await Promise.all(noticesInFlight);
        await scheduler.stop();
        await writer.flush();
        await prober.close();
      })();
      return stopping;
    },

    statusOf,
    report,
    downtime,
    monitoringSettings,
    prepareSettings,
  };
}

export type UptimeService = ReturnType<typeof createUptimeService>;
