import type { Logger } from 'pino';
import type { StateDb } from '../db/state-db.js';
import type { JobRunner } from '../jobs/job-runner.js';
import type { OwnRow } from '../jobs/job-lifecycle-store.js';
import type { Clock } from '../shared/clock.js';
import { createId } from '../shared/ids.js';
import type { SiteAccess } from '../wordpress/site-access.js';
import { backupRecovery, restoreRecovery } from './backup-recovery.js';
import type { createBackupJob } from './backup-job.js';
import { backupJobParams, noBackupProgress, noRestoreProgress, restoreJobParams } from './backup-job-rows.js';
import { usable } from './backup-sources.js';
import type { BackupsConfig } from './backups.config.js';
import { backupsProblems } from './backups.errors.js';
import type { ActiveJob, BackupsRepository } from './backups.repository.js';
import type { BackupKind, BackupRow, RestoreRow } from './backups.table.js';
import type { StoreLock } from './concurrency.js';
import type { createRestoreJob } from './restore-job.js';

/**
 * The backup and restore kinds of the job runner, and the requests that queue them: one job per
 * site at a time (`backup-in-progress` otherwise), the site connected, a backup's or restore's row
 * written with its job row. Both kinds share the `backups` pool and run under the store's shared
 * lock; a finished backup applies the site's retention after it (outside the lock), and at
 * shutdown a backup is aborted while a restore started runs to its end.
 */
export function createBackupRequests({
  repository,
  access,
  jobs,
  config,
  lock,
  clock,
  logger,
  executeBackup,
  executeRestore,
  applyRetention,
  findBackup,
}: {
  repository: BackupsRepository;
  access: SiteAccess;
  jobs: JobRunner;
  config: BackupsConfig;
  lock: StoreLock;
  clock: Clock;
  logger: Logger;
  executeBackup: ReturnType<typeof createBackupJob>;
  executeRestore: ReturnType<typeof createRestoreJob>;
  applyRetention: (siteId: string) => Promise<unknown>;
  findBackup: (siteId: string, backupId: string) => Promise<BackupRow>;
}) {
  /** Backups and restores need the site connected; reading its backups and settings only that it exists. */
  const requireConnected = (siteId: string) => access.connected(siteId);

  const inProgress = (siteId: string, active: ActiveJob) =>
    backupsProblems.inProgress.create(
      `a ${active.kind} of site ${siteId} is already queued or running (${active.id}); try again when it has finished`,
      { jobId: active.id, jobKind: active.kind },
    );

  /** Refuses (`backup-in-progress`) while a backup or restore of the site is queued or running. */
  async function claimSite(siteId: string): Promise<void> {
    const active = await repository.activeJob(siteId);
    if (active) throw inProgress(siteId, active);
  }

  /**
   * `insert` (the job's own row, written with its job row in the runner's transaction) after the site's
   * claim is checked again in that same transaction, so that two requests at once never both write a job.
   */
  const claimed =
    <T>(siteId: string, insert: () => T, insertOn: (tx: StateDb) => Promise<T>): OwnRow<T> =>
    (tx) => {
      // In the job store's transaction (PostgreSQL): the site's row locked, then its claim read.
      if (tx)
        return repository.withJob.activeJob(tx, siteId).then((active) => {
          if (active) throw inProgress(siteId, active);
          return insertOn(tx);
        });
      const active = repository.inHook.activeJob(siteId);
      if (active) throw inProgress(siteId, active);
      return insert();
    };

  async function enqueueBackup(siteId: string, kind: BackupKind, retryOf?: string): Promise<BackupRow> {
    await requireConnected(siteId);
    await claimSite(siteId);
    const id = createId('bkp', clock.now());
    const job = { id, kind: 'backup', siteId, createdAt: clock.now() };
    const row = { id, siteId, kind, status: 'queued' as const, retryOf, createdAt: job.createdAt };
    // The backup's row and its job row, written together; the job runner writes the job row from then on.
    const { own } = await jobs.submit(
      { ...job, params: backupJobParams({ kind, retryOf }), progress: noBackupProgress },
      claimed(
        siteId,
        () => repository.inHook.insertBackup(row),
        (tx) => repository.withJob.insertBackup(tx, row),
      ),
    );
    return own;
  }

  jobs.register('backup', {
    pool: { name: 'backups', concurrency: config.concurrency },
    exclusive: true,
    atShutdown: 'abort',
    cancelsWhileRunning: true,
    run: (job, signal, context) =>
      lock.shared(async () =>
        executeBackup((await repository.findBackup(job.id))!, signal, context, job.startedAt ?? undefined),
      ),
    // Outside the shared lock: retention's garbage collection takes the store exclusively.
    after: async (job) => {
      const row = await repository.findBackup(job.id);
      if (usable(row)) await applyRetention(row.siteId);
    },
    // In the transaction that cancels the job, while the row is queued as its job is.
    cancelQueued(job, message, tx) {
      const changes = { status: 'failed', reason: 'cancelled', error: message, finishedAt: clock.now() } as const;
      if (tx) return repository.updateBackup(job.id, changes, ['queued'], tx).then(() => undefined);
      repository.inHook.updateBackup(job.id, changes, ['queued']);
    },
    recover: backupRecovery({
      repository,
      clock,
      logger,
      retry: (row) => enqueueBackup(row.siteId, row.kind, row.id),
    }),
  });
  // A restore stopped halfway would leave the site half old, half new: it runs to its end once started.
  jobs.register('restore', {
    pool: { name: 'backups', concurrency: config.concurrency },
    exclusive: true,
    atShutdown: 'grace',
    cancelsWhileRunning: false,
    run: (job, signal, context) =>
      lock.shared(async () =>
        executeRestore((await repository.findRestore(job.id))!, signal, context, job.startedAt ?? undefined),
      ),
    cancelQueued(job, message, tx) {
      const changes = { status: 'failed', reason: 'cancelled', error: message, finishedAt: clock.now() } as const;
      if (tx) return repository.updateRestore(job.id, changes, ['queued'], tx).then(() => undefined);
      repository.inHook.updateRestore(job.id, changes, ['queued']);
    },
    recover: restoreRecovery({ repository, clock }),
  });

  /** Queues a restore of the backup; `from` names the offsite target to read it from (else: local first, then its targets). */
  async function restore(siteId: string, backupId: string, from?: string): Promise<RestoreRow> {
    await requireConnected(siteId);
    const target = await findBackup(siteId, backupId);
    if (!usable(target))
      throw backupsProblems.notCompleted.create(
        `backup ${backupId} is ${target.status}; only a completed backup can be restored`,
      );
    await claimSite(siteId);
    const id = createId('rst', clock.now());
    const createdAt = clock.now();
    const job = { id, kind: 'restore', siteId, createdAt, params: restoreJobParams({ backupId }) };
    const row = { id, siteId, backupId, sourceTarget: from ?? null, status: 'queued' as const, createdAt };
    const { own } = await jobs.submit(
      { ...job, progress: noRestoreProgress },
      claimed(
        siteId,
        () => repository.inHook.insertRestore(row),
        (tx) => repository.withJob.insertRestore(tx, row),
      ),
    );
    return own;
  }

  return { requireConnected, claimSite, enqueueBackup, restore };
}
