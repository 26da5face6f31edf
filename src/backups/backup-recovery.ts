import type { Logger } from 'pino';
import type { Clock } from '../shared/clock.js';
import type { BackupsRepository } from './backups.repository.js';
import type { BackupRow, RestoreRow } from './backups.table.js';
import type { Events } from '../shared/event-bus.js';

export const INTERRUPTED_BACKUP = 'the daemon stopped while this backup ran; it is retried once at the next start';
export const INTERRUPTED_PRE_RESTORE = 'the daemon stopped while this backup ran, before the restore it was taken for';
export const interruptedRestore = (preRestoreBackupId: string | null) =>
  `the daemon stopped while this restore ran; it is not re-run automatically: check the site, and restore again if needed${preRestoreBackupId ? ` (backup ${preRestoreBackupId} holds the site as it was before)` : ''}`;

export function logInterrupted(
  events: Events,
  kind: 'backup' | 'restore',
  row: { id: string; siteId: string },
  action: 'requeued' | 'failed' | 'retried',
  extra: Record<string, unknown> = {},
): void {
  events.emit('job.interrupted', { kind, jobId: row.id, siteId: row.siteId, action, ...extra });
}

/**
 * At start-up, for the jobs the last process left unfinished: queued ones are queued again;
 * running ones (it was killed) fail as `interrupted`; an interrupted backup is retried once, as a
 * new backup that reuses every object the first attempt stored. An interrupted restore is never
 * re-run on its own: the site may have changed since, so an operator decides.
 */
export function recoverUnfinished({
  repository,
  clock,
  logger,
  events,
  scheduleBackup,
  scheduleRestore,
  retry,
}: {
  repository: BackupsRepository;
  clock: Clock;
  logger: Logger;
  events: Events;
  scheduleBackup: (row: BackupRow) => void;
  scheduleRestore: (row: RestoreRow, target: BackupRow) => void;
  /** Queues a new backup retrying `row`; throws if the site cannot be backed up now. */
  retry: (row: BackupRow) => BackupRow;
}): void {
  const at = clock.now();
  for (const row of repository.backupsWithStatus('running')) {
    const message = row.kind === 'pre_restore' ? INTERRUPTED_PRE_RESTORE : INTERRUPTED_BACKUP;
    repository.updateBackup(row.id, { status: 'failed', reason: 'interrupted', error: message, finishedAt: at });
    events.emit('backup.failed', {
      siteId: row.siteId,
      backupId: row.id,
      kind: row.kind,
      reason: 'interrupted',
      message,
    });
    logInterrupted(events, 'backup', row, 'failed');
  }
  for (const row of repository.restoresWithStatus('running')) {
    const message = interruptedRestore(row.preRestoreBackupId);
    repository.updateRestore(row.id, { status: 'failed', reason: 'interrupted', error: message, finishedAt: at });
    events.emit('restore.failed', {
      siteId: row.siteId,
      restoreId: row.id,
      backupId: row.backupId,
      reason: 'interrupted',
      message,
    });
    logInterrupted(events, 'restore', row, 'failed');
  }
  for (const row of repository.backupsWithStatus('queued')) {
    scheduleBackup(row);
    logInterrupted(events, 'backup', row, 'requeued');
  }
  for (const row of repository.restoresWithStatus('queued')) {
    const target = repository.findBackup(row.backupId);
    if (target?.status === 'completed' && target.manifestHash) {
      scheduleRestore(row, target);
      logInterrupted(events, 'restore', row, 'requeued');
      continue;
    }
    const message = `backup ${row.backupId} is no longer there to restore from`;
    repository.updateRestore(row.id, { status: 'failed', reason: 'backup-not-found', error: message, finishedAt: at });
    events.emit('restore.failed', {
      siteId: row.siteId,
      restoreId: row.id,
      backupId: row.backupId,
      reason: 'backup-not-found',
      message,
    });
  }
  // Only a site's newest backup is retried: a backup taken since makes the retry pointless.
  for (const row of repository.unretriedInterrupted()) {
    if (repository.allBackups(row.siteId)[0]?.id !== row.id || repository.activeJob(row.siteId)) continue;
    try {
      logInterrupted(events, 'backup', row, 'retried', { retryId: retry(row).id });
    } catch (error) {
      logger.warn({ err: error, siteId: row.siteId, backupId: row.id }, 'could not retry an interrupted backup');
    }
  }
}
