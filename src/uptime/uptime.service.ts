import type { Logger } from 'pino';
import type { Clock } from '../shared/clock.js';
import { z } from 'zod';
import { commonProblems } from '../shared/errors.js';
import { parseStored } from '../shared/stored-json.js';
import { sitesProblems, type SiteLifecycle, type SitesRepository } from '../sites/index.js';
import { applyProbe, initialState, type MonitorState, type SiteMonitor } from './monitor-state.js';
import { createProbeWriter } from './probe-writer.js';
import type { ProbeOutcome, Prober } from './prober.js';
import { createHourlyRollups, DAY_MS, HOUR_MS, runMaintenance } from './rollups.js';
import type { UptimeConfig } from './uptime.config.js';
import { uptimeProblems } from './uptime.errors.js';
import type { ProbeRow, UptimeRepository } from './uptime.repository.js';
import { createUptimeScheduler } from './uptime-scheduler.js';
import type { MonitoringSettingsPatch, MonitoringSettingsView, SiteUptimeStatus } from './uptime.schemas.js';
import { toDowntimeView, toUptimeReport } from './uptime-view.js';
import type { UptimeMonitorRow } from './uptime.table.js';
import type { Events } from '../shared/event-bus.js';

const RECENT_PROBES = 10;
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
  const { repository, prober, clock, logger, events, config } = deps;
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
  let stopping: Promise<void> | undefined;

  /** What `expectedStatusJson` holds: the statuses the settings route accepted (uptime.schemas.ts). */
  const ExpectedStatus = z.array(z.number().int());

  function settingsOf(row: UptimeMonitorRow | undefined): MonitoringSettingsView {
    return {
      intervalSeconds: row?.intervalSeconds ?? config.defaultIntervalSeconds,
      timeoutMs: row?.timeoutMs ?? config.defaultTimeoutMs,
      expectedStatus: row?.expectedStatusJson
        ? parseStored(ExpectedStatus, row.expectedStatusJson, `the expected statuses of site ${row.siteId}`)
        : null,
      keyword: row?.keyword ? { text: row.keyword, mode: row.keywordMode } : null,
      paused: row?.paused ?? false,
    };
  }

  function track(siteId: string, url: string, row: UptimeMonitorRow, state: MonitorState): SiteMonitor {
    const settings = settingsOf(row);
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
    record(monitor, at, outcome);
  }

  function record(monitor: SiteMonitor, at: number, outcome: ProbeOutcome): void {
    const row: ProbeRow = { siteId: monitor.siteId, at, ...outcome };
    writer.add(row);
    deps.metrics?.observeProbe(outcome.up ? 'up' : 'down', outcome.responseMs);
    rollups.add(monitor.siteId, at, outcome.up, outcome.responseMs);
    monitor.recent.push(row);
    if (monitor.recent.length > RECENT_PROBES) monitor.recent.shift();

    const { state, transition, recheck } = applyProbe(
      monitor.state,
      { at, up: outcome.up, cause: outcome.cause },
      config.confirmations,
    );
    monitor.state = state;
    if (transition?.kind === 'down' || transition?.kind === 'up') writer.supersedeStatus(monitor.siteId);
    if (transition?.kind === 'down') {
      repository.recordTransition(monitor.siteId, {
        status: 'down',
        since: transition.startedAt,
        open: { startedAt: transition.startedAt, cause: transition.cause },
      });
      events.emit('site.down', {
        siteId: monitor.siteId,
        url: monitor.url,
        cause: transition.cause,
        firstFailureAt: new Date(transition.startedAt).toISOString(),
      });
    } else if (transition?.kind === 'up') {
      repository.recordTransition(monitor.siteId, { status: 'up', since: at, closeAt: at });
      events.emit('site.up', {
        siteId: monitor.siteId,
        url: monitor.url,
        downtimeMs: transition.downtimeMs,
        downSince: new Date(transition.downSince).toISOString(),
      });
    } else if (transition?.kind === 'first-up') {
      writer.addStatus({ siteId: monitor.siteId, status: 'up', since: at });
    }
    // From when the failure became known: a probe that timed out has already used up its wait.
    if (recheck) scheduler.recheck(monitor.siteId, now() + config.recheckDelaySeconds * 1000);
    if (outcome.certificateExpiresAt !== null) noteCertificate(monitor, outcome.certificateExpiresAt, at);
  }

  function noteCertificate(monitor: SiteMonitor, expiresAt: number, at: number): void {
    if (expiresAt !== monitor.certificateExpiresAt) {
      monitor.certificateExpiresAt = expiresAt;
      repository.updateMonitor(monitor.siteId, { certificateExpiresAt: expiresAt, updatedAt: at });
    }
    const daysLeft = Math.floor((expiresAt - at) / DAY_MS);
    if (daysLeft < config.certificateWarningDays && monitor.certificateWarnedFor !== expiresAt) {
      monitor.certificateWarnedFor = expiresAt;
      repository.updateMonitor(monitor.siteId, { certificateWarnedFor: expiresAt, updatedAt: at });
      events.emit('site.certificate_expiring', {
        siteId: monitor.siteId,
        url: monitor.url,
        daysLeft,
        expiresAt: new Date(expiresAt).toISOString(),
      });
    }
  }

  function connect(siteId: string): void {
    const site = deps.sitesRepository.findById(siteId);
    if (!site || site.state !== 'connected') return;
    repository.ensureMonitor(siteId, now());
    const row = repository.findMonitor(siteId)!;
    track(siteId, site.url, row, initialState(row.status, row.statusSince));
  }

  function requireSite(siteId: string) {
    const site = deps.sitesRepository.findById(siteId);
    if (!site) throw sitesProblems.notFound.create(`no site has the id ${siteId}`);
    return site;
  }

  function invalid(field: string, message: string) {
    return commonProblems.validation.create(`invalid request body: ${field}: ${message}`, {
      errors: [{ field, in: 'body', message }],
    });
  }

  return {
    /** Loads every connected site's monitor, rebuilds the in-memory state and starts listening for site changes. */
    start(): void {
      const at = now();
      for (const { siteId, url, monitor } of repository.connectedSites(at))
        track(siteId, url, monitor, initialState(monitor.status, monitor.statusSince));
      for (const probe of repository.probesSince(at - RECENT_REBUILD_WINDOW_MS)) {
        const monitor = monitors.get(probe.siteId);
        if (!monitor) continue;
        monitor.recent.push(probe);
        if (monitor.recent.length > RECENT_PROBES) monitor.recent.shift();
      }
      rollups.rebuild(at, config.rawRetentionHours * HOUR_MS);
      deps.lifecycle.onConnected((siteId) => connect(siteId));
      deps.lifecycle.onRemoved((siteId) => untrack(siteId));
    },

    /** The once-a-second tick: queue what falls due before the next one, write what was probed. */
    tick(): void {
      scheduler.tick();
      writer.flush();
    },

    /** Runs every probe due now and waits for them (tests, with a fake clock). */
    runDue: () => scheduler.runDue(),
    flush: () => writer.flush(),
    maintain: () => {
      writer.flush();
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
        await scheduler.stop();
        writer.flush();
        await prober.close();
      })();
      return stopping;
    },

    /** The site listing's uptime status, from memory: no query per site. */
    statusOf(siteId: string): SiteUptimeStatus {
      const monitor = monitors.get(siteId);
      if (!monitor) return null;
      const last = monitor.recent[monitor.recent.length - 1];
      return {
        status: monitor.state.status,
        since: monitor.state.since === null ? null : new Date(monitor.state.since).toISOString(),
        lastCheckedAt: last ? new Date(last.at).toISOString() : null,
        responseTimeMs: last?.responseMs ?? null,
        paused: monitor.paused,
      };
    },

    report(siteId: string) {
      const site = requireSite(siteId);
      const at = now();
      const monitor = monitors.get(siteId);
      const row = repository.findMonitor(siteId);
      const since = [at - DAY_MS, at - 7 * DAY_MS, at - 30 * DAY_MS];
      const totals = repository.totalsSince(siteId, since);
      const open = rollups.openBuckets(siteId);
      for (const bucket of open) {
        since.forEach((start, i) => {
          if (bucket.bucket >= start - (start % HOUR_MS)) {
            totals[i]!.up += bucket.up;
            totals[i]!.down += bucket.down;
          }
        });
      }
      return toUptimeReport({
        siteId: site.id,
        now: at,
        monitor,
        settings: settingsOf(row),
        state: monitor?.state ?? initialState(row?.status ?? 'unknown', row?.statusSince ?? null),
        certificateExpiresAt: monitor?.certificateExpiresAt ?? row?.certificateExpiresAt ?? null,
        certificateWarningDays: config.certificateWarningDays,
        totals,
        hourly: [...repository.hourly(siteId, at - 24 * HOUR_MS), ...open],
      });
    },

    downtime(
      siteId: string,
      { limit, cursor, from, to }: { limit: number; cursor?: string; from?: string; to?: string },
    ) {
      requireSite(siteId);
      const fromMs = from === undefined ? undefined : Date.parse(from);
      const toMs = to === undefined ? undefined : Date.parse(to);
      if (fromMs !== undefined && toMs !== undefined && fromMs > toMs)
        throw uptimeProblems.invalidTimeRange.create('`from` is after `to`');
      const beforeId = cursor === undefined ? undefined : Number(cursor);
      const rows = repository.downtimeEvents(siteId, { limit: limit + 1, beforeId, from: fromMs, to: toMs });
      return rows.map((row) => toDowntimeView(row, now()));
    },

    monitoringSettings(siteId: string): MonitoringSettingsView {
      requireSite(siteId);
      return settingsOf(repository.findMonitor(siteId));
    },

    /**
     * Validates a `monitoring` patch (null values restore the defaults) and returns the write that
     * applies it, so a PATCH with several sections writes nothing when any section is invalid.
     */
    prepareSettings(siteId: string, patch: MonitoringSettingsPatch): () => MonitoringSettingsView {
      requireSite(siteId);
      const current = repository.findMonitor(siteId);
      const changes: Partial<UptimeMonitorRow> = {};
      if (patch.intervalSeconds !== undefined) changes.intervalSeconds = patch.intervalSeconds;
      if (patch.timeoutMs !== undefined) changes.timeoutMs = patch.timeoutMs;
      if (patch.expectedStatus !== undefined)
        changes.expectedStatusJson = patch.expectedStatus === null ? null : JSON.stringify(patch.expectedStatus);
      if (patch.keyword !== undefined) {
        changes.keyword = patch.keyword?.text ?? null;
        changes.keywordMode = patch.keyword?.mode ?? 'present';
      }
      if (patch.paused !== undefined) changes.paused = patch.paused;
      const next = settingsOf({ ...current, ...changes } as UptimeMonitorRow);
      if (next.timeoutMs >= next.intervalSeconds * 1000)
        throw invalid(
          'monitoring.timeoutMs',
          `the timeout (${next.timeoutMs} ms) must be shorter than the interval (${next.intervalSeconds} s)`,
        );
      return () => {
        const at = now();
        repository.ensureMonitor(siteId, at);
        const row = repository.updateMonitor(siteId, { ...changes, updatedAt: at })!;
        const site = requireSite(siteId);
        if (site.state === 'connected')
          track(siteId, site.url, row, monitors.get(siteId)?.state ?? initialState(row.status, row.statusSince));
        return settingsOf(row);
      };
    },
  };
}

export type UptimeService = ReturnType<typeof createUptimeService>;
