import type Database from 'better-sqlite3';
import { and, asc, count, desc, eq, gte, inArray, isNull, lt, lte, or, sql, type SQL } from 'drizzle-orm';
import { firstRow, rowsChanged, rowsOf, tableFor, writeTogether } from '../db/dialect.js';
import type { StateDatabase, StateDb } from '../db/state-db.js';
import { siteHash } from '../jobs/spread.js';
import { pgSites, sites as sqliteSites } from '../sites/index.js';
import * as pgTables from './uptime.pg-table.js';
import * as sqliteTables from './uptime.table.js';
import type { DowntimeEventRow, UptimeMonitorRow, UptimeStatus } from './uptime.table.js';

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

/** A connected site and its monitor. */
export interface MonitoredSite {
  siteId: string;
  url: string;
  monitor: UptimeMonitorRow;
}

/** A monitor's status as stored, with its latest probe. */
export interface StoredStatus {
  siteId: string;
  status: UptimeStatus;
  statusSince: number | null;
  paused: boolean;
  lastCheckedAt: number | null;
  responseMs: number | null;
}

/** A bucket as a raw query answers it (numbers may come as strings or bigints, column names in snake case). */
type RawBucket = {
  site_id: string;
  bucket: unknown;
  up: unknown;
  down: unknown;
  response_sum: unknown;
  response_count: unknown;
  response_min: unknown;
  response_max: unknown;
};

const numberOrNull = (value: unknown) => (value === null || value === undefined ? null : Number(value));
const toBucketRow = (row: RawBucket): BucketRow => ({
  siteId: row.site_id,
  bucket: Number(row.bucket),
  up: Number(row.up),
  down: Number(row.down),
  responseSum: Number(row.response_sum),
  responseCount: Number(row.response_count),
  responseMin: numberOrNull(row.response_min),
  responseMax: numberOrNull(row.response_max),
});

/** A status change written with the next batch of probes rather than in a commit of its own. */
export interface BufferedStatus {
  siteId: string;
  status: UptimeStatus;
  since: number;
}

/** Rows a PostgreSQL insert takes at once: well under its 65,535 parameters at eight columns. */
const ROWS_PER_INSERT = 1000;
const chunksOf = <T>(rows: readonly T[]): T[][] =>
  Array.from({ length: Math.ceil(rows.length / ROWS_PER_INSERT) }, (_, i) =>
    rows.slice(i * ROWS_PER_INSERT, (i + 1) * ROWS_PER_INSERT),
  );

/**
 * Storage of monitors, probes, roll-ups and downtime events on either dialect (issue 34,
 * docs/design/cluster-state.md), every statement through the state database. The hot paths (a second's
 * probes, the roll-ups) are on SQLite one better-sqlite3 transaction of statements prepared once, with no
 * await inside (sqliteWrites, below); on PostgreSQL the roll-ups are one transaction each, of multi-row
 * statements, and a second's probes one statement (their rows as JSON). A buffered status is written only over an older one: a batch may land after a
 * transition written at once (on PostgreSQL while its flush is in flight; on SQLite while a transaction
 * holds the connection), and the transition is the newer news.
 */
