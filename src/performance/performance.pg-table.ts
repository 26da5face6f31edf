import { sql } from 'drizzle-orm';
import { boolean, doublePrecision, index, integer, pgTable, text } from 'drizzle-orm/pg-core';
import { timestampMs as at } from '../db/pg-columns.js';
import { pgSites } from '../sites/index.js';
import { auditFailureReasons, auditStatuses, auditTriggers, formFactors } from './performance.table.js';

/*
 * The `performance_audits` and `performance_settings` tables of the PostgreSQL dialect (issue 34;
 * docs/design/cluster-state.md): the same columns, row types and indexes as performance.table.ts, the
 * SQLite tables, whose comments say what each holds, and the same foreign keys (a site's audits and
 * settings go with it). Scores and metrics are `double precision`, SQLite's REAL (PostgreSQL's `real` is
 * four bytes). The triggers on the SQLite table (the fleet overview's score, the job row deleted with its
 * audit) are not here yet: the lead writes them for PostgreSQL after the merge.
 */
export const performanceAudits = pgTable(
  'performance_audits',
  {
    id: text('id').primaryKey(),
    siteId: text('site_id')
      .notNull()
      .references(() => pgSites.id, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    formFactor: text('form_factor', { enum: formFactors }).notNull(),
    trigger: text('trigger', { enum: auditTriggers }).notNull(),
    runs: integer('runs').notNull(),
    status: text('status', { enum: auditStatuses }).notNull(),
    queuedAt: at('queued_at').notNull(),
    startedAt: at('started_at'),
    finishedAt: at('finished_at'),
    lighthouseVersion: text('lighthouse_version'),
    chromeVersion: text('chrome_version'),
    scorePerformance: doublePrecision('score_performance'),
    scoreAccessibility: doublePrecision('score_accessibility'),
    scoreBestPractices: doublePrecision('score_best_practices'),
    scoreSeo: doublePrecision('score_seo'),
    firstContentfulPaintMs: doublePrecision('fcp_ms'),
    largestContentfulPaintMs: doublePrecision('lcp_ms'),
    totalBlockingTimeMs: doublePrecision('tbt_ms'),
    cumulativeLayoutShift: doublePrecision('cls'),
    speedIndexMs: doublePrecision('speed_index_ms'),
    timeToFirstByteMs: doublePrecision('ttfb_ms'),
    failureReason: text('failure_reason', { enum: auditFailureReasons }),
    failureMessage: text('failure_message'),
    reportBytes: integer('report_bytes'),
  },
  (table) => [
    index('performance_audits_site_idx').on(table.siteId, table.formFactor, table.id),
    index('performance_audits_status_idx').on(table.status),
    index('performance_audits_site_scores_idx')
      .on(table.siteId, table.id, table.scorePerformance)
      .where(sql`${table.status} = 'completed'`),
  ],
);

export const performanceSettings = pgTable('performance_settings', {
  siteId: text('site_id')
    .primaryKey()
    .references(() => pgSites.id, { onDelete: 'cascade' }),
  enabled: boolean('enabled').notNull(),
  formFactors: text('form_factors').notNull(),
  runs: integer('runs').notNull(),
  intervalHours: integer('interval_hours'),
  lastScheduledAt: at('last_scheduled_at'),
});
