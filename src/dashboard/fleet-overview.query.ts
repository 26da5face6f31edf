import type Database from 'better-sqlite3';
import type { Db } from '../db/database.js';

/**
 * The fleet overview's read model: one SQL pass over sites with their uptime status, pending
 * updates, last Lighthouse score and last backup, filtered, sorted and cut to a page in SQLite
 * (so 10,000 sites cost one indexed scan, not 10,000 service calls). It reads the features'
 * tables and writes none; the features own them.
 */
export const OVERVIEW_PAGE_SIZE = 50;
export const overviewSorts = ['name', 'status', 'score', 'updates', 'backup'] as const;
export const overviewStatuses = ['up', 'down', 'degraded', 'unknown', 'pending'] as const;
type OverviewSort = (typeof overviewSorts)[number];
type OverviewStatus = (typeof overviewStatuses)[number];

export interface OverviewFilter {
  q?: string;
  tag?: string;
  status?: OverviewStatus;
  hasUpdates?: boolean;
  backupFailed?: boolean;
  sort: OverviewSort;
  descending: boolean;
  page: number;
}

export interface OverviewRow {
  id: string;
  url: string;
  name: string | null;
  state: string;
  status: OverviewStatus;
  syncError: string | null;
  updates: number;
  score: number | null;
  backupStatus: string | null;
  backupAt: number | null;
  uptime24h: number | null;
  uptime30d: number | null;
  scores: number[];
}

export interface OverviewCounts {
  sites: number;
  down: number;
  degraded: number;
  updatesPending: number;
  backupsFailing: number;
}

/** Answering, but its inventory sync fails or its last performance score is under 0.5. */
const STATUS = `case
  when state = 'pending' then 'pending'
  when coalesce(uptime, 'unknown') = 'down' then 'down'
  when coalesce(uptime, 'unknown') = 'up' and (syncError is not null or score < 0.5) then 'degraded'
  else coalesce(uptime, 'unknown') end`;

/**
 * The derived columns, each one indexed seek per site (drizzle/0013 adds the two partial
 * indexes): a page computes only those its filter and sort need over the whole fleet, then all
 * of them for its own 50 sites.
 */
const COLUMNS = {
  uptime: 'm.status as uptime',
  updates:
    '(select count(*) from inventory_items i where i.site_id = s.id and i.update_version is not null) as updates',
  score: `(select a.score_performance from performance_audits a
      where a.site_id = s.id and a.status = 'completed' order by a.id desc limit 1) as score`,
  lastBackup: `(select b.status || ' ' || coalesce(b.finished_at, b.created_at) from backups b
      where b.site_id = s.id order by b.id desc limit 1) as lastBackup`,
};
type Column = keyof typeof COLUMNS;

const base = (columns: readonly Column[], where = '') =>
  `select s.id, s.url, s.name, s.state, s.sync_error as syncError${columns.map((c) => `, ${COLUMNS[c]}`).join('')}
    from sites s${columns.includes('uptime') ? ' left join uptime_monitors m on m.site_id = s.id' : ''}${where}`;
const ALL: readonly Column[] = ['uptime', 'updates', 'score', 'lastBackup'];
const STATUS_NEEDS: readonly Column[] = ['uptime', 'score'];

const ORDER: Record<OverviewSort, { sql: string; needs: readonly Column[] }> = {
  name: { sql: 'lower(coalesce(name, url))', needs: [] },
  status: {
    sql: "case status when 'down' then 0 when 'degraded' then 1 when 'unknown' then 2 when 'pending' then 3 else 4 end",
    needs: STATUS_NEEDS,
  },
  score: { sql: 'coalesce(score, -1)', needs: ['score'] },
  updates: { sql: 'updates', needs: ['updates'] },
  backup: {
    sql: "case when lastBackup like 'failed %' then 0 when lastBackup is null then 1 else 2 end",
    needs: ['lastBackup'],
  },
};

/** The fleet-wide counts change slowly and cost a pass over every site: computed at most this often. */
const COUNTS_TTL_MS = 5_000;
const DAY_MS = 86_400_000;
const SPARK_POINTS = 12;

