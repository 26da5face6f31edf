import { sql } from 'drizzle-orm';
import { index, integer, real, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { sites } from '../sites/index.js';

/**
 * The fleet overview's read model: one row per site holding every fact the overview sorts and
 * filters by, so a sort over 10,000 sites is one index walk instead of one lookup per site.
 *
 * Kept current by SQLite triggers on the features' own tables (declared in
 * site-summaries.triggers.ts; migrations 0016, 0025, 0032): whatever code
 * path writes a probe roll-up, an audit, a backup or an inventory row, the summary follows in the
 * same transaction; the migration backfills existing sites with the same statements. Nothing in
 * TypeScript writes it. The features' tables stay the truth (the inventory and the event history
 * are untouched): this table can always be emptied and rebuilt from them.
 */
export const siteSummaries = sqliteTable(
  'site_summaries',
  {
    siteId: text('site_id')
      .primaryKey()
      .references(() => sites.id, { onDelete: 'cascade' }),
    /** lower(coalesce(name, url)): the name sort. */
    sortName: text('sort_name').notNull(),
    state: text('state').notNull(),
    syncFailing: integer('sync_failing', { mode: 'boolean' }).notNull().default(false),
    uptimeStatus: text('uptime_status').notNull().default('unknown'),
    /** Up ratio over the 24 hourly roll-ups up to the newest, and over 30 days (daily roll-ups and today's hours). */
    uptime24h: real('uptime_24h'),
    uptime30d: real('uptime_30d'),
    /** Mean response time of the newest hourly roll-up. */
    responseMs: integer('response_ms'),
    /** Performance score (0–1) of the newest completed audit. */
    score: real('score'),
    updates: integer('updates').notNull().default(0),
    backupStatus: text('backup_status'),
    /** When the newest backup finished (or was created, while it runs). */
    backupAt: integer('backup_at'),
    status: text('status').generatedAlwaysAs(
      sql`case when state = 'pending' then 'pending' when uptime_status = 'down' then 'down' when uptime_status = 'up' and (sync_failing or score < 0.5) then 'degraded' else uptime_status end`,
      { mode: 'virtual' },
    ),
    statusRank: integer('status_rank').generatedAlwaysAs(
      sql`case status when 'down' then 0 when 'degraded' then 1 when 'unknown' then 2 when 'pending' then 3 else 4 end`,
      { mode: 'virtual' },
    ),
    backupRank: integer('backup_rank').generatedAlwaysAs(
      sql`case when backup_status = 'failed' then 0 when backup_status is null then 1 else 2 end`,
      { mode: 'virtual' },
    ),
  },
  (table) => [
    index('site_summaries_name_idx').on(table.sortName, table.siteId),
    index('site_summaries_status_idx').on(table.status, table.siteId),
    index('site_summaries_status_rank_idx').on(table.statusRank, table.siteId),
    index('site_summaries_uptime_24h_idx').on(table.uptime24h, table.siteId),
    index('site_summaries_uptime_30d_idx').on(table.uptime30d, table.siteId),
    index('site_summaries_response_idx').on(table.responseMs, table.siteId),
    index('site_summaries_score_idx').on(table.score, table.siteId),
    index('site_summaries_updates_idx').on(table.updates, table.siteId),
    index('site_summaries_backup_rank_idx').on(table.backupRank, table.siteId),
    index('site_summaries_backup_at_idx').on(table.backupAt, table.siteId),
  ],
);
