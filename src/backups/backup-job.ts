import type { Logger } from 'pino';
import {
  CANCELLED_MESSAGE,
  jobEvent,
  wasCancelled,
  type JobContext,
  type JobOutcome,
  type Settlement,
} from '../jobs/job-kind.js';
import type { JobMetrics } from '../metrics/metrics.js';
import type { Clock } from '../shared/clock.js';
import { isAppError } from '../shared/errors.js';
import type { SiteAccess } from '../wordpress/site-access.js';
import { CONNECTOR_DOWNLOAD_HINT, createConnector } from '../wordpress/connector-client.js';
import { abortableSession } from './abortable-session.js';
import { createBackupLimits } from './backup-limits.js';
import { interruptedBackup } from './backup-recovery.js';
import { runBackup } from './backup-runner.js';
import type { BackupsConfig } from './backups.config.js';
import type { BackupsRepository } from './backups.repository.js';
import type { BackupRow } from './backups.table.js';
import { backupJobProgress, backupOutcome, rowReports } from './backup-job-rows.js';
import { openManifest } from './manifest.js';
import type { BackupStore } from './backup-store.js';
import type { OffsiteTargets } from './offsite/offsite-targets.js';
import type { SnapshotRecord } from './offsite/snapshots.js';

/** A run's writes to its own row: only while it is running. */
const RUNNING = ['running'] as const;

/** Why a backup or restore failed, in the row's terms: the problem's name and detail, or an old connector said so. */
export function jobFailure(error: unknown): { reason: string; error: string } {
  if (isAppError(error) && error.extensions.siteCode === 'rest_no_route') {
    return {
      reason: 'connector-outdated',
      error: `the site’s Sitewarden connector is missing or has no backup routes: install the current one from ${CONNECTOR_DOWNLOAD_HINT}`,
    };
  }
  return {
    reason: isAppError(error) ? error.problem.name : 'internal-error',
    error: isAppError(error) ? error.detail : (error as Error).message,
  };
}

/**
 * The backup job: one backup row run to its end against the site's connector, into the local
 * content-addressed store, then copied to the site's offsite targets. Never rejects; a signal
 * aborted by a cancel ends it `cancelled`, by shutdown `interrupted` (retried at the next start).
 */