export function createFleetOverviewQuery({ db }: { db: Db }) {
  const sqlite = (db as Db & { $client: Database.Database }).$client;
  // Each count from the index that answers it, rather than a pass computing every column of every site.
  const countsStatement = sqlite.prepare(`select
      (select count(*) from sites) as sites,
      (select count(*) from uptime_monitors m join sites s on s.id = m.site_id
        where m.status = 'down' and s.state <> 'pending') as down,
      (select count(*) from uptime_monitors m join sites s on s.id = m.site_id
        where m.status = 'up' and s.state <> 'pending' and (s.sync_error is not null or
          (select a.score_performance from performance_audits a
            where a.site_id = s.id and a.status = 'completed' order by a.id desc limit 1) < 0.5)) as degraded,
      (select count(distinct i.site_id) from inventory_items i where i.update_version is not null) as updatesPending,
      (select count(*) from backups b where b.status = 'failed'
        and b.id = (select max(l.id) from backups l where l.site_id = b.site_id)) as backupsFailing`);
  let cachedCounts: { at: number; counts: OverviewCounts } | undefined;
  const siteCount = sqlite.prepare('select count(*) from sites').pluck();

  const statements = new Map<string, Database.Statement>();
  const prepared = (text: string) => {
    let statement = statements.get(text);
    if (!statement) {
      statement = sqlite.prepare(text);
      statements.set(text, statement);
    }
    return statement;
  };

  /** Phase one: the page's site ids in order, and how many match, computing only the columns the filter and sort need. */
  function pageIds(filter: OverviewFilter): { ids: string[]; total: number } {
    const where: string[] = [];
    if (filter.q) where.push("(s.url like '%' || @q || '%' escape '\\' or s.name like '%' || @q || '%' escape '\\')");
    if (filter.tag) where.push('s.id in (select t.site_id from site_tags t where t.tag = @tag)');
    const needs = new Set<Column>(ORDER[filter.sort].needs);
    const outer: string[] = [];
    if (filter.status) {
      outer.push('status = @status');
      for (const c of STATUS_NEEDS) needs.add(c);
    }
    if (filter.hasUpdates) {
      outer.push('updates > 0');
      needs.add('updates');
    }
    if (filter.backupFailed) {
      outer.push("lastBackup like 'failed %'");
      needs.add('lastBackup');
    }
    const columns = ALL.filter((c) => needs.has(c));
    const inner = base(columns, where.length ? ` where ${where.join(' and ')}` : '');
    const withStatus = columns.includes('score') && columns.includes('uptime') ? `, ${STATUS} as status` : '';
    const from = `(select *${withStatus} from (${inner}))${outer.length ? ` where ${outer.join(' and ')}` : ''}`;
    const order = `${ORDER[filter.sort].sql} ${filter.descending ? 'desc' : 'asc'}, id asc`;
    const params = {
      q: filter.q?.replace(/[\\%_]/g, (ch) => `\\${ch}`),
      tag: filter.tag,
      status: filter.status,
    };
    const used = Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined));
    const total = (prepared(`select count(*) as n from ${from}`).get(used) as { n: number }).n;
    const ids = prepared(`select id from ${from} order by ${order} limit @limit offset @offset`)
      .pluck()
      .all({ ...used, limit: OVERVIEW_PAGE_SIZE, offset: (filter.page - 1) * OVERVIEW_PAGE_SIZE }) as string[];
    return { ids, total };
  }

  const uptimeSince = (ids: string[], table: 'uptime_hourly' | 'uptime_daily') =>
    sqlite.prepare(
      `select site_id as id, sum(up) as up, sum(down) as down from ${table}
        where bucket >= ? and site_id in (${ids.map(() => '?').join(',')}) group by site_id`,
    );

  function ratios(rows: { id: string; up: number; down: number }[][]): Map<string, number> {
    const sums = new Map<string, { up: number; down: number }>();
    for (const row of rows.flat()) {
      const sum = sums.get(row.id) ?? { up: 0, down: 0 };
      sum.up += row.up;
      sum.down += row.down;
      sums.set(row.id, sum);
    }
    return new Map([...sums].filter(([, s]) => s.up + s.down > 0).map(([id, s]) => [id, s.up / (s.up + s.down)]));
  }

  return {
    /** At most COUNTS_TTL_MS old, and never across a site added or removed (the empty state must not linger). */
    counts(now: number): OverviewCounts {
      const sites = siteCount.get() as number;
      if (
        !cachedCounts ||
        now - cachedCounts.at >= COUNTS_TTL_MS ||
        now < cachedCounts.at ||
        cachedCounts.counts.sites !== sites
      )
        cachedCounts = { at: now, counts: countsStatement.get() as OverviewCounts };
      return cachedCounts.counts;
    },

    page(filter: OverviewFilter, now: number): { rows: OverviewRow[]; total: number } {
      const { ids, total } = pageIds(filter);
      if (ids.length === 0) return { rows: [], total };
      const marks = ids.map(() => '?').join(',');
      // Phase two: every column for the page's own sites, in the page's order.
      const found = new Map(
        (
          sqlite
            .prepare(`select *, ${STATUS} as status from (${base(ALL, ` where s.id in (${marks})`)})`)
            .all(...ids) as (Omit<OverviewRow, 'backupStatus' | 'backupAt' | 'uptime24h' | 'uptime30d' | 'scores'> & {
            lastBackup: string | null;
          })[]
        ).map((row) => [row.id, row]),
      );
      const raw = ids.map((id) => found.get(id)!).filter(Boolean);
      type Sums = { id: string; up: number; down: number };
      const today = now - (now % DAY_MS);
      const day = ratios([uptimeSince(ids, 'uptime_hourly').all(now - DAY_MS, ...ids) as Sums[]]);
      const month = ratios([
        uptimeSince(ids, 'uptime_daily').all(now - 30 * DAY_MS, ...ids) as Sums[],
        uptimeSince(ids, 'uptime_hourly').all(today, ...ids) as Sums[],
      ]);
      const scores = new Map<string, number[]>();
      const history = sqlite
        .prepare(
          `select site_id as id, score from (select site_id, id, score_performance as score,
              row_number() over (partition by site_id order by id desc) as n from performance_audits indexed by performance_audits_site_scores_idx
              where status = 'completed' and score_performance is not null and site_id in (${ids.map(() => '?').join(',')}))
            where n <= ${SPARK_POINTS} order by id asc`,
        )
        .all(...ids) as { id: string; score: number }[];
      for (const point of history) scores.set(point.id, [...(scores.get(point.id) ?? []), point.score]);
      return {
        total,
        rows: raw.map(({ lastBackup, ...row }) => {
          const [backupStatus, at] = lastBackup ? lastBackup.split(' ') : [null, null];
          return {
            ...row,
            backupStatus: backupStatus ?? null,
            backupAt: at ? Number(at) : null,
            uptime24h: day.get(row.id) ?? null,
            uptime30d: month.get(row.id) ?? null,
            scores: scores.get(row.id) ?? [],
          };
        }),
      };
    },
  };
}

export type FleetOverviewQuery = ReturnType<typeof createFleetOverviewQuery>;
