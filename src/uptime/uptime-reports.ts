import type { SiteRow } from '../sites/index.js';
import { initialState, type SiteMonitor } from './monitor-state.js';
import { settingsOf } from './monitor-settings.js';
import { RECENT_PROBES } from './probe-recorder.js';
import { DAY_MS, HOUR_MS, type HourlyRollups } from './rollups.js';
import type { UptimeConfig } from './uptime.config.js';
import { uptimeProblems } from './uptime.errors.js';
import type { UptimeRepository } from './uptime.repository.js';
import type { SiteUptimeStatus } from './uptime.schemas.js';
import { toDowntimeView, toUptimeReport } from './uptime-view.js';

/**
 * What the uptime feature answers about a site: its status for the site listing, its report (availability
 * over a day, a week and 30 days, and the last 24 hours hour by hour) and its downtime events, newest first,
 * a page at a time. On one machine the status and the hours still open come from the memory of the process
 * that probes (no query per site); in a cluster (createStoredUptimeReports) every process reads them from the
 * database, since the sites are probed in the uptime workers.
 */

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const hourOf = (at: number) => at - (at % HOUR_MS);

interface ReportDeps {
  repository: UptimeRepository;
  config: UptimeConfig;
  now: () => number;
  requireSite: (siteId: string) => Promise<SiteRow>;
}

/** The statuses of these sites (none for a site not monitored), for the site listing. */
export type StatusesOf = (siteIds: readonly string[]) => Promise<ReadonlyMap<string, SiteUptimeStatus>>;

export function createUptimeReports({
  rollups,
  monitors,
  ...deps
}: ReportDeps & { rollups: HourlyRollups; monitors: ReadonlyMap<string, SiteMonitor> }) {
  const { repository, config, now, requireSite } = deps;

  function statusOf(siteId: string): SiteUptimeStatus {
    const monitor = monitors.get(siteId);
    if (!monitor) return null;
    const last = monitor.recent[monitor.recent.length - 1];
    return {
      status: monitor.state.status,
      since: iso(monitor.state.since),
      lastCheckedAt: last ? iso(last.at) : null,
      responseTimeMs: last?.responseMs ?? null,
      paused: monitor.paused,
    };
  }

  return {
    /** From memory: no query per site. */
    statusesOf: (async (siteIds) => new Map(siteIds.map((siteId) => [siteId, statusOf(siteId)]))) as StatusesOf,

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
      for (const bucket of open) addToTotals(totals, since, bucket);
      return toUptimeReport({
        siteId: site.id,
        now: at,
        recent: monitor?.recent ?? [],
        settings: settingsOf(row, config),
        state: monitor?.state ?? initialState(row?.status ?? 'unknown', row?.statusSince ?? null),
        certificateExpiresAt: monitor?.certificateExpiresAt ?? row?.certificateExpiresAt ?? null,
        certificateWarningDays: config.certificateWarningDays,
        totals,
        hourly: [...written, ...open],
      });
    },

    downtime: downtimeOf(deps),
  };
}

/**
 * Cluster mode: every answer from the database. The hours before the roll-up's mark are read from the
 * roll-up, the ones after it from the raw probes (summed by hour), each side of the same mark, read first: an
 * hour closed meanwhile is then counted once, from the raw probes.
 */
export function createStoredUptimeReports(deps: ReportDeps) {
  const { repository, config, now, requireSite } = deps;
  return {
    statusesOf: (async (siteIds) => {
      const rows = await repository.statuses(siteIds);
      return new Map<string, SiteUptimeStatus>(
        rows.map((row) => [
          row.siteId,
          {
            status: row.status,
            since: iso(row.statusSince),
            lastCheckedAt: iso(row.lastCheckedAt),
            responseTimeMs: row.responseMs,
            paused: row.paused,
          },
        ]),
      );
    }) as StatusesOf,

    async report(siteId: string) {
      const site = await requireSite(siteId);
      const at = now();
      const since = [at - DAY_MS, at - 7 * DAY_MS, at - 30 * DAY_MS];
      const mark = Math.max(await repository.mark('hourly'), hourOf(since[2]!));
      const [row, totals, written, open, recent] = await Promise.all([
        repository.findMonitor(siteId),
        repository.totalsSince(siteId, since, mark),
        repository.hourly(siteId, at - 24 * HOUR_MS),
        repository.probeHours(siteId, mark),
        repository.recentProbes(siteId, RECENT_PROBES),
      ]);
      for (const bucket of open) addToTotals(totals, since, bucket);
      return toUptimeReport({
        siteId: site.id,
        now: at,
        recent,
        settings: settingsOf(row, config),
        state: initialState(row?.status ?? 'unknown', row?.statusSince ?? null),
        certificateExpiresAt: row?.certificateExpiresAt ?? null,
        certificateWarningDays: config.certificateWarningDays,
        totals,
        hourly: [...written.filter((bucket) => bucket.bucket < mark), ...open],
      });
    },

    downtime: downtimeOf(deps),
  };
}

/** An open hour's counts added to the totals whose window it falls in. */
function addToTotals(
  totals: { up: number; down: number }[],
  since: readonly number[],
  bucket: { bucket: number; up: number; down: number },
): void {
  since.forEach((start, i) => {
    if (bucket.bucket >= hourOf(start)) {
      totals[i]!.up += bucket.up;
      totals[i]!.down += bucket.down;
    }
  });
}

function downtimeOf({ repository, now, requireSite }: ReportDeps) {
  return async (
    siteId: string,
    { limit, cursor, from, to }: { limit: number; cursor?: string; from?: string; to?: string },
  ) => {
    await requireSite(siteId);
    const fromMs = from === undefined ? undefined : Date.parse(from);
    const toMs = to === undefined ? undefined : Date.parse(to);
    if (fromMs !== undefined && toMs !== undefined && fromMs > toMs)
      throw uptimeProblems.invalidTimeRange.create('`from` is after `to`');
    const beforeId = cursor === undefined ? undefined : Number(cursor);
    const rows = await repository.downtimeEvents(siteId, { limit: limit + 1, beforeId, from: fromMs, to: toMs });
    return rows.map((row) => toDowntimeView(row, now()));
  };
}
