import type { Logger } from 'pino';
import { jobEvent, type JobKind, type Settlement } from '../jobs/job-kind.js';
import type { Clock } from '../shared/clock.js';
import { backupOutcome, restoreOutcome } from './backup-job-rows.js';
import type { BackupsRepository } from './backups.repository.js';
import type { BackupRow, RestoreRow } from './backups.table.js';

/** What recovery may still end: a row left queued or running (one already ended: the process stopped before its job row was written). */
const UNFINISHED = ['queued', 'running'] as const;

const INTERRUPTED_BACKUP =
  'the daemon stopped while this backup ran; it is retried once, as a new backup (at the next start, or by another worker at once in a cluster)';
const INTERRUPTED_PRE_RESTORE = 'the daemon stopped while this backup ran, before the restore it was taken for';
const INTERRUPTED_PRE_UPDATE =
  'the daemon stopped while this backup ran, before the safe update it was taken for (that update goes on from its own record)';
/** Why a backup the daemon stopped during failed, by what it was taken for. */
export const interruptedBackup = (kind: BackupRow['kind']) =>
  kind === 'pre_restore'
    ? INTERRUPTED_PRE_RESTORE
    : kind === 'pre_update'
      ? INTERRUPTED_PRE_UPDATE
      : INTERRUPTED_BACKUP;
export const interruptedRestore = (preRestoreBackupId: string | null) =>
  `the daemon stopped while this restore ran; it is not re-run automatically: check the site, and restore again if needed${preRestoreBackupId ? ` (backup ${preRestoreBackupId} holds the site as it was before)` : ''}`;

/**
 * What the job runner does at start-up with the backups the last process left unfinished
 * (src/jobs/job-runner.ts recover): queued ones are queued again; running ones (it was killed)
 * fail as `interrupted`; then an interrupted backup is retried once, as a new backup that reuses
 * every object the first attempt stored. Each end is written only while the row is still unfinished:
 * one another process ended meanwhile keeps its end.
 */
export function backupRecovery({
  repository,
  clock,
  logger,
  retry,
}: {
  repository: BackupsRepository;
  clock: Clock;
  logger: Logger;
  /** Queues a new backup retrying `row`; throws if the site cannot be backed up now. */
  retry: (row: BackupRow) => Promise<BackupRow>;
}): JobKind['recover'] {
  return {
    async running(job) {
      const row = (await repository.findBackup(job.id))!;
      const message = interruptedBackup(row.kind);
      // Written only while unfinished: a row the last process had already ended keeps its end.
      const failed = await repository.updateBackup(
        row.id,
        { status: 'failed', reason: 'interrupted', error: message, finishedAt: clock.now() },
        UNFINISHED,
      );
      // Its job ends as its row says (the events of its end were not logged: the process stopped first).
      if (!failed)
        return { events: [], outcome: backupOutcome((await repository.findBackup(job.id))!), interrupted: false };
      return {
        outcome: backupOutcome(failed),
        events: [
          jobEvent('backup.failed', {
            siteId: row.siteId,
            backupId: row.id,
            kind: row.kind,
            reason: 'interrupted',
            message,
          }),
        ],
      };
    },
    async afterwards() {
      const retried = [];
      // Only a site's newest backup is retried: a backup taken since makes the retry pointless.
      for (const row of await repository.unretriedInterrupted()) {
        if ((await repository.allBackups(row.siteId))[0]?.id !== row.id || (await repository.activeJob(row.siteId)))
          continue;
        try {
          retried.push({ job: row, fields: { retryId: (await retry(row)).id } });
        } catch (error) {
          logger.warn({ err: error, siteId: row.siteId, backupId: row.id }, 'could not retry an interrupted backup');
        }
      }
      return retried;
    },
  };
}

/** An interrupted restore is never re-run on its own: the site may have changed since, so an operator decides. */
export function restoreRecovery({
  repository,
  clock,
}: {
  repository: BackupsRepository;
  clock: Clock;
}): JobKind['recover'] {
  /**
   * Ends a restore the last process left unfinished as failed, with the event that says so; one that had
   * ended meanwhile (written only while unfinished) ends its job as its row says.
   */
  async function failRestore(row: RestoreRow, reason: string, message: string): Promise<Settlement> {
    const failed = await repository.updateRestore(
      row.id,
      { status: 'failed', reason, error: message, finishedAt: clock.now() },
      UNFINISHED,
    );
    if (!failed)
      return { events: [], outcome: restoreOutcome((await repository.findRestore(row.id))!), interrupted: false };
    return {
      outcome: restoreOutcome(failed),
      events: [
        jobEvent('restore.failed', { siteId: row.siteId, restoreId: row.id, backupId: row.backupId, reason, message }),
      ],
    };
  }
  return {
    async running(job) {
      const row = (await repository.findRestore(job.id))!;
      return failRestore(row, 'interrupted', interruptedRestore(row.preRestoreBackupId));
    },
    async queued(job) {
      const row = (await repository.findRestore(job.id))!;
      const target = await repository.findBackup(row.backupId);
      if (target?.status === 'completed' && target.manifestHash) return 'requeue';
      return failRestore(row, 'backup-not-found', `backup ${row.backupId} is no longer there to restore from`);
    },
  };
}