export function createUptimeRepository(state: StateDatabase) {
  const monitors = tableFor(state.dialect, { sqlite: sqliteTables.uptimeMonitors, postgres: pgTables.uptimeMonitors });
  const probes = tableFor(state.dialect, { sqlite: sqliteTables.uptimeProbes, postgres: pgTables.uptimeProbes });
  const hourly = tableFor(state.dialect, { sqlite: sqliteTables.uptimeHourly, postgres: pgTables.uptimeHourly });
  const events = tableFor(state.dialect, { sqlite: sqliteTables.downtimeEvents, postgres: pgTables.downtimeEvents });
  const marks = tableFor(state.dialect, {
    sqlite: sqliteTables.uptimeRollupMarks,
    postgres: pgTables.uptimeRollupMarks,
  });
  const daily = tableFor(state.dialect, { sqlite: sqliteTables.uptimeDaily, postgres: pgTables.uptimeDaily });
  const sites = tableFor(state.dialect, { sqlite: sqliteSites, postgres: pgSites });
  const run = state.run.bind(state);
  /** A raw probe's columns as a ProbeRow (its id left out). */
  const probeColumns = {
    siteId: probes.siteId,
    at: probes.at,
    up: probes.up,
    httpStatus: probes.httpStatus,
    responseMs: probes.responseMs,
    cause: probes.cause,
    certificateExpiresAt: probes.certificateExpiresAt,
  };
  const fast = state.sqlite && sqliteWrites(state.sqlite);
  const setMark = (db: StateDb, name: 'hourly' | 'daily', until: number) =>
    db.insert(marks).values({ name, until }).onConflictDoUpdate({ target: marks.name, set: { until } });

  return {
    /** The site's monitor, made with the defaults when it has none. */
    ensureMonitor: (siteId: string, now: number): Promise<UptimeMonitorRow> =>
      run((db) =>
        db
          .insert(monitors)
          .values({ siteId, updatedAt: now })
          // A no-op update, so that the existing row comes back (no trigger watches `site_id`).
          .onConflictDoUpdate({ target: monitors.siteId, set: { siteId: sql`excluded.site_id` } })
          .returning()
          .then((rows) => rows[0]!),
      ),
    findMonitor: (siteId: string): Promise<UptimeMonitorRow | undefined> =>
      run((db) => db.select().from(monitors).where(eq(monitors.siteId, siteId)).then(firstRow)),

    /** Connected sites with their monitor (created with defaults where missing). */
    async connectedSites(now: number): Promise<MonitoredSite[]> {
      // One statement, so that a site removed meanwhile is either monitored and gone with its site, or neither.
      // (drizzle's insert-select wants every column selected; `returning` makes it a query rowsOf runs on both.)
      // Only the sites without a monitor are tried: in a cluster every uptime worker runs this every few seconds.
      await run((db) =>
        rowsOf(
          state,
          db,
          sql`insert into uptime_monitors (site_id, updated_at) select s.id, cast(${now} as bigint) from sites s
            where s.state = 'connected' and not exists (select 1 from uptime_monitors m where m.site_id = s.id)
            on conflict do nothing returning site_id`,
        ),
      );
      return run((db) =>
        db
          .select({ siteId: sites.id, url: sites.url, monitor: monitors })
          .from(sites)
          .innerJoin(monitors, eq(monitors.siteId, sites.id))
          .where(eq(sites.state, 'connected')),
      );
    },

    /**
     * Sites whose row or monitor was written at `since` or after, connected or not (a disconnection is such a
     * change), with their monitor: a cluster's uptime worker follows what other processes changed (a site
     * removed is not among them: `connectedDigest` tells that the connected sites are no longer the same).
     */
    monitorChanges: (since: number): Promise<(MonitoredSite & { connected: boolean })[]> =>
      run((db) =>
        db
          .select({ siteId: sites.id, url: sites.url, state: sites.state, monitor: monitors })
          .from(sites)
          .innerJoin(monitors, eq(monitors.siteId, sites.id))
          .where(or(gte(monitors.updatedAt, since), gte(sites.updatedAt, new Date(since)))),
      ).then((rows) => rows.map(({ state: siteState, ...row }) => ({ ...row, connected: siteState === 'connected' }))),

    /**
     * A digest of which sites are connected (their count and a sum of their ids' hashes): the same digest,
     * the same sites, so a cluster's uptime worker reads them all again only when it changes. PostgreSQL
     * sums in the server; SQLite (one process, no cluster) reads the ids.
     */
    async connectedDigest(): Promise<string> {
      if (state.dialect === 'postgres') {
        const [row] = await run((db) =>
          rowsOf<{ n: unknown; h: unknown }>(
            state,
            db,
            sql`select count(*) as n, coalesce(sum(hashtext(id)), 0) as h from sites where state = 'connected'`,
          ),
        );
        return `${String(row?.n)}:${String(row?.h)}`;
      }
      const ids = await run((db) => db.select({ id: sites.id }).from(sites).where(eq(sites.state, 'connected')));
      return `${ids.length}:${ids.reduce((sum, { id }) => sum + siteHash(id).readInt32BE(0), 0)}`;
    },

    /**
     * The status of each of these connected sites' monitors with its latest probe, in one query (cluster mode: the
     * status is not in this process's memory). A site not connected, or with no monitor, has no row.
     */
    statuses: (siteIds: readonly string[]): Promise<StoredStatus[]> => {
      if (siteIds.length === 0) return Promise.resolve([]);
      const latest = (column: typeof probes.at | typeof probes.responseMs) =>
        sql<unknown>`(select ${column} from ${probes} where ${probes.siteId} = ${monitors.siteId} order by ${probes.at} desc limit 1)`;
      return run((db) =>
        db
          .select({
            siteId: monitors.siteId,
            status: monitors.status,
            statusSince: monitors.statusSince,
            paused: monitors.paused,
            lastCheckedAt: latest(probes.at),
            responseMs: latest(probes.responseMs),
          })
          .from(monitors)
          .innerJoin(sites, eq(sites.id, monitors.siteId))
          .where(and(inArray(monitors.siteId, [...siteIds]), eq(sites.state, 'connected'))),
      ).then((rows) =>
        rows.map((row) => ({
          ...row,
          lastCheckedAt: numberOrNull(row.lastCheckedAt),
          responseMs: numberOrNull(row.responseMs),
        })),
      );
    },

    /** The site's latest probes, oldest first. */
    recentProbes: (siteId: string, limit: number): Promise<ProbeRow[]> =>
      run((db) =>
        db
          .select(probeColumns)
          .from(probes)
          .where(eq(probes.siteId, siteId))
          .orderBy(desc(probes.at), desc(probes.id))
          .limit(limit),
      ).then((rows) => rows.reverse()),

    /** The site's raw probes since `from` summed by hour (the hours not yet rolled up, in cluster mode). */
    probeHours: (siteId: string, from: number): Promise<BucketRow[]> =>
      run((db) =>
        rowsOf<RawBucket>(
          state,
          db,
          sql`select site_id, at - (at % 3600000) as bucket, sum(case when up then 1 else 0 end) as up,
            sum(case when up then 0 else 1 end) as down, coalesce(sum(response_ms), 0) as response_sum,
            count(response_ms) as response_count, min(response_ms) as response_min, max(response_ms) as response_max
          from uptime_probes where site_id = ${siteId} and at >= ${from}
          group by site_id, at - (at % 3600000) order by bucket`,
        ),
      ).then((rows) => rows.map(toBucketRow)),

    updateMonitor: (
      siteId: string,
      changes: Partial<Omit<UptimeMonitorRow, 'siteId'>>,
    ): Promise<UptimeMonitorRow | undefined> =>
      run((db) => db.update(monitors).set(changes).where(eq(monitors.siteId, siteId)).returning().then(firstRow)),

    /** The site's settings changed: its monitor made with them when it has none, in one statement. */
    writeSettings: (siteId: string, changes: Partial<Omit<UptimeMonitorRow, 'siteId'>> & { updatedAt: number }) =>
      run((db) =>
        db
          .insert(monitors)
          .values({ ...changes, siteId })
          .onConflictDoUpdate({ target: monitors.siteId, set: changes })
          .returning()
          .then((rows) => rows[0]!),
      ),

    /** A status change and its downtime event are written together, at once. */
    recordTransition: (
      siteId: string,
      change: { status: UptimeStatus; since: number; open?: { startedAt: number; cause: string }; closeAt?: number },
    ): Promise<void> =>
      writeTogether(state, (db) => [
        db
          .update(monitors)
          .set({ status: change.status, statusSince: change.since, updatedAt: change.since })
          .where(eq(monitors.siteId, siteId)),
        ...(change.closeAt === undefined
          ? []
          : [
              db
                .update(events)
                .set({ endedAt: change.closeAt })
                .where(and(eq(events.siteId, siteId), isNull(events.endedAt))),
            ]),
        ...(change.open
          ? [db.insert(events).values({ siteId, startedAt: change.open.startedAt, cause: change.open.cause })]
          : []),
      ]),

    openEvent: (siteId: string): Promise<DowntimeEventRow | undefined> =>
      run((db) =>
        db
          .select()
          .from(events)
          .where(and(eq(events.siteId, siteId), isNull(events.endedAt)))
          .then(firstRow),
      ),

    downtimeEvents(
      siteId: string,
      { limit, beforeId, from, to }: { limit: number; beforeId?: number; from?: number; to?: number },
    ): Promise<DowntimeEventRow[]> {
      const conditions: SQL[] = [eq(events.siteId, siteId)];
      if (beforeId !== undefined) conditions.push(lt(events.id, beforeId));
      // Events overlapping [from, to]: still open, or ended after `from`; started before `to`.
      if (from !== undefined) conditions.push(sql`(${events.endedAt} is null or ${events.endedAt} >= ${from})`);
      if (to !== undefined) conditions.push(lte(events.startedAt, to));
      return run((db) =>
        db
          .select()
          .from(events)
          .where(and(...conditions))
          .orderBy(desc(events.startedAt), desc(events.id))
          .limit(limit),
      );
    },

    /** A second's probes and the status changes that open no event, written together (all or none). */
    async insertProbes(rows: readonly ProbeRow[], statuses: readonly BufferedStatus[] = []): Promise<void> {
      if (fast) return run(() => fast.insertProbes(rows, statuses));
      // One statement, so atomic without a transaction: the rows go as two JSON parameters, which costs this
      // process a `JSON.stringify` rather than a parameter per column per row (an uptime worker writes every second).
      await run((db) =>
        db.execute(sql`with probes as (insert into uptime_probes
            (site_id, at, up, http_status, response_ms, cause, certificate_expires_at)
            select "siteId", at, up, "httpStatus", "responseMs", cause, "certificateExpiresAt"
            from json_to_recordset(${JSON.stringify(rows)}::json) as p ("siteId" text, at bigint, up boolean,
              "httpStatus" integer, "responseMs" integer, cause text, "certificateExpiresAt" bigint))
          update uptime_monitors m set status = v.status, status_since = v.since, updated_at = v.since
          from json_to_recordset(${JSON.stringify(statuses)}::json) as v ("siteId" text, status text, since bigint)
          where m.site_id = v."siteId" and (m.status_since is null or m.status_since < v.since)`),
      );
    },

    /** Probes since `from`, oldest first (rebuilding memory after a restart). */
    probesSince: (from: number): Promise<ProbeRow[]> =>
      run((db) =>
        db.select(probeColumns).from(probes).where(gte(probes.at, from)).orderBy(asc(probes.at), asc(probes.id)),
      ),

    countProbes: (): Promise<number> =>
      run((db) => db.select({ n: count() }).from(probes)).then((rows) => rows[0]?.n ?? 0),

    /** Adds closed buckets into the hourly roll-up and moves the watermark, in one transaction. */
    async addHourly(rows: readonly BucketRow[], until: number): Promise<void> {
      if (fast) return run(() => fast.addHourly(rows, until));
      await state.transaction(async (tx) => {
        // One statement may not touch a row twice: an hour given twice is summed first.
        for (const chunk of chunksOf(mergeBuckets(rows)))
          await tx
            .insert(hourly)
            .values(chunk)
            .onConflictDoUpdate({
              target: [hourly.siteId, hourly.bucket],
              set: {
                up: sql`${hourly.up} + excluded.up`,
                down: sql`${hourly.down} + excluded.down`,
                responseSum: sql`${hourly.responseSum} + excluded.response_sum`,
                responseCount: sql`${hourly.responseCount} + excluded.response_count`,
                // PostgreSQL's least and greatest pass over nulls, as the coalesces do on SQLite.
                responseMin: sql`least(${hourly.responseMin}, excluded.response_min)`,
                responseMax: sql`greatest(${hourly.responseMax}, excluded.response_max)`,
              },
            });
        await setMark(tx, 'hourly', until);
      });
    },

    /** Re-derives hourly roll-ups of [from, to) from raw probes (catching up after a stop). */
    async rebuildHourly(from: number, to: number): Promise<void> {
      if (fast) return run(() => fast.rebuildHourly(from, to));
      await state.transaction(async (tx) => {
        await tx.execute(sql`insert into uptime_hourly (${sql.raw(BUCKET_COLUMNS)})
          select p.site_id, p.at - (p.at % 3600000), count(*) filter (where p.up), count(*) filter (where not p.up),
            coalesce(sum(p.response_ms), 0), count(p.response_ms), min(p.response_ms), max(p.response_ms)
          from uptime_probes p join uptime_monitors m on m.site_id = p.site_id
          where p.at >= ${from} and p.at < ${to} group by p.site_id, p.at - (p.at % 3600000)
          ${replacingBucket}`);
        await setMark(tx, 'hourly', to);
      });
    },

    /** Sums each site's hourly rows of [dayStart, dayEnd) into one daily row. */
    async rollupDay(dayStart: number, dayEnd: number): Promise<void> {
      if (fast) return run(() => fast.rollupDay(dayStart, dayEnd));
      await state.transaction(async (tx) => {
        await tx.execute(sql`insert into uptime_daily (${sql.raw(BUCKET_COLUMNS)})
          select h.site_id, cast(${dayStart} as bigint), sum(h.up), sum(h.down), sum(h.response_sum),
            sum(h.response_count), min(h.response_min), max(h.response_max)
          from uptime_monitors m join uptime_hourly h on h.site_id = m.site_id and h.bucket >= ${dayStart} and h.bucket < ${dayEnd}
          group by h.site_id
          ${replacingBucket}`);
        await setMark(tx, 'daily', dayEnd);
      });
    },

    mark: (name: 'hourly' | 'daily'): Promise<number> =>
      run((db) => db.select().from(marks).where(eq(marks.name, name))).then((rows) => rows[0]?.until ?? 0),

    hourly: (siteId: string, from: number): Promise<BucketRow[]> =>
      run((db) =>
        db
          .select()
          .from(hourly)
          .where(and(eq(hourly.siteId, siteId), gte(hourly.bucket, from)))
          .orderBy(hourly.bucket),
      ),

    /** Up and down counts since each of the given times (and before `before`), in one pass over the site's hourly rows. */
    async totalsSince(
      siteId: string,
      since: readonly number[],
      before?: number,
    ): Promise<{ up: number; down: number }[]> {
      const sumSince = (column: typeof hourly.up | typeof hourly.down, from: number) =>
        sql<number>`coalesce(sum(case when ${hourly.bucket} >= ${from} then ${column} end), 0)`.mapWith(Number);
      const fields = Object.fromEntries(
        since.flatMap((from, i) => [
          [`up${i}`, sumSince(hourly.up, from)],
          [`down${i}`, sumSince(hourly.down, from)],
        ]),
      ) as Record<string, SQL<number>>;
      const row = await run((db) =>
        db
          .select(fields)
          .from(hourly)
          .where(
            and(
              eq(hourly.siteId, siteId),
              gte(hourly.bucket, Math.min(...since)),
              before === undefined ? undefined : lt(hourly.bucket, before),
            ),
          )
          .then(firstRow),
      );
      return since.map((_, i) => ({ up: row?.[`up${i}`] ?? 0, down: row?.[`down${i}`] ?? 0 }));
    },

    /** Deletes raw probes older than `before`, a chunk at a time; returns how many went. */
    pruneRawChunk: (before: number, chunk: number): Promise<number> =>
      run((db) =>
        db
          .delete(probes)
          .where(
            inArray(
              probes.id,
              db.select({ id: probes.id }).from(probes).where(lt(probes.at, before)).orderBy(probes.at).limit(chunk),
            ),
          ),
      ).then(rowsChanged),

    async pruneRollups(hourlyBefore: number, dailyBefore: number): Promise<void> {
      // `site_id in (…)` lets SQLite walk each site's primary-key range instead of the whole table.
      const monitored = (db: StateDb) => db.select({ siteId: monitors.siteId }).from(monitors);
      await run((db) =>
        db.delete(hourly).where(and(inArray(hourly.siteId, monitored(db)), lt(hourly.bucket, hourlyBefore))),
      );
      await run((db) =>
        db.delete(daily).where(and(inArray(daily.siteId, monitored(db)), lt(daily.bucket, dailyBefore))),
      );
      await run((db) => db.delete(events).where(lt(events.endedAt, dailyBefore)));
    },
  };
}

