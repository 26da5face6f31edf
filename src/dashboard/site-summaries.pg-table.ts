import { sql } from 'drizzle-orm';
import { bigint, boolean, doublePrecision, index, integer, pgTable, text } from 'drizzle-orm/pg-core';
import { pgSites } from '../sites/index.js';

/** SQLite's generated `status`, which PostgreSQL's other generated columns may not read: written out in each. */
const status = sql`case when state = 'pending' then 'pending' when uptime_status = 'down' then 'down' when uptime_status = 'up' and (sync_failing or score < 0.5) then 'degraded' else uptime_status end`;

/**
 * The fleet overview's read model in the PostgreSQL dialect (issue 34; docs/design/cluster-state.md): the same
 * columns, row types and indexes as site-summaries.table.ts, the SQLite table, whose comments say what each
 * holds, and its foreign key to `sites` with the cascade. Kept by the triggers of site-summaries.triggers.ts
 * (`postgres`), created by a custom migration in drizzle-pg/. What differs: the figures are `double precision`
 * (SQLite's eight-byte REAL), `backup_at` epoch milliseconds in a `bigint` read as a number, the generated
 * columns are stored (PostgreSQL 15 has no virtual ones), `status_rank` repeating `status`'s expression, and the
 * indexes of the columns that may be null keep nulls first, where SQLite sorts them: the overview's
 * `asc nulls first` and `desc nulls last` (fleet-overview.query.ts) walk them either way, as on SQLite.
 */
export const siteSummaries = pgTable(
  'site_summaries',
  {
    siteId: text('site_id')
      .primaryKey()
      .references(() => pgSites.id, { onDelete: 'cascade' }),
    sortName: text('sort_name').notNull(),
    state: text('state').notNull(),
    syncFailing: boolean('sync_failing').notNull().default(false),
    uptimeStatus: text('uptime_status').notNull().default('unknown'),
    uptime24h: doublePrecision('uptime_24h'),
    uptime30d: doublePrecision('uptime_30d'),
    responseMs: integer('response_ms'),
    score: doublePrecision('score'),
    updates: integer('updates').notNull().default(0),
    backupStatus: text('backup_status'),
    backupAt: bigint('backup_at', { mode: 'number' }),
    status: text('status').generatedAlwaysAs(status),
    statusRank: integer('status_rank').generatedAlwaysAs(
      sql`case (${status}) when 'down' then 0 when 'degraded' then 1 when 'unknown' then 2 when 'pending' then 3 else 4 end`,
    ),
    backupRank: integer('backup_rank').generatedAlwaysAs(
      sql`case when backup_status = 'failed' then 0 when backup_status is null then 1 else 2 end`,
    ),
  },
  (table) => [
    index('site_summaries_name_idx').on(table.sortName, table.siteId),
    index('site_summaries_status_idx').on(table.status, table.siteId),
    index('site_summaries_status_rank_idx').on(table.statusRank, table.siteId),
    index('site_summaries_uptime_24h_idx').on(table.uptime24h.asc().nullsFirst(), table.siteId),
    index('site_summaries_uptime_30d_idx').on(table.uptime30d.asc().nullsFirst(), table.siteId),
    index('site_summaries_response_idx').on(table.responseMs.asc().nullsFirst(), table.siteId),
    index('site_summaries_score_idx').on(table.score.asc().nullsFirst(), table.siteId),
    index('site_summaries_updates_idx').on(table.updates, table.siteId),
    index('site_summaries_backup_rank_idx').on(table.backupRank, table.siteId),
    index('site_summaries_backup_at_idx').on(table.backupAt.asc().nullsFirst(), table.siteId),
  ],
);
