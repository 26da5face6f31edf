import { jobEvent, type JobContext, type Settlement } from '../jobs/job-kind.js';
import type { JobRunner } from '../jobs/job-runner.js';
import type { JobMetrics } from '../metrics/metrics.js';
import type { Clock } from '../shared/clock.js';
import { createId } from '../shared/ids.js';
import type { SiteAccess } from '../wordpress/site-access.js';
import { createConnector } from '../wordpress/connector-client.js';
import { abortableSession } from './abortable-session.js';
import { jobFailure } from './backup-job.js';
import {
  backupJobParams,
  noBackupProgress,
  restoreJobParams,
  restoreJobProgress,
  restoreOutcome,
  rowReports,
} from './backup-job-rows.js';
import { interruptedRestore } from './backup-recovery.js';
import { usable, type BackupSources } from './backup-sources.js';
import { backupsProblems } from './backups.errors.js';
import type { BackupsRepository } from './backups.repository.js';
import type { BackupRow, RestoreRow } from './backups.table.js';
import { openManifest } from './manifest.js';
import type { ObjectStore } from './object-store.js';
import { lostPart, runRestore } from './restore-runner.js';

/** A run's writes to its own row: only while it is running. */
const RUNNING = ['running'] as const;

/**
 * The restore job: a `pre_restore` backup of the site as it is now first (so the restore can itself
 * be undone, and so only what differs is sent), then the backup's files and tables sent from where
 * the backup is held (the target the user named, else local first, then its offsite targets).
 * Never rejects; a restore stopped halfway says which pre-restore backup puts the site back.
 */
export function createRestoreJob({
  repository,
  access,
  store,
  sources,
  executeBackup,
  jobs,
  clock,
  metrics,
  requestTimeoutMs,
}: {
  repository: BackupsRepository;
  access: SiteAccess;
  store: ObjectStore;
  sources: BackupSources;
  executeBackup: (row: BackupRow, signal: AbortSignal, context: JobContext, started?: Date) => Promise<Settlement>;
  jobs: JobRunner;
  clock: Clock;
  metrics?: JobMetrics;
  requestTimeoutMs: number;
}) {
  /** Runs the restore of `row` as its job `running` since `started` (the job runner's), its progress told to `context`. */
  return async function executeRestore(
    row: RestoreRow,
    signal: AbortSignal,
    context: JobContext,
    started: Date = clock.now(),
  ): Promise<Settlement> {
    await repository.updateRestore(row.id, { status: 'running', startedAt: started });
    const reports = rowReports();
    try {
      const target = await repository.findBackup(row.backupId);
      if (!usable(target))
        throw backupsProblems.notFound.create(`backup ${row.backupId} is no longer there to restore from`);
      const preId = createId('bkp', clock.now());
      const { own: pre } = await jobs.create(
        {
          id: preId,
          kind: 'backup',
          siteId: row.siteId,
          params: backupJobParams({ kind: 'pre_restore' }),
          progress: noBackupProgress,
          createdAt: clock.now(),
        },
        // Written with its job row, in the runner's transaction.
        (tx) => {
          const pre = { id: preId, siteId: row.siteId, kind: 'pre_restore' as const, status: 'queued' as const };
          const written = { ...pre, createdAt: clock.now() };
          return tx ? repository.withJob.insertBackup(tx, written) : repository.inHook.insertBackup(written);
        },
      );
      await repository.updateRestore(row.id, { preRestoreBackupId: pre.id });
      context.params(restoreJobParams({ backupId: row.backupId, preRestoreBackupId: pre.id }));
      // Run here, inside the restore (its site's turn and the store's lock are the restore's): logged as any backup.
      await jobs.runWithin(pre.id, (job, backupContext) =>
        executeBackup(pre, signal, backupContext, job.startedAt ?? undefined),
      );
      const preResult = (await repository.findBackup(pre.id))!;
      if (!usable(preResult)) {
        throw Object.assign(
          new Error(
            `the backup of the site before restoring failed (${preResult.reason ?? 'unknown'}: ${preResult.error ?? ''}); nothing was restored`,
          ),
          { reason: 'pre-restore-backup-failed' },
        );
      }
      // The target the user named is the one read (a damaged copy elsewhere must not be); else the
      // backup may live only offsite (its local copy gone, or a recovered daemon): read from where it is.
      const source = row.sourceTarget ? await sources.named(row.sourceTarget, target) : await sources.holding(target);
      const [targetManifest, currentManifest] = await Promise.all([
        openManifest(source, target.manifestHash).catch(
          lostPart('the backup’s list of files and tables (its manifest)'),
        ),
        // Opened, not read whole: the restore walks both manifests' file entries part by part.
        openManifest(store, preResult.manifestHash),
      ]);
      const progress = await access.operate(row.siteId, ({ session }) =>
        runRestore({
          connector: createConnector(abortableSession(session, signal), { operationTimeoutMs: requestTimeoutMs }),
          store: source,
          target: targetManifest,
          current: currentManifest,
          onProgress: (update) =>
            reports.report(async () => {
              const updated = await repository.updateRestore(row.id, update, RUNNING);
              if (updated) context.progress(restoreJobProgress(updated));
            }),
        }),
      );
      await reports.settled();
      // Only while it runs: a row ended meanwhile (its run settled elsewhere as interrupted) keeps that end.
      const finished = await repository.updateRestore(
        row.id,
        { ...progress, status: 'completed', finishedAt: clock.now() },
        RUNNING,
      );
      if (!finished)
        throw new Error(`restore ${row.id} was no longer running when it ended (ended elsewhere, or removed)`);
      metrics?.observeJob('restore', 'completed', finished.finishedAt!.getTime() - started.getTime());
      return {
        outcome: restoreOutcome(finished),
        events: [
          jobEvent('restore.completed', {
            siteId: row.siteId,
            restoreId: row.id,
            backupId: row.backupId,
            preRestoreBackupId: pre.id,
            durationMs: finished.finishedAt!.getTime() - started.getTime(),
          }),
        ],
      };
    } catch (error) {
      const { reason: problemReason, error: problemMessage } = jobFailure(error);
      const reason = signal.aborted ? 'interrupted' : ((error as { reason?: string }).reason ?? problemReason);
      const message = signal.aborted
        ? interruptedRestore((await repository.findRestore(row.id))?.preRestoreBackupId ?? null)
        : problemMessage;
      await reports.settled().catch(() => undefined);
      const failed = await repository.updateRestore(
        row.id,
        { status: 'failed', reason, error: message, finishedAt: clock.now() },
        RUNNING,
      );
      metrics?.observeJob('restore', 'failed', clock.now().getTime() - started.getTime());
      return {
        outcome: failed ? restoreOutcome(failed) : { state: 'failed', reason, message },
        events: [
          jobEvent('restore.failed', {
            siteId: row.siteId,
            restoreId: row.id,
            backupId: row.backupId,
            reason,
            message,
          }),
        ],
        interrupted: signal.aborted,
      };
    }
  };
}
