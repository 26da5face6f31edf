import type Database from 'better-sqlite3';
import { and, desc, eq, gte, isNull, lt, lte, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { sites } from '../sites/index.js';
import {
  downtimeEvents,
  uptimeHourly,
  uptimeMonitors,
  uptimeRollupMarks,
  type DowntimeEventRow,
  type UptimeMonitorRow,
  type UptimeStatus,
} from './uptime.table.js';

export interface ProbeRow {
  siteId: string;
  at: number;
  up: boolean;
  httpStatus: number | null;
  responseMs: number | null;
  cause: string | null;
  certificateExpiresAt: number | null;
}

export interface BucketRow {
  siteId: string;
  bucket: number;
  up: number;
  down: number;
  responseSum: number;
  responseCount: number;
  responseMin: number | null;
  responseMax: number | null;
}

const BUCKET_COLUMNS = 'site_id, bucket, up, down, response_sum, response_count, response_min, response_max';
const bucketParams = (row: BucketRow) => [
  row.siteId,
  row.bucket,
  row.up,
  row.down,
  row.responseSum,
  row.responseCount,
  row.responseMin,
  row.responseMax,
];
const RAW_AGGREGATE = `sum(p.up), sum(1 - p.up), coalesce(sum(p.response_ms), 0), count(p.response_ms), min(p.response_ms), max(p.response_ms)`;

/**
 * Storage of monitors, probes, roll-ups and downtime events. The hot paths (probe inserts,
 * roll-ups) use prepared statements directly: they run thousands of times a minute.
 */
/** A status change written with the next batch of probes rather than in a commit of its own. */
export interface BufferedStatus {
  siteId: string;
  status: UptimeStatus;
  since: number;
}

export function createUptimeRepository({ db }: { db: Db }) {
  // drizzle's handle carries the better-sqlite3 connection it wraps.
  const sqlite = (db as Db & { $client: Database.Database }).$client;
  const setStatus = sqlite.prepare(
    'update uptime_monitors set status = ?, status_since = ?, updated_at = ? where site_id = ?',
  );
  const insertProbe = sqlite.prepare(
    'insert into uptime_probes (site_id, at, up, http_status, response_ms, cause, certificate_expires_at) values (?, ?, ?, ?, ?, ?, ?)',
  );
  const addHourly = sqlite.prepare(
    `insert into uptime_hourly (${BUCKET_COLUMNS}) values (?, ?, ?, ?, ?, ?, ?, ?) on conflict (site_id, bucket) do update set
       up = up + excluded.up, down = down + excluded.down, response_sum = response_sum + excluded.response_sum,
       response_count = response_count + excluded.response_count,
       response_min = min(coalesce(response_min, excluded.response_min), coalesce(excluded.response_min, response_min)),
       response_max = max(coalesce(response_max, excluded.response_max), coalesce(excluded.response_max, response_max))`,
  );
  const setMark = sqlite.prepare(
    'insert into uptime_rollup_marks (name, until) values (?, ?) on conflict (name) do update set until = excluded.until',
  );
  const pruneRawChunk = sqlite.prepare(
    'delete from uptime_probes where id in (select id from uptime_probes where at < ? order by at limit ?)',
  );

  return {
    ensureMonitor(siteId: string, now: number): void {
      db.insert(uptimeMonitors).values({ siteId, updatedAt: now }).onConflictDoNothing().run();
    },
    findMonitor: (siteId: string): UptimeMonitorRow | undefined =>
      db.select().from(uptimeMonitors).where(eq(uptimeMonitors.siteId, siteId)).get(),

    /** Connected sites with their monitor (created with defaults where missing). */
    connectedSites(now: number): { siteId: string; url: string; monitor: UptimeMonitorRow }[] {
      sqlite
        .prepare(
          `insert into uptime_monitors (site_id, updated_at) select id, ? from sites where state = 'connected' on conflict do nothing`,
        )
        .run(now);
      return db
        .select({ siteId: sites.id, url: sites.url, monitor: uptimeMonitors })
        .from(sites)
        .innerJoin(uptimeMonitors, eq(uptimeMonitors.siteId, sites.id))
        .where(eq(sites.state, 'connected'))
        .all();
    },

    updateMonitor(siteId: string, changes: Partial<Omit<UptimeMonitorRow, 'siteId'>>): UptimeMonitorRow | undefined {
      return db.update(uptimeMonitors).set(changes).where(eq(uptimeMonitors.siteId, siteId)).returning().get();
    },

    /** A status change and its downtime event are written together, at once. */
    recordTransition(
      siteId: string,
      change: { status: UptimeStatus; since: number; open?: { startedAt: number; cause: string }; closeAt?: number },
    ): void {
      db.transaction((tx) => {
        tx.update(uptimeMonitors)
          .set({ status: change.status, statusSince: change.since, updatedAt: change.since })
          .where(eq(uptimeMonitors.siteId, siteId))
          .run();
        if (change.closeAt !== undefined) {
          tx.update(downtimeEvents)
            .set({ endedAt: change.closeAt })
            .where(and(eq(downtimeEvents.siteId, siteId), isNull(downtimeEvents.endedAt)))
            .run();
        }
        if (change.open)
          tx.insert(downtimeEvents)
            .values({ siteId, startedAt: change.open.startedAt, cause: change.open.cause })
            .run();
      });
    },

    openEvent: (siteId: string): DowntimeEventRow | undefined =>
      db
        .select()
        .from(downtimeEvents)
        .where(and(eq(downtimeEvents.siteId, siteId), isNull(downtimeEvents.endedAt)))
        .get(),

    downtimeEvents(
      siteId: string,
      { limit, beforeId, from, to }: { limit: number; beforeId?: number; from?: number; to?: number },
    ): DowntimeEventRow[] {
      const conditions: SQL[] = [eq(downtimeEvents.siteId, siteId)];
      if (beforeId !== undefined) conditions.push(lt(downtimeEvents.id, beforeId));
      // Events overlapping [from, to]: still open, or ended after `from`; started before `to`.
      if (from !== undefined)
        conditions.push(sql`(${downtimeEvents.endedAt} is null or ${downtimeEvents.endedAt} >= ${from})`);
      if (to !== undefined) conditions.push(lte(downtimeEvents.startedAt, to));
      return db
        .select()
        .from(downtimeEvents)
        .where(and(...conditions))
        .orderBy(desc(downtimeEvents.startedAt), desc(downtimeEvents.id))
        .limit(limit)
        .all();
    },

    /** One transaction for a second's probes and the status changes that open no event. */
    insertProbes: sqlite.transaction((rows: ProbeRow[], statuses: BufferedStatus[] = []) => {
      for (const row of rows)
        insertProbe.run(
          row.siteId,
          row.at,
          row.up ? 1 : 0,
          row.httpStatus,
          row.responseMs,
          row.cause,
          row.certificateExpiresAt,
        );
      for (const change of statuses) setStatus.run(change.status, change.since, change.since, change.siteId);
    }),

    /** Probes since `from`, oldest first (rebuilding memory after a restart). */
    probesSince: (from: number): ProbeRow[] =>
      (
        sqlite
          .prepare(
            'select site_id as siteId, at, up, http_status as httpStatus, response_ms as responseMs, cause, certificate_expires_at as certificateExpiresAt from uptime_probes where at >= ? order by at',
          )
          .all(from) as (Omit<ProbeRow, 'up'> & { up: number })[]
      ).map((row) => ({ ...row, up: row.up === 1 })),

    countProbes: (): number => (sqlite.prepare('select count(*) as n from uptime_probes').get() as { n: number }).n,

    /** Adds closed buckets into the hourly roll-up and moves the watermark, in one transaction. */
    addHourly: sqlite.transaction((rows: BucketRow[], until: number) => {
      for (const row of rows) addHourly.run(...bucketParams(row));
      setMark.run('hourly', until);
    }),

    /** Re-derives hourly roll-ups of [from, to) from raw probes (catching up after a stop). */
    rebuildHourly: sqlite.transaction((from: number, to: number) => {
      sqlite
        .prepare(
          `insert or replace into uptime_hourly (${BUCKET_COLUMNS})
           select p.site_id, p.at - (p.at % 3600000), ${RAW_AGGREGATE}
           from uptime_probes p join uptime_monitors m on m.site_id = p.site_id
           where p.at >= ? and p.at < ? group by p.site_id, p.at - (p.at % 3600000)`,
        )
        .run(from, to);
      setMark.run('hourly', to);
    }),

    /** Sums each site's hourly rows of [dayStart, dayEnd) into one daily row. */
    rollupDay: sqlite.transaction((dayStart: number, dayEnd: number) => {
      sqlite
        .prepare(
          `insert or replace into uptime_daily (${BUCKET_COLUMNS})
           select h.site_id, ?, sum(h.up), sum(h.down), sum(h.response_sum), sum(h.response_count), min(h.response_min), max(h.response_max)
           from uptime_monitors m join uptime_hourly h on h.site_id = m.site_id and h.bucket >= ? and h.bucket < ? group by h.site_id`,
        )
        .run(dayStart, dayStart, dayEnd);
      setMark.run('daily', dayEnd);
    }),

    mark: (name: 'hourly' | 'daily'): number =>
      db.select().from(uptimeRollupMarks).where(eq(uptimeRollupMarks.name, name)).get()?.until ?? 0,

    hourly: (siteId: string, from: number): BucketRow[] =>
      db
        .select()
        .from(uptimeHourly)
        .where(and(eq(uptimeHourly.siteId, siteId), gte(uptimeHourly.bucket, from)))
        .orderBy(uptimeHourly.bucket)
        .all(),

    /** Up and down counts since each of the given times, in one pass over the site's hourly rows. */
    totalsSince(siteId: string, since: number[]): { up: number; down: number }[] {
      const columns = since
        .map(
          (_, i) =>
            `coalesce(sum(case when bucket >= ? then up end), 0) as up${i}, coalesce(sum(case when bucket >= ? then down end), 0) as down${i}`,
        )
        .join(', ');
      const row = sqlite
        .prepare(`select ${columns} from uptime_hourly where site_id = ? and bucket >= ?`)
        .get(...since.flatMap((t) => [t, t]), siteId, Math.min(...since)) as Record<string, number>;
      return since.map((_, i) => ({ up: row[`up${i}`] ?? 0, down: row[`down${i}`] ?? 0 }));
    },

    /** Deletes raw probes older than `before`, a chunk at a time; returns how many went. */
    pruneRawChunk: (before: number, chunk: number): number => pruneRawChunk.run(before, chunk).changes,

    pruneRollups(hourlyBefore: number, dailyBefore: number): void {
      // `site_id in (…)` lets SQLite walk each site's primary-key range instead of the whole table.
      sqlite
        .prepare('delete from uptime_hourly where site_id in (select site_id from uptime_monitors) and bucket < ?')
        .run(hourlyBefore);
      sqlite
        .prepare('delete from uptime_daily where site_id in (select site_id from uptime_monitors) and bucket < ?')
        .run(dailyBefore);
      sqlite.prepare('delete from downtime_events where ended_at is not null and ended_at < ?').run(dailyBefore);
    },
  };
}

export type UptimeRepository = ReturnType<typeof createUptimeRepository>;
