import type Database from 'better-sqlite3';
import { and, sql, type SQL } from 'drizzle-orm';
import { SQLiteSyncDialect } from 'drizzle-orm/sqlite-core';
import { indexedBy, likeIgnoringCase, rowsOf } from '../db/dialect.js';
import type { StateDatabase, StateDb } from '../db/state-db.js';
import { ALL_SITES, type SiteScope } from '../shared/actor.js';
import { visibleSites } from '../sites/index.js';

/**
 * The fleet overview's read model: pages of sites filtered and sorted over `site_summaries` (one row
 * per site, kept current by triggers on the features' tables: site-summaries.table.ts), so every sort
 * is one index walk, not one lookup per site. Only the page's own sites then read their score history
 * for the sparkline. One body on either dialect (issue 34, docs/design/cluster-state.md).
 */
export const OVERVIEW_PAGE_SIZE = 50;
export const overviewSorts = [
  'name',
  'status',
  'uptime24h',
  'uptime30d',
  'response',
  'score',
  'updates',
  'backup',
  'backupAge',
] as const;
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
  /** Null: no connector, so WordPress's REST API alone says nothing of the updates offered. */
  connectorVersion: string | null;
  updates: number;
  score: number | null;
  backupStatus: string | null;
  backupAt: number | null;
  uptime24h: number | null;
  uptime30d: number | null;
  /** Mean of the newest hourly roll-up. */
  responseMs: number | null;
  scores: number[];
}

export interface OverviewCounts {
  sites: number;
  down: number;
  degraded: number;
  updatesPending: number;
  /** Connected sites without the connector: their updates are unknown. */
  updatesUnknown: number;
  backupsFailing: number;
}

/**
 * Each sort's indexed column (site_summaries_*_idx). The site id breaks ties in the same
 * direction, so the index gives the order without a sort step. Unknown values (null) come first
 * ascending, except the backup's age: a site never backed up is the oldest. Nulls are placed as SQLite
 * places them (smallest), which PostgreSQL is told (`nulls first` ascending, `nulls last` descending: its
 * indexes of these columns keep them first, so it walks them as SQLite does).
 */
const ORDER: Record<OverviewSort, { column: string; reversed?: boolean }> = {
  name: { column: 'x.sort_name' },
  status: { column: 'x.status_rank' },
  uptime24h: { column: 'x.uptime_24h' },
  uptime30d: { column: 'x.uptime_30d' },
  response: { column: 'x.response_ms' },
  score: { column: 'x.score' },
  updates: { column: 'x.updates' },
  backup: { column: 'x.backup_rank' },
  backupAge: { column: 'x.backup_at', reversed: true },
};

const SPARK_POINTS = 12;

/** `count(*)` as a number on both dialects (PostgreSQL's is a bigint, which node-postgres gives as a string). */
const counted = (from: SQL) => sql`(select cast(count(*) as integer) from ${from})`;

/**
 * SQLite: each statement's text prepared once and kept, as the overview did before issue 34 (a page's four
 * statements would otherwise be prepared again on every request: a quarter of its time); PostgreSQL: `rowsOf`.
 */
function rowsReader(state: StateDatabase) {
  const sqlite = state.sqlite;
  if (!sqlite) return <Row extends Record<string, unknown>>(db: StateDb, query: SQL) => rowsOf<Row>(state, db, query);
  const dialect = new SQLiteSyncDialect();
  const statements = new Map<string, Database.Statement>();
  return async <Row extends Record<string, unknown>>(_db: StateDb, query: SQL): Promise<Row[]> => {
    const { sql: text, params } = dialect.sqlToQuery(query);
    let statement = statements.get(text);
    if (!statement) {
      statement = sqlite.prepare(text);
      statements.set(text, statement);
    }
    return statement.all(...params) as Row[];
  };
}

