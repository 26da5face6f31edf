// The last resort as steps of a safe update: the backup taken before the update (policy `backup`),
// and its restore when putting the saved copy back did not heal the site; each waits for a backup
// of the site already under way, and the report records the wait, the backup and the restore.
import type { SiteAccess } from '../wordpress/site-access.js';
import { backupsProblems } from '../backups/index.js';
import type { createLastResort, SiteWait, Waited } from './last-resort.js';
import { addStep } from './safe-update-record.js';
import { checkUntilHealthy, type FlowDeps, type FlowOutcome, type FlowRecorder } from './safe-update-flow.js';
import { DEFAULT_BACKUP_WAIT_MINUTES, storedPolicy } from './safe-updates.schemas.js';
import type { SafeUpdatePhase } from './safe-updates.table.js';

export function createLastResortSteps({
  lastResort,
  access,
  flowDeps,
}: {
  /** None (no backups feature): no backup is taken, none is restored. */
  lastResort: ReturnType<typeof createLastResort> | null;
  access: SiteAccess;
  flowDeps: FlowDeps;
}) {
  /**
   * How long the backup (or restore) of the last resort waits for one of the site's own already
   * under way (its scheduled backup): one runs per site. The wait is the phase `waiting-for-backup`
   * and the running safe update's message, then a `wait-for-backup` step of the report.
   */
  function siteWait(record: FlowRecorder, phase: SafeUpdatePhase, before: string): SiteWait {
    // (a policy stored before backupWaitMinutes existed reads with its default)
    const minutes = storedPolicy(record.row()).backupWaitMinutes;
    const limitMinutes = minutes ?? DEFAULT_BACKUP_WAIT_MINUTES;
    return {
      limitMs: limitMinutes * 60_000,
      onWait: (busy) =>
        record.phase(phase, {
          message: `waiting for the site's ${busy.label} to finish before ${before} (at most ${limitMinutes} min)`,
        }),
    };
  }

  async function recordWait(record: FlowRecorder, waited: Waited, started: number, stillBusy: boolean): Promise<void> {
    if (!waited) return;
    const seconds = Math.round(waited.ms / 1000);
    await addStep(
      record,
      'wait-for-backup',
      !stillBusy,
      started,
      `the site's ${waited.busy.label} ${stillBusy ? 'was still running after' : 'finished after'} ${seconds} s`,
    );
  }

  return {
    /**
     * Before the update, outside the site's queue (the backup runs as its own job): the last resort.
     * A backup of the site still running at the end of the wait: refused, nothing updated (an update
     * under a running backup would leave that backup half old, half new, and this one untaken).
     */
    async takeBackup(record: FlowRecorder): Promise<FlowOutcome | null> {
      const row = record.row();
      const policy = storedPolicy(row);
      if (!lastResort || !policy.backup) return null;
      await record.phase('backup');
      const started = Date.now();
      const wait = siteWait(record, 'waiting-for-backup', 'taking its own backup');
      const backup = await lastResort.backup(row.siteId, wait);
      await recordWait(record, backup.waited, started, backup.busy !== undefined);
      if (backup.busy)
        return {
          status: 'failed',
          reason: backupsProblems.inProgress.name,
          message: `the site's ${backup.busy.label} was still running after ${Math.round(wait.limitMs / 60_000)} min (policy backupWaitMinutes), so no backup was taken and nothing was updated; try again when it has finished`,
        };
      await record.phase('backup', { backupId: backup.id, ...(backup.waited ? { message: null } : {}) });
      await addStep(record, 'backup', backup.id !== null, started + (backup.waited?.ms ?? 0), backup.detail);
      return null;
    },

    /** Putting the saved copy back did not heal the site: restore the backup taken before the update, check again. */
    async restoreBackup(record: FlowRecorder, outcome: FlowOutcome): Promise<FlowOutcome> {
      const row = record.row();
      if (outcome.status !== 'rollback-failed' || !lastResort || !row.backupId) return outcome;
      await record.phase('restoring-backup');
      const started = Date.now();
      const restored = await lastResort.restore(
        row.siteId,
        row.backupId,
        siteWait(record, 'restoring-backup', `restoring backup ${row.backupId}`),
      );
      await recordWait(record, restored.waited, started, restored.busy !== undefined);
      await addStep(record, 'restore-backup', restored.ok, started + (restored.waited?.ms ?? 0), restored.detail);
      if (!restored.ok)
        return {
          ...outcome,
          message: `${outcome.message}; restoring backup ${row.backupId} failed: ${restored.detail}`,
        };
      const checks = await access.read(row.siteId, (site) => checkUntilHealthy(flowDeps, site, storedPolicy(row)));
      await record.report((report) => (report.afterRollback = [...(report.afterRollback ?? []), ...checks]));
      if (!checks[checks.length - 1]!.healthy)
        return { ...outcome, message: `${outcome.message}; still unhealthy after restoring backup ${row.backupId}` };
      return {
        status: 'rolled-back',
        reason: outcome.reason,
        message: `${outcome.message}; healed by restoring backup ${row.backupId}`,
      };
    },
  };
}
