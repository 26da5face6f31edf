import type { Clock } from '../shared/clock.js';
import { latestSlot } from '../jobs/spread.js';
import type { BackupsConfig } from './backups.config.js';
import type { BackupsRepository, ScheduleHistory } from './backups.repository.js';
import type { BackupRow, BackupSettingsRow } from './backups.table.js';

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
const FAILED_RETRY_MS = 3_600_000;

/**
 * Per-site backup settings and the schedule they make: each site's backups fall at a fixed
 * offset into its interval (src/jobs/spread.ts), so sites backed up daily are spread over the day.
 */
export function createBackupSettings({
  repository,
  config,
  clock,
}: {
  repository: BackupsRepository;
  config: BackupsConfig;
  clock: Clock;
}) {
  function policyOf(row: BackupSettingsRow | undefined): BackupPolicy {
    return {
      enabled: row?.enabled ?? true,
      intervalHours: row?.intervalHours ?? config.intervalHours,
      keepLast: row?.keepLast ?? config.keepLast,
      keepDays: row?.keepDays ?? config.keepDays,
    };
  }

  const policy = (siteId: string): BackupPolicy => policyOf(repository.readSettings(siteId));

  /**
   * When the site's next scheduled backup falls due: its latest slot if no good backup (nor a
   * failure within the last hour) came since, else the next slot. null when it is not scheduled.
   */
  function nextDueAt(
    siteId: string,
    { enabled, intervalHours }: BackupPolicy,
    { lastGoodAt, lastFailedAt }: ScheduleHistory,
  ): Date | null {
    if (!enabled || intervalHours <= 0) return null;
    const intervalMs = intervalHours * 3_600_000;
    const now = clock.now();
    const slot = latestSlot(siteId, intervalMs, now);
    if (lastGoodAt && lastGoodAt >= slot) return new Date(slot.getTime() + intervalMs);
    if (lastFailedAt && lastFailedAt.getTime() > now.getTime() - FAILED_RETRY_MS)
      return new Date(lastFailedAt.getTime() + FAILED_RETRY_MS);
    return lastGoodAt ? slot : now;
  }

  /** The newest good and newest failed own backup in a site's history (newest first). */
  function historyOf(rows: BackupRow[]): ScheduleHistory {
    const own = rows.filter((row) => row.kind !== 'pre_restore');
    return {
      lastGoodAt: own.find((row) => row.status !== 'failed')?.createdAt ?? null,
      lastFailedAt: own.find((row) => row.status === 'failed')?.createdAt ?? null,
    };
  }

  return {
    policy,

    /** The sites whose scheduled backup is due now and that have no job queued or running. */
    dueSites(siteIds: string[]): string[] {
      const { settings, history, busy } = repository.scheduleFacts();
      const now = clock.now();
      const none: ScheduleHistory = { lastGoodAt: null, lastFailedAt: null };
      return siteIds.filter((siteId) => {
        if (busy.has(siteId)) return false;
        const due = nextDueAt(siteId, policyOf(settings.get(siteId)), history.get(siteId) ?? none);
        return due !== null && due <= now;
      });
    },

    view(siteId: string) {
      const applied = policy(siteId);
      return {
        ...applied,
        nextScheduledAt: nextDueAt(siteId, applied, historyOf(repository.allBackups(siteId)))?.toISOString() ?? null,
      };
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
