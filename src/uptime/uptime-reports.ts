import type { SiteRow } from '../sites/index.js';
import { initialState, type SiteMonitor } from './monitor-state.js';
import { settingsOf } from './monitor-settings.js';
import { DAY_MS, HOUR_MS, type HourlyRollups } from './rollups.js';
import type { UptimeConfig } from './uptime.config.js';
import { uptimeProblems } from './uptime.errors.js';
import type { UptimeRepository } from './uptime.repository.js';
import type { SiteUptimeStatus } from './uptime.schemas.js';
import { toDowntimeView, toUptimeReport } from './uptime-view.js';

/**
 * What the uptime feature answers about a site: its status for the site listing (from memory,
 * no query per site), its report (availability over a day, a week and 30 days from the written
 * hours plus the hours still open in memory, and the last 24 hours hour by hour), and its
 * downtime events, newest first, a page at a time.
 */
export function createUptimeReports({
  repository,
  rollups,
  config,
  now,
  requireSite,
  monitors,
}: {
  repository: UptimeRepository;
  rollups: HourlyRollups;
  config: UptimeConfig;
  now: () => number;
  requireSite: (siteId: string) => Promise<SiteRow>;
  monitors: ReadonlyMap<string, SiteMonitor>;
}) {
  return {
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

    async report(siteId: string) {
      const site = await requireSite(siteId);
      const at = now();
      const since = [at - DAY_MS, at - 7 * DAY_MS, at - 30 * DAY_MS];
      const [row, totals, written] = await Promise.all([
        repository.findMonitor(siteId),
        repository.totalsSince(siteId, since),
        repository.hourly(siteId, at - 24 * HOUR_MS),
      ]);
      // Memory after the written hours: an hour being written meanwhile is still among the open ones.
      const monitor = monitors.get(siteId);
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
        settings: settingsOf(row, config),
        state: monitor?.state ?? initialState(row?.status ?? 'unknown', row?.statusSince ?? null),
        certificateExpiresAt: monitor?.certificateExpiresAt ?? row?.certificateExpiresAt ?? null,
        certificateWarningDays: config.certificateWarningDays,
        totals,
        hourly: [...written, ...open],
      });
    },

    async downtime(
      siteId: string,
      { limit, cursor, from, to }: { limit: number; cursor?: string; from?: string; to?: string },
    ) {
      await requireSite(siteId);
      const fromMs = from === undefined ? undefined : Date.parse(from);
      const toMs = to === undefined ? undefined : Date.parse(to);
      if (fromMs !== undefined && toMs !== undefined && fromMs > toMs)
        throw uptimeProblems.invalidTimeRange.create('`from` is after `to`');
      const beforeId = cursor === undefined ? undefined : Number(cursor);
      const rows = await repository.downtimeEvents(siteId, { limit: limit + 1, beforeId, from: fromMs, to: toMs });
      return rows.map((row) => toDowntimeView(row, now()));
    },
  };
}
