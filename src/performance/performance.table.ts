import { sql } from 'drizzle-orm';
import { index, integer, real, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { sites } from '../sites/index.js';

export const formFactors = ['mobile', 'desktop'] as const;
export type FormFactor = (typeof formFactors)[number];

export const auditStatuses = ['queued', 'running', 'completed', 'failed'] as const;
export type AuditStatus = (typeof auditStatuses)[number];

/** A stable vocabulary: alerting and clients may match on these. */
export const auditFailureReasons = [
  'chrome_unavailable',
  'page_unreachable',
  'page_error',
  'timeout',
  'lighthouse_error',
  'worker_crashed',
  'interrupted',
  'address_not_allowed',
  'report_not_stored',
] as const;
export type AuditFailureReason = (typeof auditFailureReasons)[number];

export const auditTriggers = ['scheduled', 'manual'] as const;
export type AuditTrigger = (typeof auditTriggers)[number];

/**
 * One Lighthouse audit of a site's home page: the queue entry while it waits, the result after.
 * Only scores and key metrics live here (a few hundred bytes); the full report is a gzip file
 * in the data directory.
 */
export const performanceAudits = sqliteTable(
  'performance_audits',
  {
    id: text('id').primaryKey(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    formFactor: text('form_factor', { enum: formFactors }).notNull(),
    trigger: text('trigger', { enum: auditTriggers }).notNull(),
    runs: integer('runs').notNull(),
    status: text('status', { enum: auditStatuses }).notNull(),
    queuedAt: integer('queued_at', { mode: 'timestamp_ms' }).notNull(),
    startedAt: integer('started_at', { mode: 'timestamp_ms' }),
    finishedAt: integer('finished_at', { mode: 'timestamp_ms' }),
    lighthouseVersion: text('lighthouse_version'),
    chromeVersion: text('chrome_version'),
    scorePerformance: real('score_performance'),
    scoreAccessibility: real('score_accessibility'),
    scoreBestPractices: real('score_best_practices'),
    scoreSeo: real('score_seo'),
    firstContentfulPaintMs: real('fcp_ms'),
    largestContentfulPaintMs: real('lcp_ms'),
    totalBlockingTimeMs: real('tbt_ms'),
    cumulativeLayoutShift: real('cls'),
    speedIndexMs: real('speed_index_ms'),
    timeToFirstByteMs: real('ttfb_ms'),
    failureReason: text('failure_reason', { enum: auditFailureReasons }),
    failureMessage: text('failure_message'),
    /** Size of the gzip report on disk; null when there is none (failed, or removed by retention). */
    reportBytes: integer('report_bytes'),
  },
  (table) => [
    index('performance_audits_site_idx').on(table.siteId, table.formFactor, table.id),
    index('performance_audits_status_idx').on(table.status),
    // The dashboard's fleet overview reads each site's latest score from this (one seek, covering).
    index('performance_audits_site_scores_idx')
      .on(table.siteId, table.id, table.scorePerformance)
      .where(sql`${table.status} = 'completed'`),
  ],
);

/** Per-site schedule settings; a site without a row uses the defaults. */
export const performanceSettings = sqliteTable('performance_settings', {
  siteId: text('site_id')
    .primaryKey()
    .references(() => sites.id, { onDelete: 'cascade' }),
  enabled: integer('enabled', { mode: 'boolean' }).notNull(),
  /** Comma-separated form factors, e.g. `mobile,desktop`. */
  formFactors: text('form_factors').notNull(),
  runs: integer('runs').notNull(),
  /** Hours between scheduled audits of the site; null: SITEWARDEN_PERFORMANCE_INTERVAL_HOURS. */
  intervalHours: integer('interval_hours'),
  /** The slot of the last scheduled audits, so a slot enqueues once. */
  lastScheduledAt: integer('last_scheduled_at', { mode: 'timestamp_ms' }),
});

export type AuditRow = typeof performanceAudits.$inferSelect;
export type NewAuditRow = typeof performanceAudits.$inferInsert;
export type PerformanceSettingsRow = typeof performanceSettings.$inferSelect;
