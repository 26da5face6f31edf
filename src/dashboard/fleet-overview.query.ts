import type Database from 'better-sqlite3';
import type { Db } from '../db/database.js';
import { ALL_SITES, type SiteScope } from '../shared/actor.js';
import { scopeParameter, visibleSitesText } from '../sites/index.js';

/**
 * The fleet overview's read model: pages of sites filtered and sorted in SQLite over
 * `site_summaries` (one row per site, kept current by triggers on the features' tables:
 * site-summaries.table.ts), so every sort is one index walk, not one lookup per site. Only the
 * page's own sites then read their score history for the sparkline.
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
 * ascending, except the backup's age: a site never backed up is the oldest.
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

export function createFleetOverviewQuery({ db }: { db: Db }) {
  const sqlite = (db as Db & { $client: Database.Database }).$client;
  // Each count is one index range of the summary table; a scoped user's, of their sites only (issue 33).
  const countsText = (scope: SiteScope) => {
    const x = visibleSitesText(scope, 'site_id');
    const s = visibleSitesText(scope, 'id');
    const and = (visible: string) => (visible ? ` and ${visible}` : '');
    return `select
      (select count(*) from site_summaries${x ? ` where ${x}` : ''}) as sites,
      (select count(*) from site_summaries where status = 'down'${and(x)}) as down,
      (select count(*) from site_summaries where status = 'degraded'${and(x)}) as degraded,
      (select count(*) from site_summaries where updates > 0${and(x)}) as updatesPending,
      (select count(*) from sites where state = 'connected' and connector_version is null${and(s)}) as updatesUnknown,
      (select count(*) from site_summaries where backup_rank = 0${and(x)}) as backupsFailing`;
  };

  const statements = new Map<string, Database.Statement>();
  const prepared = (text: string) => {
    let statement = statements.get(text);
    if (!statement) {
      statement = sqlite.prepare(text);
      statements.set(text, statement);
    }
    return statement;
  };

  /** The page's site ids in order, and how many sites match. */
  function pageIds(filter: OverviewFilter, scope: SiteScope): { ids: string[]; total: number } {
    const where: string[] = [];
    const visible = visibleSitesText(scope, 'x.site_id');
    if (visible) where.push(visible);
    if (filter.q)
      where.push(
        "x.site_id in (select s.id from sites s where s.url like '%' || @q || '%' escape '\\' or s.name like '%' || @q || '%' escape '\\')",
      );
    if (filter.tag) where.push('x.site_id in (select t.site_id from site_tags t where t.tag = @tag)');
    if (filter.status) where.push('x.status = @status');
    if (filter.hasUpdates) where.push('x.updates > 0');
    if (filter.backupFailed) where.push('x.backup_rank = 0');
    const from = `site_summaries x${where.length ? ` where ${where.join(' and ')}` : ''}`;
    const { column, reversed } = ORDER[filter.sort];
    const dir = filter.descending !== Boolean(reversed) ? 'desc' : 'asc';
    const params = {
      q: filter.q?.replace(/[\\%_]/g, (ch) => `\\${ch}`),
      tag: filter.tag,
      status: filter.status,
      ...scopeParameter(scope),
    };
    const used = Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined));
    const total = prepared(`select count(*) from ${from}`).pluck().get(used) as number;
    const ids = prepared(
      `select x.site_id from ${from} order by ${column} ${dir}, x.site_id ${dir} limit @limit offset @offset`,
    )
      .pluck()
      .all({ ...used, limit: OVERVIEW_PAGE_SIZE, offset: (filter.page - 1) * OVERVIEW_PAGE_SIZE }) as string[];
    return { ids, total };
  }

  const marks = (count: number) => Array.from({ length: count }, () => '?').join(',');

  return {
    /** The fleet's counts, of the sites `scope` includes. */
    counts: (scope: SiteScope = ALL_SITES): OverviewCounts =>
      (scope.kind === 'all'
        ? prepared(countsText(scope)).get()
        : prepared(countsText(scope)).get(scopeParameter(scope))) as OverviewCounts,

    /** A page of the sites `scope` includes, as the filter selects and sorts them. */
    page(filter: OverviewFilter, scope: SiteScope = ALL_SITES): { rows: OverviewRow[]; total: number } {
      const { ids, total } = pageIds(filter, scope);
      if (ids.length === 0) return { rows: [], total };
      const found = new Map(
        (
          prepared(
            `select s.id, s.url, s.name, s.state, s.sync_error as syncError, s.connector_version as connectorVersion, x.status, x.updates, x.score,
                x.backup_status as backupStatus, x.backup_at as backupAt, x.uptime_24h as uptime24h,
                x.uptime_30d as uptime30d, x.response_ms as responseMs
              from site_summaries x join sites s on s.id = x.site_id where x.site_id in (${marks(ids.length)})`,
          ).all(...ids) as Omit<OverviewRow, 'scores'>[]
        ).map((row) => [row.id, row]),
      );
      // One form factor's trend, the one the score is (mobile when the site has mobile audits).
      const scores = new Map<string, { mobile: number[]; desktop: number[] }>();
      const history = prepared(
        `select site_id as id, form_factor as formFactor, score from (select site_id, id, form_factor, score_performance as score,
            row_number() over (partition by site_id, form_factor order by id desc) as n from performance_audits indexed by performance_audits_site_scores_idx
            where status = 'completed' and score_performance is not null and site_id in (${marks(ids.length)}))
          where n <= ${SPARK_POINTS} order by id asc`,
      ).all(...ids) as { id: string; formFactor: 'mobile' | 'desktop'; score: number }[];
      for (const point of history) {
        const site = scores.get(point.id) ?? { mobile: [], desktop: [] };
        site[point.formFactor].push(point.score);
        scores.set(point.id, site);
      }
      return {
        total,
        rows: ids.flatMap((id) => {
          const row = found.get(id);
          const trend = scores.get(id);
          return row ? [{ ...row, scores: trend ? (trend.mobile.length > 0 ? trend.mobile : trend.desktop) : [] }] : [];
        }),
      };
    },
  };
}

export type FleetOverviewQuery = ReturnType<typeof createFleetOverviewQuery>;
