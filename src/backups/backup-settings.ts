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

/** The patch's values of `fields` (left out: undefined). */
const pick = <T, K extends keyof T>(from: T, fields: readonly K[]) =>
  Object.fromEntries(fields.map((field) => [field, from[field]])) as Pick<T, K>;

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
  async function retentionOf(siteId: string, row: BackupSettingsRow | undefined): Promise<RetentionPolicy> {
    const tags = await repository.tagRetentionOf(siteId);
    const policy = {} as RetentionPolicy;
    for (const field of RETENTION_FIELDS) {
      const fromTags = tags.flatMap((tag) => (tag[field] === null ? [] : [tag[field]]));
      policy[field] = row?.[field] ?? (fromTags.length > 0 ? Math.max(...fromTags) : config[field]);
    }
    return policy;
  }

  const policy = async (siteId: string): Promise<BackupPolicy> => {
    const row = await repository.readSettings(siteId);
    return { ...scheduleOf(row), ...(await retentionOf(siteId, row)) };
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
    async retention() {
      const { keepLast, keepDays, keepDaily, keepWeekly, keepMonthly, keepYearly } = config;
      const defaults: RetentionPolicy = { keepLast, keepDays, keepDaily, keepWeekly, keepMonthly, keepYearly };
      return { defaults, tags: await repository.listTagRetention() };
    },

    /** Sets a tag's retention (null fields follow the defaults). */
    setTagRetention(tag: string, values: { [field in keyof RetentionPolicy]?: number | null }) {
      const fields = Object.fromEntries(RETENTION_FIELDS.map((field) => [field, values[field] ?? null]));
      return repository.writeTagRetention({ tag, ...fields, updatedAt: clock.now() } as BackupTagRetentionRow);
    },

    deleteTagRetention: (tag: string): Promise<boolean> => repository.deleteTagRetention(tag),

    /** The sites whose scheduled backup is due now and that have no job queued or running. */
    async dueSites(siteIds: string[]): Promise<string[]> {
      const { settings, history, busy } = await repository.scheduleFacts();
      const now = clock.now();
      const none: ScheduleHistory = { lastGoodAt: null, lastFailedAt: null };
      return siteIds.filter((siteId) => {
        if (busy.has(siteId)) return false;
        const due = nextDueAt(siteId, scheduleOf(settings.get(siteId)), history.get(siteId) ?? none);
        return due !== null && due <= now;
      });
    },

    async view(siteId: string) {
      const applied = await policy(siteId);
      const history = historyOf(await repository.allBackups(siteId));
      return { ...applied, nextScheduledAt: nextDueAt(siteId, applied, history)?.toISOString() ?? null };
    },

    /**
     * The write that applies a validated patch (the route's zod schema checks the ranges): only the fields
     * it names, in one statement over the row as it is then (another patch meanwhile keeps its fields).
     */
    prepare(siteId: string, patch: BackupSettingsPatch): () => Promise<void> {
      const { enabled, intervalHours } = patch;
      const fields = { enabled, intervalHours, ...pick(patch, RETENTION_FIELDS) };
      return async () => void (await repository.patchSettings(siteId, fields, clock.now()));
    },
  };
}

export type BackupSettings = ReturnType<typeof createBackupSettings>;
