import { sql } from 'drizzle-orm';
import { index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { sites } from '../sites/index.js';

export const uptimeStatuses = ['up', 'down', 'unknown'] as const;
export type UptimeStatus = (typeof uptimeStatuses)[number];
export const keywordModes = ['present', 'absent'] as const;
export type KeywordMode = (typeof keywordModes)[number];

/**
 * Per-site settings (null: the configured default) and the state that must survive a restart:
 * the declared status and the certificate last seen. Written on changes only, never per probe.
 */
export const uptimeMonitors = sqliteTable('uptime_monitors', {
  siteId: text('site_id')
    .primaryKey()
    .references(() => sites.id, { onDelete: 'cascade' }),
  intervalSeconds: integer('interval_seconds'),
  timeoutMs: integer('timeout_ms'),
  /** JSON array of accepted statuses; null accepts 200–399 after redirects. */
  expectedStatusJson: text('expected_status_json'),
  keyword: text('keyword'),
  keywordMode: text('keyword_mode', { enum: keywordModes }).notNull().default('present'),
  paused: integer('paused', { mode: 'boolean' }).notNull().default(false),
  status: text('status', { enum: uptimeStatuses }).notNull().default('unknown'),
  statusSince: integer('status_since'),
  certificateExpiresAt: integer('certificate_expires_at'),
  /** The certificate expiry a `site.certificate_expiring` was logged for, so it is logged once. */
  certificateWarnedFor: integer('certificate_warned_for'),
  updatedAt: integer('updated_at').notNull(),
});

/**
 * Raw probes: append-only, kept for a short window. Inserts arrive in time order, so the
 * integer key and the time index both grow at their right edge and writes stay sequential.
 * No foreign key: a deleted site's probes age out with the rest (and are never read again).
 * Times are epoch milliseconds.
 */
export const uptimeProbes = sqliteTable(
  'uptime_probes',
  {
    id: integer('id').primaryKey(),
    siteId: text('site_id').notNull(),
    at: integer('at').notNull(),
    up: integer('up', { mode: 'boolean' }).notNull(),
    httpStatus: integer('http_status'),
    responseMs: integer('response_ms'),
    cause: text('cause'),
    certificateExpiresAt: integer('certificate_expires_at'),
  },
  (table) => [index('uptime_probes_at_idx').on(table.at)],
);

const rollupColumns = {
  siteId: text('site_id')
    .notNull()
    .references(() => sites.id, { onDelete: 'cascade' }),
  /** Start of the hour (or UTC day), epoch ms. */
  bucket: integer('bucket').notNull(),
  up: integer('up').notNull(),
  down: integer('down').notNull(),
  /** Response times of probes that got an answer: sum and count give the mean. */
  responseSum: integer('response_sum').notNull(),
  responseCount: integer('response_count').notNull(),
  responseMin: integer('response_min'),
  responseMax: integer('response_max'),
};

// The migration makes both roll-up tables WITHOUT ROWID (test/uptime-storage.test.ts checks it).
export const uptimeHourly = sqliteTable('uptime_hourly', rollupColumns, (table) => [
  primaryKey({ columns: [table.siteId, table.bucket] }),
]);
export const uptimeDaily = sqliteTable('uptime_daily', { ...rollupColumns }, (table) => [
  primaryKey({ columns: [table.siteId, table.bucket] }),
]);

export const downtimeEvents = sqliteTable(
  'downtime_events',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    /** The first failed probe. */
    startedAt: integer('started_at').notNull(),
    /** Null while the site is still down. */
    endedAt: integer('ended_at'),
    cause: text('cause').notNull(),
  },
  (table) => [index('downtime_events_site_idx').on(table.siteId, table.startedAt)],
);

/** Watermarks of the roll-up jobs (`hourly`, `daily`: everything before is rolled up). */
export const uptimeRollupMarks = sqliteTable('uptime_rollup_marks', {
  name: text('name').primaryKey(),
  until: integer('until')
    .notNull()
    .default(sql`0`),
});

export type UptimeMonitorRow = typeof uptimeMonitors.$inferSelect;
export type DowntimeEventRow = typeof downtimeEvents.$inferSelect;
