import { z } from 'zod';
import { defineSettings, positiveInt, wholeNumber } from '../shared/settings.js';
import { DEFAULT_BACKUP_LIMITS, type BackupLimitsConfig } from './backup-limits.js';
import type { OffsiteConfig } from './offsite/targets.config.js';
import type { RetentionPolicy } from './retention.js';

/** Retention (src/backups/retention.ts) is the daemon-wide default of every site's: SITEWARDEN_BACKUP_KEEP_*. */
export interface BackupsConfig extends RetentionPolicy {
  /** Backups and restores running at once, over all sites. */
  concurrency: number;
  /** A connected site is backed up when its last backup is older than this; 0 turns scheduled backups off. */
  intervalHours: number;
  /** Each backup's deadline and byte budget, derived from its listing (src/backups/backup-limits.ts). */
  limits: BackupLimitsConfig;
  /** Offsite targets (SITEWARDEN_TARGETS, SITEWARDEN_TARGET_<NAME>_*) and which ones sites back up to; none: local only. */
  offsite?: OffsiteConfig;
}

export const DEFAULT_BACKUPS_CONFIG: BackupsConfig = {
  concurrency: 2,
  intervalHours: 24,
  keepLast: 14,
  keepDays: 0,
  keepDaily: 0,
  keepWeekly: 0,
  keepMonthly: 0,
  keepYearly: 0,
  limits: DEFAULT_BACKUP_LIMITS,
};

const B = DEFAULT_BACKUPS_CONFIG;
const L = DEFAULT_BACKUP_LIMITS;

/** A grandfather-father-son count (src/backups/retention.ts): 0, the default, keeps nothing by that rule. */
const retentionCount = (name: string) =>
  z.coerce
    .number({ error: `${name} must be a whole number` })
    .int(`${name} must be a whole number`)
    .min(0, `${name} must be a whole number from 0 to 10000`)
    .max(10_000, `${name} must be a whole number from 0 to 10000`)
    .default(0);

const gfs = (unit: string, field: string) =>
  `grandfather-father-son: also keep the newest backup of each of the last N ${unit} that have one (UTC; per site: \`backups.${field}\`; per tag: \`PUT /api/backup-retention/{tag}\`)`;

/** SITEWARDEN_BACKUP_* (but the targets: src/backups/offsite/targets.config.ts), read by src/config.ts. */
export const BACKUP_SETTINGS = defineSettings({
  SITEWARDEN_BACKUP_CONCURRENCY: {
    schema: positiveInt('SITEWARDEN_BACKUP_CONCURRENCY', B.concurrency, 64),
    default: String(B.concurrency),
    doc: 'backups and restores running at once, over all sites (one per site at a time)',
    comment:
      'Backups: jobs at once over all sites, the scheduled backup interval (0 = off; sites are spread\nover it), and retention (the newest KEEP_LAST completed backups per site, plus any younger than\nKEEP_DAYS days). Interval and retention are defaults: a site can have its own\n(PATCH /api/sites/{id} with a `backups` section).',
  },
  SITEWARDEN_BACKUP_INTERVAL_HOURS: {
    schema: wholeNumber('SITEWARDEN_BACKUP_INTERVAL_HOURS', B.intervalHours, 8760),
    default: String(B.intervalHours),
    doc: 'hours between scheduled backups of a connected site, spread over the interval by a fixed per-site offset; `0` turns them off (per site: `backups.intervalHours`)',
  },
  SITEWARDEN_BACKUP_KEEP_LAST: {
    schema: positiveInt('SITEWARDEN_BACKUP_KEEP_LAST', B.keepLast, 10_000),
    default: String(B.keepLast),
    doc: 'completed backups kept per site (the newest ones; per site: `backups.keepLast`)',
  },
  SITEWARDEN_BACKUP_KEEP_DAYS: {
    schema: wholeNumber('SITEWARDEN_BACKUP_KEEP_DAYS', B.keepDays, 36_500),
    default: String(B.keepDays),
    doc: 'also keep every completed backup younger than this many days, a minimum age (`0`: count only; per site: `backups.keepDays`)',
  },
  SITEWARDEN_BACKUP_KEEP_DAILY: {
    schema: retentionCount('SITEWARDEN_BACKUP_KEEP_DAILY'),
    default: '0',
    doc: gfs('days', 'keepDaily'),
    comment:
      'Grandfather-father-son: also keep the newest backup of each of the last N days / ISO weeks / months / years.',
  },
  SITEWARDEN_BACKUP_KEEP_WEEKLY: {
    schema: retentionCount('SITEWARDEN_BACKUP_KEEP_WEEKLY'),
    default: '0',
    doc: gfs('ISO weeks', 'keepWeekly'),
  },
  SITEWARDEN_BACKUP_KEEP_MONTHLY: {
    schema: retentionCount('SITEWARDEN_BACKUP_KEEP_MONTHLY'),
    default: '0',
    doc: gfs('months', 'keepMonthly'),
  },
  SITEWARDEN_BACKUP_KEEP_YEARLY: {
    schema: retentionCount('SITEWARDEN_BACKUP_KEEP_YEARLY'),
    default: '0',
    doc: gfs('years', 'keepYearly'),
  },
  SITEWARDEN_BACKUP_DEADLINE_BASE_MINUTES: {
    schema: positiveInt('SITEWARDEN_BACKUP_DEADLINE_BASE_MINUTES', L.deadlineBaseMinutes, 7 * 24 * 60),
    default: String(L.deadlineBaseMinutes),
    doc: 'a backup’s deadline is this plus its declared bytes at `SITEWARDEN_BACKUP_MIN_THROUGHPUT_KIB`; listing the files must end within this base alone (see [“The listing is a contract”](design/backups.md#the-listing-is-a-contract))',
    comment:
      "Each backup's limits, from what the site's listing declared: deadline = BASE minutes + declared\nbytes at MIN_THROUGHPUT KiB/s (listing must end within BASE); bytes received at most declared\nbytes × BUDGET_FACTOR + BUDGET_SLACK MiB. A site past either fails its own backup.",
  },
  SITEWARDEN_BACKUP_MIN_THROUGHPUT_KIB: {
    schema: positiveInt('SITEWARDEN_BACKUP_MIN_THROUGHPUT_KIB', L.minThroughputKibPerSecond, 10 * 1024 * 1024),
    default: String(L.minThroughputKibPerSecond),
    doc: 'the slowest transfer (KiB/s) a backup is given time for: each declared MiB adds 2 s at the default',
  },
  SITEWARDEN_BACKUP_BUDGET_FACTOR: {
    schema: z.coerce
      .number({ error: 'SITEWARDEN_BACKUP_BUDGET_FACTOR must be a number' })
      .min(1, 'SITEWARDEN_BACKUP_BUDGET_FACTOR must be at least 1')
      .max(100)
      .default(L.budgetFactor),
    default: String(L.budgetFactor),
    doc: 'a backup may receive its declared bytes times this (files re-read because they changed during the backup)…',
  },
  SITEWARDEN_BACKUP_BUDGET_SLACK_MB: {
    schema: wholeNumber('SITEWARDEN_BACKUP_BUDGET_SLACK_MB', L.budgetSlackMb, 1024 * 1024),
    default: String(L.budgetSlackMb),
    doc: '…plus this many MiB; more fails the backup with `backup-budget-exceeded`',
  },
});