export type UptimeRepository = ReturnType<typeof createUptimeRepository>;

const BUCKET_COLUMNS = 'site_id, bucket, up, down, response_sum, response_count, response_min, response_max';

/** PostgreSQL's `insert or replace` of a roll-up row. */
const replacingBucket = sql.raw(`on conflict (site_id, bucket) do update set up = excluded.up, down = excluded.down,
  response_sum = excluded.response_sum, response_count = excluded.response_count,
  response_min = excluded.response_min, response_max = excluded.response_max`);

/** Buckets of the same site and hour summed into one. */
function mergeBuckets(rows: readonly BucketRow[]): BucketRow[] {
  const byKey = new Map<string, BucketRow>();
  for (const row of rows) {
    const key = `${row.siteId}\u0000${row.bucket}`;
    const seen = byKey.get(key);
    if (!seen) {
      byKey.set(key, { ...row });
      continue;
    }
    seen.up += row.up;
    seen.down += row.down;
    seen.responseSum += row.responseSum;
    seen.responseCount += row.responseCount;
    seen.responseMin = eitherOf(seen.responseMin, row.responseMin, Math.min);
    seen.responseMax = eitherOf(seen.responseMax, row.responseMax, Math.max);
  }
  return [...byKey.values()];
}

/** `pick` of two values where both are there, else the one there is. */
const eitherOf = (a: number | null, b: number | null, pick: (a: number, b: number) => number) =>
  a === null ? b : b === null ? a : pick(a, b);

