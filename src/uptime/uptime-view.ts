import type { MonitorState } from './monitor-state.js';
import type { ProbeCause } from './prober.js';
import { DAY_MS } from './rollups.js';
import type { BucketRow, ProbeRow } from './uptime.repository.js';
import type { DowntimeEventView, MonitoringSettingsView, UptimeReport } from './uptime.schemas.js';
import type { DowntimeEventRow } from './uptime.table.js';

const iso = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : new Date(ms).toISOString());
const percent = ({ up, down }: { up: number; down: number }) =>
  up + down === 0 ? null : Math.round((up / (up + down)) * 10_000) / 100;

/** Sums buckets of the same hour (a late probe can add to an hour already written). */
function mergeHours(rows: readonly BucketRow[]): BucketRow[] {
  const byHour = new Map<number, BucketRow>();
  for (const row of rows) {
    const seen = byHour.get(row.bucket);
    if (!seen) {
      byHour.set(row.bucket, { ...row });
      continue;
    }
    seen.up += row.up;
    seen.down += row.down;
    seen.responseSum += row.responseSum;
    seen.responseCount += row.responseCount;
    seen.responseMin =
      seen.responseMin === null
        ? row.responseMin
        : row.responseMin === null
          ? seen.responseMin
          : Math.min(seen.responseMin, row.responseMin);
    seen.responseMax =
      seen.responseMax === null
        ? row.responseMax
        : row.responseMax === null
          ? seen.responseMax
          : Math.max(seen.responseMax, row.responseMax);
  }
  return [...byHour.values()].sort((a, b) => a.bucket - b.bucket);
}

export function toUptimeReport(input: {
  siteId: string;
  now: number;
  /** The site's latest probes, oldest first. */
  recent: readonly ProbeRow[];
  settings: MonitoringSettingsView;
  state: MonitorState;
  certificateExpiresAt: number | null;
  certificateWarningDays: number;
  totals: { up: number; down: number }[];
  hourly: readonly BucketRow[];
}): UptimeReport {
  const { recent } = input;
  const last = recent[recent.length - 1];
  const expiresAt = input.certificateExpiresAt;
  const daysLeft = expiresAt === null ? 0 : Math.floor((expiresAt - input.now) / DAY_MS);
  return {
    siteId: input.siteId,
    status: input.state.status,
    since: iso(input.state.since),
    lastCheckedAt: iso(last?.at),
    lastResponseTimeMs: last?.responseMs ?? null,
    monitoring: input.settings,
    uptimePercent: {
      last24h: percent(input.totals[0]!),
      last7d: percent(input.totals[1]!),
      last30d: percent(input.totals[2]!),
    },
    certificate:
      expiresAt === null
        ? null
        : {
            expiresAt: new Date(expiresAt).toISOString(),
            daysLeft,
            expiringSoon: daysLeft < input.certificateWarningDays,
          },
    recentProbes: [...recent].reverse().map((probe) => ({
      at: new Date(probe.at).toISOString(),
      up: probe.up,
      httpStatus: probe.httpStatus,
      responseTimeMs: probe.responseMs,
      cause: probe.cause as ProbeCause | null,
    })),
    hourly: mergeHours(input.hourly).map((bucket) => ({
      hour: new Date(bucket.bucket).toISOString(),
      up: bucket.up,
      down: bucket.down,
      responseTimeMs: {
        avg: bucket.responseCount === 0 ? null : Math.round(bucket.responseSum / bucket.responseCount),
        min: bucket.responseMin,
        max: bucket.responseMax,
      },
    })),
  };
}

export function toDowntimeView(row: DowntimeEventRow, now: number): DowntimeEventView {
  return {
    id: String(row.id),
    startedAt: new Date(row.startedAt).toISOString(),
    endedAt: iso(row.endedAt),
    durationMs: (row.endedAt ?? now) - row.startedAt,
    ongoing: row.endedAt === null,
    cause: row.cause as ProbeCause,
  };
}