export function createBackupJob({
  repository,
  access,
  store,
  offsite,
  config,
  clock,
  logger,
  metrics,
  requestTimeoutMs,
  scratchPathOf,
}: {
  repository: BackupsRepository;
  access: SiteAccess;
  /** The `local` target: a backup is taken into it, sealed there, then copied to the site's offsite targets. */
  store: BackupStore;
  offsite: OffsiteTargets;
  config: BackupsConfig;
  clock: Clock;
  logger: Logger;
  metrics?: JobMetrics;
  requestTimeoutMs: number;
  scratchPathOf: (siteId: string) => string;
}) {
  /** Runs the backup of `row` as its job `running` since `started` (the job runner's), its progress told to `context`. */
  return async function executeBackup(
    row: BackupRow,
    signal: AbortSignal,
    context: JobContext,
    started: Date = clock.now(),
  ): Promise<Settlement> {
    // Object files carry the file system's time, not the service clock's: what this backup writes is newer than this.
    const writtenSince = Date.now();
    await repository.updateBackup(row.id, { status: 'running', startedAt: started });
    const reports = rowReports();
    try {
      const { site, session: siteSession } = await access.connected(row.siteId);
      // A site that stalls or sends without end runs into its own deadline, which stops its calls like shutdown does.
      const limits = createBackupLimits(config.limits);
      const session = abortableSession(siteSession, AbortSignal.any([signal, limits.signal]));
      const previousRow = (await repository.completedBackups(row.siteId)).find((candidate) => candidate.manifestHash);
      const previous = previousRow?.manifestHash
        ? await openManifest(store.objects, previousRow.manifestHash).catch(() => null)
        : null;
      const result = await runBackup({
        connector: createConnector(session, { operationTimeoutMs: requestTimeoutMs }),
        store: store.objects,
        previous,
        siteUrl: site.url,
        now: () => clock.now(),
        onProgress: (progress) =>
          reports.report(async () => {
            const updated = await repository.updateBackup(row.id, progress, RUNNING);
            if (updated) context.progress(backupJobProgress(updated));
          }),
        scratchPath: scratchPathOf(row.siteId),
        limits,
      }).finally(() => limits.dispose());
      const snapshot: SnapshotRecord = {
        format: 1,
        backupId: row.id,
        siteId: row.siteId,
        siteUrl: site.url,
        kind: row.kind,
        createdAt: row.createdAt.toISOString(),
        finishedAt: clock.now().toISOString(),
        manifestHash: result.manifestHash,
        files: result.progress.files,
        tables: result.progress.tables,
        rows: result.progress.rows,
        bytesTotal: result.progress.bytesTotal,
      };
      // Every object and the manifest are stored: the store's own record of the backup last (the cluster's repository).
      await store.seal(snapshot);
      // Then the offsite copies: a target that fails leaves the backup `partial`, never silently `completed`.
      const copies = await offsite.replicate({
        local: store.objects,
        targets: offsite.targetsFor(row.siteId),
        writtenSince,
        snapshot,
      });
      // Objects a verify found damaged on a target went up again with this copy: said so, with the backup that did it.
      for (const { target, objects } of copies.resent)
        logger.info(
          { siteId: row.siteId, backupId: row.id, target, objects },
          'objects a verify had found damaged on the target were sent again with this backup’s copy',
        );
      const partial = copies.failures.length > 0;
      await reports.settled();
      // Only while it runs: a row ended meanwhile (its run settled elsewhere as interrupted) keeps that end.
      const finished = await repository.updateBackup(
        row.id,
        {
          ...result.progress,
          status: partial ? 'partial' : 'completed',
          manifestHash: result.manifestHash,
          targets: copies.held,
          ...(partial
            ? {
                reason: 'backup-target-failed',
                error: copies.failures.map((failure) => `target ${failure.target}: ${failure.message}`).join('; '),
              }
            : {}),
          finishedAt: clock.now(),
        },
        RUNNING,
      );
      if (!finished)
        throw new Error(`backup ${row.id} was no longer running when it ended (ended elsewhere, or removed)`);
      metrics?.observeJob('backup', 'completed', finished.finishedAt!.getTime() - started.getTime());
      const outcome = backupOutcome(finished);
      if (partial)
        return {
          outcome,
          events: [
            jobEvent('backup.partial', {
              siteId: row.siteId,
              backupId: row.id,
              kind: row.kind,
              targets: copies.held,
              failedTargets: copies.failures.map((failure) => failure.target),
              message: finished.error,
            }),
          ],
        };
      return {
        outcome,
        events: [
          jobEvent('backup.completed', {
            siteId: row.siteId,
            backupId: row.id,
            kind: row.kind,
            files: finished.files,
            tables: finished.tables,
            bytesTransferred: finished.bytesTransferred,
            bytesStored: finished.bytesStored,
            durationMs: finished.finishedAt!.getTime() - started.getTime(),
          }),
        ],
      };
    } catch (error) {
      const { reason, error: message } = wasCancelled(signal)
        ? { reason: 'cancelled', error: CANCELLED_MESSAGE }
        : signal.aborted
          ? { reason: 'interrupted', error: interruptedBackup(row.kind) }
          : jobFailure(error);
      await reports.settled().catch(() => undefined);
      const failed = await repository.updateBackup(
        row.id,
        { status: 'failed', reason, error: message, finishedAt: clock.now() },
        RUNNING,
      );
      metrics?.observeJob('backup', 'failed', (failed?.finishedAt ?? clock.now()).getTime() - started.getTime());
      const outcome: JobOutcome = failed ? backupOutcome(failed) : { state: 'failed', reason, message };
      // A cancel is told by job.cancelled (the runner), not as a failure.
      if (reason === 'cancelled') return { events: [], outcome };
      return {
        outcome,
        events: [jobEvent('backup.failed', { siteId: row.siteId, backupId: row.id, kind: row.kind, reason, message })],
        interrupted: signal.aborted,
      };
    }
  };
}