/**
 * SQLite's hot paths: a second's probes and the roll-ups, each one better-sqlite3 transaction of statements
 * prepared once, run inside `state.run` with no await in it (they run thousands of times a minute).
 */
function sqliteWrites(client: Database.Database) {
  const setStatus = client.prepare(
    'update uptime_monitors set status = ?, status_since = ?, updated_at = ? where site_id = ? and (status_since is null or status_since < ?)',
  );
  const insertProbe = client.prepare(
    'insert into uptime_probes (site_id, at, up, http_status, response_ms, cause, certificate_expires_at) values (?, ?, ?, ?, ?, ?, ?)',
  );
  const addHourly = client.prepare(
    `insert into uptime_hourly (${BUCKET_COLUMNS}) values (?, ?, ?, ?, ?, ?, ?, ?) on conflict (site_id, bucket) do update set
       up = up + excluded.up, down = down + excluded.down, response_sum = response_sum + excluded.response_sum,
       response_count = response_count + excluded.response_count,
       response_min = min(coalesce(response_min, excluded.response_min), coalesce(excluded.response_min, response_min)),
       response_max = max(coalesce(response_max, excluded.response_max), coalesce(excluded.response_max, response_max))`,
  );
  const setMark = client.prepare(
    'insert into uptime_rollup_marks (name, until) values (?, ?) on conflict (name) do update set until = excluded.until',
  );
  const rebuildHourly = client.prepare(
    `insert or replace into uptime_hourly (${BUCKET_COLUMNS})
     select p.site_id, p.at - (p.at % 3600000), sum(p.up), sum(1 - p.up), coalesce(sum(p.response_ms), 0),
       count(p.response_ms), min(p.response_ms), max(p.response_ms)
     from uptime_probes p join uptime_monitors m on m.site_id = p.site_id
     where p.at >= ? and p.at < ? group by p.site_id, p.at - (p.at % 3600000)`,
  );
  const rollupDay = client.prepare(
    `insert or replace into uptime_daily (${BUCKET_COLUMNS})
     select h.site_id, ?, sum(h.up), sum(h.down), sum(h.response_sum), sum(h.response_count), min(h.response_min), max(h.response_max)
     from uptime_monitors m join uptime_hourly h on h.site_id = m.site_id and h.bucket >= ? and h.bucket < ? group by h.site_id`,
  );
  return {
    insertProbes: client.transaction((rows: readonly ProbeRow[], statuses: readonly BufferedStatus[]) => {
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
      for (const change of statuses)
        setStatus.run(change.status, change.since, change.since, change.siteId, change.since);
    }),
    addHourly: client.transaction((rows: readonly BucketRow[], until: number) => {
      for (const row of rows)
        addHourly.run(
          row.siteId,
          row.bucket,
          row.up,
          row.down,
          row.responseSum,
          row.responseCount,
          row.responseMin,
          row.responseMax,
        );
      setMark.run('hourly', until);
    }),
    rebuildHourly: client.transaction((from: number, to: number) => {
      rebuildHourly.run(from, to);
      setMark.run('hourly', to);
    }),
    rollupDay: client.transaction((dayStart: number, dayEnd: number) => {
      rollupDay.run(dayStart, dayStart, dayEnd);
      setMark.run('daily', dayEnd);
    }),
  };
}
