import { z } from 'zod';
import { defineSettings, positiveInt } from '../shared/settings.js';

/** Uptime settings from the environment (see src/config.ts); per-site settings override the first four. */
export interface UptimeConfig {
  /** Probes running at once across all sites. */
  concurrency: number;
  defaultIntervalSeconds: number;
  defaultTimeoutMs: number;
  /** Consecutive failed probes that declare a site down (1: the first failure does). */
  confirmations: number;
  /** After an unconfirmed failure, the next probe comes this soon instead of a whole interval later. */
  recheckDelaySeconds: number;
  rawRetentionHours: number;
  hourlyRetentionDays: number;
  dailyRetentionDays: number;
  certificateWarningDays: number;
  maxBodyBytes: number;
  /** Cluster mode: how long an uptime worker's lease on its shards lasts unrenewed. */
  leaseSeconds: number;
}

export const DEFAULT_UPTIME_CONFIG: UptimeConfig = {
  concurrency: 64,
  defaultIntervalSeconds: 60,
  defaultTimeoutMs: 10_000,
  confirmations: 2,
  recheckDelaySeconds: 5,
  rawRetentionHours: 24,
  hourlyRetentionDays: 35,
  dailyRetentionDays: 400,
  certificateWarningDays: 14,
  maxBodyBytes: 1024 * 1024,
  leaseSeconds: 15,
};

/** Every window the uptime answer reports is covered by hourly roll-ups. */
const MIN_HOURLY_RETENTION_DAYS = 31;

const U = DEFAULT_UPTIME_CONFIG;

/** SITEWARDEN_UPTIME_*, read by src/config.ts. */
export const UPTIME_SETTINGS = defineSettings({
  SITEWARDEN_UPTIME_CONCURRENCY: {
    schema: positiveInt('SITEWARDEN_UPTIME_CONCURRENCY', U.concurrency, 4096),
    default: String(U.concurrency),
    doc: 'uptime probes running at once',
    comment:
      'Uptime monitoring: probes at once, per-site defaults (interval, timeout), how many\nconsecutive failures declare a site down and how soon a failure is re-checked.',
  },
  SITEWARDEN_UPTIME_INTERVAL_SECONDS: {
    schema: positiveInt('SITEWARDEN_UPTIME_INTERVAL_SECONDS', U.defaultIntervalSeconds, 86_400).pipe(
      z.number().min(10, 'SITEWARDEN_UPTIME_INTERVAL_SECONDS must be at least 10'),
    ),
    default: String(U.defaultIntervalSeconds),
    doc: 'default time between probes of a site (at least 10; per site: `PATCH /api/sites/{id}`)',
  },
  SITEWARDEN_UPTIME_TIMEOUT_MS: {
    schema: positiveInt('SITEWARDEN_UPTIME_TIMEOUT_MS', U.defaultTimeoutMs, 60_000),
    default: String(U.defaultTimeoutMs),
    doc: 'default time limit of one probe',
  },
  SITEWARDEN_UPTIME_CONFIRMATIONS: {
    schema: positiveInt('SITEWARDEN_UPTIME_CONFIRMATIONS', U.confirmations, 10),
    default: String(U.confirmations),
    doc: 'consecutive failed probes that declare a site down (1: the first failure does)',
  },
  SITEWARDEN_UPTIME_RECHECK_SECONDS: {
    schema: positiveInt('SITEWARDEN_UPTIME_RECHECK_SECONDS', U.recheckDelaySeconds, 3600),
    default: String(U.recheckDelaySeconds),
    doc: 'after an unconfirmed failure, the next probe comes this soon',
  },
  SITEWARDEN_UPTIME_MAX_BODY_BYTES: {
    schema: positiveInt('SITEWARDEN_UPTIME_MAX_BODY_BYTES', U.maxBodyBytes, 64 * 1024 * 1024),
    default: String(U.maxBodyBytes),
    doc: 'the most of a page a probe reads; a larger page is down with cause `body_too_large`',
  },
  SITEWARDEN_UPTIME_RAW_RETENTION_HOURS: {
    schema: positiveInt('SITEWARDEN_UPTIME_RAW_RETENTION_HOURS', U.rawRetentionHours, 24 * 31),
    default: String(U.rawRetentionHours),
    doc: 'how long single probes are kept',
    comment: 'Uptime history: single probes, hourly and daily roll-ups; certificate warnings.',
  },
  SITEWARDEN_UPTIME_HOURLY_RETENTION_DAYS: {
    schema: positiveInt('SITEWARDEN_UPTIME_HOURLY_RETENTION_DAYS', U.hourlyRetentionDays, 3650).pipe(
      z
        .number()
        .min(
          MIN_HOURLY_RETENTION_DAYS,
          `SITEWARDEN_UPTIME_HOURLY_RETENTION_DAYS must be at least ${MIN_HOURLY_RETENTION_DAYS} (the 30-day uptime figure reads hourly roll-ups)`,
        ),
    ),
    default: String(U.hourlyRetentionDays),
    doc: `how long hourly roll-ups are kept (at least ${MIN_HOURLY_RETENTION_DAYS}: the 30-day figure reads them)`,
  },
  SITEWARDEN_UPTIME_DAILY_RETENTION_DAYS: {
    schema: positiveInt('SITEWARDEN_UPTIME_DAILY_RETENTION_DAYS', U.dailyRetentionDays, 36_500),
    default: String(U.dailyRetentionDays),
    doc: 'how long daily roll-ups and past downtime events are kept',
  },
  SITEWARDEN_UPTIME_LEASE_SECONDS: {
    schema: positiveInt('SITEWARDEN_UPTIME_LEASE_SECONDS', U.leaseSeconds, 300).pipe(
      z.number().min(5, 'SITEWARDEN_UPTIME_LEASE_SECONDS must be at least 5'),
    ),
    default: String(U.leaseSeconds),
    doc: 'cluster mode: how long an uptime worker holds its shards unrenewed; a dead worker’s sites move to the others within about this plus a third of it (at least 5)',
  },
  SITEWARDEN_UPTIME_CERT_WARNING_DAYS: {
    schema: positiveInt('SITEWARDEN_UPTIME_CERT_WARNING_DAYS', U.certificateWarningDays, 365),
    default: String(U.certificateWarningDays),
    doc: 'certificates expiring within this many days are reported',
  },
});