export function createFleetOverviewQuery(state: StateDatabase) {
  const run = state.run.bind(state);
  const rows = rowsReader(state);

  /** Each count is one index range of the summary table; a scoped user's, of their sites only (issue 33). */
  const countsQuery = (scope: SiteScope) => {
    const where = (...conditions: (SQL | undefined)[]) => {
      const all = and(...conditions);
      return all ? sql` where ${all}` : sql``;
    };
    const x = visibleSites(scope, sql.raw('site_id'));
    const s = visibleSites(scope, sql.raw('id'));
    return sql`select
      ${counted(sql`site_summaries${where(x)}`)} as "sites",
      ${counted(sql`site_summaries${where(sql.raw("status = 'down'"), x)}`)} as "down",
      ${counted(sql`site_summaries${where(sql.raw("status = 'degraded'"), x)}`)} as "degraded",
      ${counted(sql`site_summaries${where(sql.raw('updates > 0'), x)}`)} as "updatesPending",
      ${counted(sql`sites${where(sql.raw("state = 'connected' and connector_version is null"), s)}`)} as "updatesUnknown",
      ${counted(sql`site_summaries${where(sql.raw('backup_rank = 0'), x)}`)} as "backupsFailing"`;
  };

  /** The page's site ids in order, and how many sites match. */
  async function pageIds(filter: OverviewFilter, scope: SiteScope): Promise<{ ids: string[]; total: number }> {
    const conditions: (SQL | undefined)[] = [visibleSites(scope, sql.raw('x.site_id'))];
    if (filter.q) {
      const pattern = `%${filter.q.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
      conditions.push(
        sql`x.site_id in (select s.id from sites s where ${likeIgnoringCase(state.dialect, sql.raw('s.url'), pattern)} or ${likeIgnoringCase(state.dialect, sql.raw('s.name'), pattern)})`,
      );
    }
    if (filter.tag) conditions.push(sql`x.site_id in (select t.site_id from site_tags t where t.tag = ${filter.tag})`);
    if (filter.status) conditions.push(sql`x.status = ${filter.status}`);
    if (filter.hasUpdates) conditions.push(sql.raw('x.updates > 0'));
    if (filter.backupFailed) conditions.push(sql.raw('x.backup_rank = 0'));
    const where = and(...conditions);
    const from = sql`site_summaries x${where ? sql` where ${where}` : sql``}`;
    const { column, reversed } = ORDER[filter.sort];
    const order = sql.raw(
      filter.descending !== Boolean(reversed)
        ? `${column} desc nulls last, x.site_id desc`
        : `${column} asc nulls first, x.site_id asc`,
    );
    const offset = (filter.page - 1) * OVERVIEW_PAGE_SIZE;
    return run(async (db) => {
      const [count] = await rows<{ total: number }>(db, sql`select ${counted(from)} as "total"`);
      const page = await rows<{ id: string }>(
        db,
        sql`select x.site_id as "id" from ${from} order by ${order} limit ${OVERVIEW_PAGE_SIZE} offset ${offset}`,
      );
      return { ids: page.map((row) => row.id), total: count?.total ?? 0 };
    });
  }

  /**
   * One form factor's trend for each of `ids`, the one the score is (mobile when the site has mobile audits),
   * newest first: as the SQLite query before issue 34 gave it (its `order by id` named the site's column).
   */
  async function trends(ids: readonly string[]): Promise<Map<string, number[]>> {
    const history = await run((db) =>
      rows<{ id: string; formFactor: 'mobile' | 'desktop'; score: number }>(
        db,
        sql`select h.site_id as "id", h.form_factor as "formFactor", h.score as "score" from (
            select a.site_id, a.id, a.form_factor, a.score_performance as score,
              row_number() over (partition by a.site_id, a.form_factor order by a.id desc) as n
            from performance_audits a ${indexedBy(state.dialect, 'performance_audits_site_scores_idx')}
            where a.status = 'completed' and a.score_performance is not null and a.site_id in ${ids}) h
          where h.n <= ${SPARK_POINTS} order by h.id desc`,
      ),
    );
    const scores = new Map<string, { mobile: number[]; desktop: number[] }>();
    for (const point of history) {
      const site = scores.get(point.id) ?? { mobile: [], desktop: [] };
      site[point.formFactor].push(point.score);
      scores.set(point.id, site);
    }
    return new Map(
      [...scores].map(([id, trend]) => [id, trend.mobile.length > 0 ? trend.mobile : trend.desktop] as const),
    );
  }

  return {
    /** The fleet's counts, of the sites `scope` includes. */
    counts: async (scope: SiteScope = ALL_SITES): Promise<OverviewCounts> =>
      (await run((db) => rows<OverviewCounts & Record<string, unknown>>(db, countsQuery(scope))))[0]!,

    /** A page of the sites `scope` includes, as the filter selects and sorts them. */
    async page(filter: OverviewFilter, scope: SiteScope = ALL_SITES): Promise<{ rows: OverviewRow[]; total: number }> {
      const { ids, total } = await pageIds(filter, scope);
      if (ids.length === 0) return { rows: [], total };
      const found = new Map(
        (
          await run((db) =>
            rows<Omit<OverviewRow, 'scores'>>(
              db,
              sql`select s.id as "id", s.url as "url", s.name as "name", s.state as "state", s.sync_error as "syncError",
                  s.connector_version as "connectorVersion", x.status as "status", x.updates as "updates", x.score as "score",
                  x.backup_status as "backupStatus", x.backup_at as "backupAt", x.uptime_24h as "uptime24h",
                  x.uptime_30d as "uptime30d", x.response_ms as "responseMs"
                from site_summaries x join sites s on s.id = x.site_id where x.site_id in ${ids}`,
            ),
          )
        ).map((row) => [
          row.id,
          // PostgreSQL's bigint comes as a string: milliseconds since 1970 are well inside a number's exact range.
          { ...row, backupAt: row.backupAt === null ? null : Number(row.backupAt) },
        ]),
      );
      const scores = await trends(ids);
      return {
        total,
        rows: ids.flatMap((id) => {
          const row = found.get(id);
          return row ? [{ ...row, scores: scores.get(id) ?? [] }] : [];
        }),
      };
    },
  };
}

export type FleetOverviewQuery = ReturnType<typeof createFleetOverviewQuery>;
