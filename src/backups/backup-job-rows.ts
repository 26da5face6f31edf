import type { JobOutcome } from '../jobs/job-kind.js';
import type { BackupRow, NewBackupRow, NewRestoreRow, RestoreRow } from './backups.table.js';

/*
 * What the job runner writes to the job row of a backup or restore (docs/jobs.md, "Who writes a
 * job row"): its params and progress from the feature's own row, and how it ended.
 */

/** What a backup's job row holds in `params`. */
export const backupJobParams = (row: Pick<NewBackupRow, 'kind' | 'retryOf'>) => ({
  kind: row.kind,
  retryOf: row.retryOf ?? null,
});

type BackupCounts = Pick<
  BackupRow,
  'files' | 'filesDone' | 'tables' | 'tablesDone' | 'rows' | 'bytesTotal' | 'bytesTransferred' | 'bytesStored'
>;

/** What a backup's job row holds in `progress`: its row's counts. */
export const backupJobProgress = (row: BackupCounts): BackupCounts => ({
  files: row.files,
  filesDone: row.filesDone,
  tables: row.tables,
  tablesDone: row.tablesDone,
  rows: row.rows,
  bytesTotal: row.bytesTotal,
  bytesTransferred: row.bytesTransferred,
  bytesStored: row.bytesStored,
});

/** A backup's job progress before it ran. */
export const noBackupProgress = backupJobProgress({
  files: 0,
  filesDone: 0,
  tables: 0,
  tablesDone: 0,
  rows: 0,
  bytesTotal: 0,
  bytesTransferred: 0,
  bytesStored: 0,
});

/**
 * How a backup's job ended, from its row: `completed`, and `partial` (the local store holds it whole,
 * an offsite copy failed: its reason says so), succeeded; `failed` failed, or was cancelled.
 */
export function backupOutcome(row: BackupRow): JobOutcome {
  return {
    state:
      row.status === 'completed' || row.status === 'partial'
        ? 'succeeded'
        : row.reason === 'cancelled'
          ? 'cancelled'
          : 'failed',
    reason: row.reason,
    message: row.error,
    progress: backupJobProgress(row),
    finishedAt: row.finishedAt ?? undefined,
  };
}

/** What a restore's job row holds in `params`. */
export const restoreJobParams = (row: Pick<NewRestoreRow, 'backupId' | 'preRestoreBackupId'>) => ({
  backupId: row.backupId,
  preRestoreBackupId: row.preRestoreBackupId ?? null,
});

/** What a restore's job row holds in `progress`: its row's counts. */
export const restoreJobProgress = (row: RestoreRow): typeof noRestoreProgress => ({
  filesRestored: row.filesRestored,
  filesDeleted: row.filesDeleted,
  tablesRestored: row.tablesRestored,
  bytesTransferred: row.bytesTransferred,
});

/** A restore's job progress before it ran. */
export const noRestoreProgress = { filesRestored: 0, filesDeleted: 0, tablesRestored: 0, bytesTransferred: 0 };

/** How a restore's job ended, from its row: `completed` succeeded, `failed` failed (or was cancelled while queued). */
export function restoreOutcome(row: RestoreRow): JobOutcome {
  return {
    state: row.status === 'completed' ? 'succeeded' : row.reason === 'cancelled' ? 'cancelled' : 'failed',
    reason: row.reason,
    message: row.error,
    progress: restoreJobProgress(row),
    finishedAt: row.finishedAt ?? undefined,
  };
}

/**
 * A run's progress written to its row, each write after the one before in the order reported (the runners
 * report without awaiting; on PostgreSQL two writes in flight at once could land in either order). The run
 * awaits `settled` before it writes its end, so that no report lands after it; `settled` throws the first
 * write that failed (the writes after it are not made), as the write itself would have thrown in the run.
 */
export function rowReports() {
  let last: Promise<void> = Promise.resolve();
  let failure: { error: unknown } | undefined;
  return {
    report(write: () => Promise<void>): void {
      last = last
        .then(() => (failure ? undefined : write()))
        .catch((error: unknown) => {
          failure ??= { error };
        });
    },
    async settled(): Promise<void> {
      await last;
      if (failure) throw failure.error;
    },
  };
}
