import type { Clock } from '../shared/clock.js';
import { latestSlot } from '../jobs/spread.js';
import type { BackupsConfig } from './backups.config.js';
import type { BackupsRepository } from './backups.repository.js';
import type { BackupRow } from './backups.table.js';

/** A site's backup schedule and retention as they apply (its own values, else the SITEWARDEN_BACKUP_* defaults). */
export interface BackupPolicy {
  enabled: boolean;
  /** 0: no scheduled backups. */
  intervalHours: number;
  keepLast: number;
  keepDays: number;
}

/** A `backups` section of `PATCH /api/sites/{id}`: left out keeps the value, null restores the default. */
export interface BackupSettingsPatch {
  enabled?: boolean;
  intervalHours?: number | null;
  keepLast?: number | null;
  keepDays?: number | null;
}

/** A site whose scheduled backup just failed is tried again after this, not at every tick. */
export const FAILED_RETRY_MS = 3_600_000;

/**
 * Per-site backup settings and the schedule they make: each site's backups fall at a fixed
 * offset into its interval (src/jobs/spread.ts), so sites backed up daily are spread over the day.
 */
export function createBackupSettings({ repository, config, clock }: { repository: BackupsRepository; config: BackupsConfig; clock: Clock }) {
  function policy(siteId: string): BackupPolicy {
    const row = repository.readSettings(siteId);
    return {
      enabled: row?.enabled ?? true,
      intervalHours: row?.intervalHours ?? config.intervalHours,
      keepLast: row?.keepLast ?? config.keepLast,
      keepDays: row?.keepDays ?? config.keepDays,
    };
  }

  /**
   * When the site's next scheduled backup falls due: its latest slot if no good backup (nor a
   * failure within the last hour) came since, else the next slot. null when it is not scheduled.
   */
  function nextDueAt(siteId: string, history: BackupRow[]): Date | null {
    const { enabled, intervalHours } = policy(siteId);
    if (!enabled || intervalHours <= 0) return null;
    const intervalMs = intervalHours * 3_600_000;
    const now = clock.now();
    const slot = latestSlot(siteId, intervalMs, now);
    const own = history.filter((row) => row.kind !== 'pre_restore');
    const lastGood = own.find((row) => row.status !== 'failed');
    const lastFailed = own.find((row) => row.status === 'failed');
    if (lastGood && lastGood.createdAt >= slot) return new Date(slot.getTime() + intervalMs);
    if (lastFailed && lastFailed.createdAt.getTime() > now.getTime() - FAILED_RETRY_MS) return new Date(lastFailed.createdAt.getTime() + FAILED_RETRY_MS);
    return lastGood ? slot : now;
  }

  return {
    policy,
    nextDueAt,

    view(siteId: string) {
      return { ...policy(siteId), nextScheduledAt: nextDueAt(siteId, repository.allBackups(siteId))?.toISOString() ?? null };
    },

    /** The write that applies a validated patch (the route's zod schema checks the ranges). */
    prepare(siteId: string, patch: BackupSettingsPatch): () => void {
      const current = repository.readSettings(siteId);
      const next = {
        siteId,
        enabled: patch.enabled ?? current?.enabled ?? true,
        intervalHours: patch.intervalHours === undefined ? (current?.intervalHours ?? null) : patch.intervalHours,
        keepLast: patch.keepLast === undefined ? (current?.keepLast ?? null) : patch.keepLast,
        keepDays: patch.keepDays === undefined ? (current?.keepDays ?? null) : patch.keepDays,
      };
      return () => void repository.writeSettings({ ...next, updatedAt: clock.now() });
    },
  };
}

export type BackupSettings = ReturnType<typeof createBackupSettings>;
