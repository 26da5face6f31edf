import type { Logger } from 'pino';
import type { Clock } from '../shared/clock.js';
import { sitesProblems, type ConnectedSiteNotice, type SiteLifecycle, type SitesRepository } from '../sites/index.js';
import { initialState, type MonitorState, type SiteMonitor } from './monitor-state.js';
import { createMonitoringSettings, settingsOf } from './monitor-settings.js';
import { createProbeRecorder, RECENT_PROBES } from './probe-recorder.js';
import { createProbeWriter } from './probe-writer.js';
import type { Prober } from './prober.js';
import { closeHoursFromProbes, createHourlyRollups, HOUR_MS, runMaintenance } from './rollups.js';
import type { UptimeConfig } from './uptime.config.js';
import type { UptimeRepository } from './uptime.repository.js';
import { createClusterProbing, type ClusterProbing, type UptimeCluster } from './cluster-probing.js';
import { createStoredUptimeReports, createUptimeReports } from './uptime-reports.js';
import { createUptimeScheduler } from './uptime-scheduler.js';
import type { UptimeMonitorRow } from './uptime.table.js';
import type { Events } from '../shared/event-bus.js';

/**
 * The uptime feature's service, one object composed of its parts: here the monitors held in
 * memory (loaded at start, tracked when a site connects or its settings change, dropped when it is
 * removed), the probes the scheduler runs for them, and the tick, maintenance and stop around
 * them; what a probe's outcome does is probe-recorder.ts, a site's monitoring settings
 * monitor-settings.ts, and what is answered about a site (status, report, downtime) uptime-reports.ts.
 *
 * In a cluster (`cluster`, issue 34) the answers come from the database in every process, the hours are
 * rolled up from the raw probes, and `start` (the uptime workers') monitors only the sites of the shards this
 * process leases (cluster-probing.ts); a process that never starts it (an API process) probes nothing.
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
  /** Cluster mode: the database the uptime workers share, and this process's id among them. */
  cluster?: UptimeCluster;
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
  const { record } = createProbeRecorder({
    ...deps,
    writer,
    // In a cluster the hours are rolled up from the raw probes, in the database (rollups.ts, closeHoursFromProbes).
    rollups: deps.cluster ? { add: () => undefined } : rollups,
    scheduler,
    now,
  });
  let stopping: Promise<void> | undefined;
  /** Cluster mode, once started: this uptime worker's shards. */
  let probing: ClusterProbing | undefined;

  /** Puts the site's monitor in memory with these settings; `schedule`: and (un)schedules its probes. */
  function track(
    siteId: string,
    url: string,
    row: UptimeMonitorRow,
    state: MonitorState,
    schedule = true,
  ): SiteMonitor {
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
    if (!schedule) return monitor;
    if (probing) probing.schedule(siteId, monitor.intervalMs, monitor.paused);
    else if (monitor.paused) scheduler.remove(siteId);
    else scheduler.upsert(siteId, monitor.intervalMs);
    return monitor;
  }

  /** Tracks the site where its probes run: here on one machine; in a cluster, if this worker holds its shard. */
  function trackHere(siteId: string, url: string, row: UptimeMonitorRow, state: MonitorState): void {
    if (deps.cluster && !probing?.held(siteId)) return;
    track(siteId, url, row, state);
  }

  function untrack(siteId: string): void {
    connecting.delete(siteId);
    probing?.removed(siteId);
    scheduler.remove(siteId);
    monitors.delete(siteId);
    writer.forget(siteId);
    rollups.forget(siteId);
  }

  function startProbing(cluster: UptimeCluster): ClusterProbing {
    return createClusterProbing({
      cluster,
      repository,
      scheduler,
      clock,
      logger,
      now,
      fingerprint: ({ url, monitor: row }) => JSON.stringify([url, settingsOf(row, config)]),
      track: ({ siteId, url, monitor: row }) => {
        const monitor = track(
          siteId,
          url,
          row,
          monitors.get(siteId)?.state ?? initialState(row.status, row.statusSince),
          false,
        );
        return monitor.paused ? null : { siteId, intervalMs: monitor.intervalMs };
      },
      forget: (siteId) => {
        connecting.delete(siteId);
        monitors.delete(siteId);
      },
    });
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
      trackHere(site.id, site.url, row, initialState(row.status, row.statusSince));
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

  const { statusesOf, report, downtime } = deps.cluster
    ? createStoredUptimeReports({ ...deps, now, requireSite })
    : createUptimeReports({ ...deps, rollups, now, requireSite, monitors });
  const { monitoringSettings, prepareSettings } = createMonitoringSettings({
    ...deps,
    now,
    requireSite,
    monitors,
    track: trackHere,
  });

  return {
    /** Loads every connected site's monitor, rebuilds the in-memory state and starts listening for site changes. */
    async start(): Promise<void> {
      deps.lifecycle.onConnected(onConnected);
      deps.lifecycle.onRemoved((siteId) => untrack(siteId));
      if (deps.cluster) {
        probing = startProbing(deps.cluster);
        return probing.start();
      }
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
    },

    /**
     * The once-a-second tick: queue what falls due before the next one, write what was probed. The write
     * goes on without the tick (the writer takes one at a time and logs a failure), so a slow one never
     * holds the next tick's probes back.
     */
    tick(): void {
      if (probing) probing.tick();
      else if (!deps.cluster) scheduler.tick();
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
      const hours = deps.cluster ? closeHoursFromProbes({ repository, config }) : rollups;
      return runMaintenance({ repository, rollups: hours, config, now: now(), logger });
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
        await probing?.stop();
        await scheduler.stop();
        await writer.flush();
        await prober.close();
      })();
      return stopping;
    },

    statusesOf,
    report,
    downtime,
    monitoringSettings,
    prepareSettings,
  };
}

export type UptimeService = ReturnType<typeof createUptimeService>;
