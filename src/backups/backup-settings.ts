import type { Clock } from '../shared/clock.js';
import { latestSlot } from '../jobs/spread.js';
import type { BackupsConfig } from './backups.config.js';
import type { BackupsRepository, ScheduleHistory } from './backups.repository.js';
import type { BackupRow, BackupSettingsRow, BackupTagRetentionRow } from './backups.table.js';
import { RETENTION_FIELDS, type RetentionPolicy } from './retention.js';

/** A site's backup schedule and retention as they apply (its own values, else the SITEWARDEN_BACKUP_* defaults). */
export interface BackupPolicy extends RetentionPolicy {
  enabled: boolean;
  /** 0: no scheduled backups. */
  intervalHours: number;
}

/** A `backups` section of `PATCH /api/sites/{id}`: left out keeps the value, null restores the default. */
export type BackupSettingsPatch = {
  enabled?: boolean;
  intervalHours?: number | null;
} & { [field in keyof RetentionPolicy]?: number | null };

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
  /** The schedule alone (the scheduler's hot path: no tag lookups). */
  function scheduleOf(row: BackupSettingsRow | undefined): Pick<BackupPolicy, 'enabled' | 'intervalHours'> {
    return { enabled: row?.enabled ?? true, intervalHours: row?.intervalHours ?? config.intervalHours };
  }

  /** Each retention value: the site's own, else the largest of its tags' (what any of them keeps), else the default. */
  function retentionOf(siteId: string, row: BackupSettingsRow | undefined): RetentionPolicy {
    const tags = repository.tagRetentionOf(siteId);
    const policy = {} as RetentionPolicy;
    for (const field of RETENTION_FIELDS) {
      const fromTags = tags.flatMap((tag) => (tag[field] === null ? [] : [tag[field]]));
      policy[field] = row?.[field] ?? (fromTags.length > 0 ? Math.max(...fromTags) : config[field]);
    }
    return policy;
  }

  const policy = (siteId: string): BackupPolicy => {
    const row = repository.readSettings(siteId);
    return { ...scheduleOf(row), ...retentionOf(siteId, row) };
  };

  /**
   * When the site's next scheduled backup falls due: its latest slot if no good backup (nor a
   * failure within the last hour) came since, else the next slot. null when it is not scheduled.
   */
  function nextDueAt(
    siteId: string,
    { enabled, intervalHours }: Pick<BackupPolicy, 'enabled' | 'intervalHours'>,
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

    /** The daemon-wide retention and each tag's. */
    retention() {
      const { keepLast, keepDays, keepDaily, keepWeekly, keepMonthly, keepYearly } = config;
      const defaults: RetentionPolicy = { keepLast, keepDays, keepDaily, keepWeekly, keepMonthly, keepYearly };
      return { defaults, tags: repository.listTagRetention() };
    },

    /** Sets a tag's retention (null fields follow the defaults). */
    setTagRetention(tag: string, values: { [field in keyof RetentionPolicy]?: number | null }) {
      const fields = Object.fromEntries(RETENTION_FIELDS.map((field) => [field, values[field] ?? null]));
      return repository.writeTagRetention({ tag, ...fields, updatedAt: clock.now() } as BackupTagRetentionRow);
    },

    deleteTagRetention: (tag: string): boolean => repository.deleteTagRetention(tag),

    /** The sites whose scheduled backup is due now and that have no job queued or running. */
    dueSites(siteIds: string[]): string[] {
      const { settings, history, busy } = repository.scheduleFacts();
      const now = clock.now();
      const none: ScheduleHistory = { lastGoodAt: null, lastFailedAt: null };
      return siteIds.filter((siteId) => {
        if (busy.has(siteId)) return false;
        const due = nextDueAt(siteId, scheduleOf(settings.get(siteId)), history.get(siteId) ?? none);
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
        ...Object.fromEntries(
          RETENTION_FIELDS.map((field) => [
            field,
            patch[field] === undefined ? (current?.[field] ?? null) : patch[field],
          ]),
        ),
      } as Omit<BackupSettingsRow, 'updatedAt'>;
      return () => void repository.writeSettings({ ...next, updatedAt: clock.now() });
    },
  };
}

export type BackupSettings = ReturnType<typeof createBackupSettings>;
