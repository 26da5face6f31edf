import { bigint, boolean, index, integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { pgSites as sites } from '../sites/index.js';
import { keywordModes, uptimeStatuses } from './uptime.table.js';

/**
 * The uptime tables of the PostgreSQL dialect (issue 34; docs/design/cluster-state.md): the same columns,
 * row types, keys and indexes as uptime.table.ts, the SQLite tables, whose comments say what each holds.
 * Times are epoch milliseconds there (plain integers, not `timestamp_ms`), so here they are `bigint` read
 * as numbers: a number's row type, and room past 2038. Migrations in drizzle-pg/, generated from this file.
 */
const epochMs = (name: string) => bigint(name, { mode: 'number' });

export const uptimeMonitors = pgTable('uptime_monitors', {
  siteId: text('site_id')
    .primaryKey()
    .references(() => sites.id, { onDelete: 'cascade' }),
  intervalSeconds: integer('interval_seconds'),
  timeoutMs: integer('timeout_ms'),
  expectedStatusJson: text('expected_status_json'),
  keyword: text('keyword'),
  keywordMode: text('keyword_mode', { enum: keywordModes }).notNull().default('present'),
  paused: boolean('paused').notNull().default(false),
  status: text('status', { enum: uptimeStatuses }).notNull().default('unknown'),
  statusSince: epochMs('status_since'),
  certificateExpiresAt: epochMs('certificate_expires_at'),
  certificateWarnedFor: epochMs('certificate_warned_for'),
  updatedAt: epochMs('updated_at').notNull(),
});

export const uptimeProbes = pgTable(
  'uptime_probes',
  {
    // SQLite's `integer primary key` is its rowid, given when an insert leaves it out: an identity here,
    // bigint since probes come by the million a day and the identity never goes back.
    id: bigint('id', { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity(),
    siteId: text('site_id').notNull(),
    at: epochMs('at').notNull(),
    up: boolean('up').notNull(),
    httpStatus: integer('http_status'),
    responseMs: integer('response_ms'),
    cause: text('cause'),
    certificateExpiresAt: epochMs('certificate_expires_at'),
  },
  // A site's latest probes and open hours (cluster mode reads them from here, not from a process's memory): an
  // index SQLite does without, since one process there holds them in memory.
  (table) => [index('uptime_probes_at_idx').on(table.at), index('uptime_probes_site_idx').on(table.siteId, table.at)],
);

const rollupColumns = () => ({
  siteId: text('site_id')
    .notNull()
    .references(() => sites.id, { onDelete: 'cascade' }),
  bucket: epochMs('bucket').notNull(),
  up: integer('up').notNull(),
  down: integer('down').notNull(),
  responseSum: bigint('response_sum', { mode: 'number' }).notNull(),
  responseCount: integer('response_count').notNull(),
  responseMin: integer('response_min'),
  responseMax: integer('response_max'),
});

export const uptimeHourly = pgTable('uptime_hourly', rollupColumns(), (table) => [
  primaryKey({ columns: [table.siteId, table.bucket] }),
]);
export const uptimeDaily = pgTable('uptime_daily', rollupColumns(), (table) => [
  primaryKey({ columns: [table.siteId, table.bucket] }),
]);

export const downtimeEvents = pgTable(
  'downtime_events',
  {
    // SQLite's autoincrement rowid: an identity, never reused.
    id: integer('id').primaryKey().generatedByDefaultAsIdentity(),
    siteId: text('site_id')
      .notNull()
      .references(() => sites.id, { onDelete: 'cascade' }),
    startedAt: epochMs('started_at').notNull(),
    endedAt: epochMs('ended_at'),
    cause: text('cause').notNull(),
  },
  (table) => [index('downtime_events_site_idx').on(table.siteId, table.startedAt)],
);

export const uptimeRollupMarks = pgTable('uptime_rollup_marks', {
  name: text('name').primaryKey(),
  until: epochMs('until').notNull().default(0),
});
