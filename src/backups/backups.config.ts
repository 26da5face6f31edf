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
