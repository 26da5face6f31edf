import type { Logger } from 'pino';
import { jobEvent, type Settlement } from '../../jobs/job-kind.js';
import type { JobRunner } from '../../jobs/job-runner.js';
import type { JobRow } from '../../jobs/jobs.table.js';
import type { Clock } from '../../shared/clock.js';
import { z } from 'zod';
import { isAppError } from '../../shared/errors.js';
import { createId } from '../../shared/ids.js';
import { parseStored, parseStoredOrNull } from '../../shared/stored-json.js';
import { backupJobParams, backupOutcome } from '../backup-job-rows.js';
import type { BackupsRepository } from '../backups.repository.js';
import type { BackupRow } from '../backups.table.js';
import type { createStoreLock } from '../concurrency.js';
import { offsiteProblems } from './offsite.errors.js';
import type { createOffsiteTargets } from './offsite-targets.js';
import { pruneRepository, type PruneResult } from './prune.js';
import type { RemovedSitesRepository } from './removed-sites.repository.js';
import { deleteSnapshot, readSnapshot } from './snapshots.js';
import { LOCAL_TARGET } from './targets.config.js';

/** A prune is a job of its own (no site): the request answers at once, the daily prune queues one per target. */
export const PRUNE_KIND = 'target-prune';
/** What a prune job's row holds in `params`. */
const PruneParams = z.object({ target: z.string() });
type PruneParams = z.infer<typeof PruneParams>;

/**
 * What is done to the offsite targets beyond copying backups: forgetting the snapshots of backups
 * retention deleted, pruning what no snapshot references, and bringing a backup known only to a
 * target (a new daemon recovering from the bucket) into this daemon's history so it can be restored.
 */
export function createTargetOperations({
  offsite,
  repository,
  siteIds,
  lock,
  clock,
  logger,
  jobs,
  removedSites,
}: {
  offsite: ReturnType<typeof createOffsiteTargets>;
  repository: BackupsRepository;
  /** Every site this daemon has (their ids), read once per prune. */
  siteIds: () => Promise<ReadonlySet<string>>;
  lock: ReturnType<typeof createStoreLock>;
  clock: Clock;
  logger: Logger;
  jobs: JobRunner;
  removedSites: RemovedSitesRepository;
}) {
  const requireTarget = (name: string) => {
    if (name !== LOCAL_TARGET && offsite.names.includes(name)) return name;
    throw offsiteProblems.targetUnknown.create(
      `no offsite target is named ${JSON.stringify(name)} (configured: ${offsite.names.join(', ') || 'none'})`,
    );
  };

  /**
   * Prunes a target: snapshots of backups this daemon deleted, then every object no remaining
   * snapshot references. Holds the store exclusively, as local garbage collection does: it
   * waits for running backups and restores, and they wait for it.
   */
  function prune(name: string): Promise<PruneResult> {
    requireTarget(name);
    return lock.exclusive(async () => {
      const now = clock.now();
      const sites = await siteIds();
      const result = await pruneRepository({
        repository: await offsite.openExisting(name),
        // A backup of a site this daemon has, which it no longer lists: retention deleted it. A site it removed:
        // once its retention would have expired. Others' snapshots (another daemon's, a recovered one's) stay.
        forgotten: async (snapshot) => {
          if (sites.has(snapshot.siteId)) return !(await repository.findBackup(snapshot.backupId));
          const removed = await removedSites.find(snapshot.siteId);
          return removed !== undefined && removed.keepUntil <= now;
        },
        now,
      });
      logger.info(result, 'offsite target pruned');
      return result;
    });
  }

  /** A prune's job, `running` (the job runner wrote it): its outcome, which the runner writes. */
  async function runPrune(job: JobRow): Promise<Settlement> {
    // Unreadable params end the job failed (`stored-data-unreadable`), the target unnamed.
    let target: string | null = null;
    try {
      ({ target } = parseStored(PruneParams, job.params, `the params of prune job ${job.id}`));
      const result = await prune(target);
      return {
        outcome: { state: 'succeeded', progress: result },
        events: [jobEvent('target.pruned', { jobId: job.id, ...result })],
      };
    } catch (error) {
      const reason = isAppError(error) ? error.problem.name : offsiteProblems.targetFailed.name;
      const message = (error as Error).message;
      return {
        outcome: { state: 'failed', reason, message },
        events: [jobEvent('target.prune-failed', { jobId: job.id, target, reason, message })],
      };
    }
  }

  // Not exclusive per site (it has none): the store lock is what keeps it apart from backups and restores.
  jobs.register(PRUNE_KIND, {
    pool: { name: 'target-prunes', concurrency: 1 },
    exclusive: false,
    atShutdown: 'abort',
    cancelsWhileRunning: false,
    cancelQueued: () => undefined,
    run: runPrune,
    recover: {
      // Deleting only what no snapshot references, a prune cut short leaves nothing wrong: the next one finishes it.
      running: (job) => {
        const message = 'the daemon stopped while it ran; the next prune finishes it';
        const target = parseStoredOrNull(PruneParams, job.params)?.target ?? null;
        return {
          outcome: { state: 'failed', reason: 'interrupted', message },
          events: [jobEvent('target.prune-failed', { jobId: job.id, target, reason: 'interrupted', message })],
        };
      },
    },
  });

  return {
    /** Removes the snapshot records of deleted backups from the targets that held them; a target that fails is left to prune. */
    async forget(rows: BackupRow[]): Promise<void> {
      for (const row of rows)
        for (const target of row.targets ?? []) {
          if (target === LOCAL_TARGET || !offsite.names.includes(target)) continue;
          try {
            await deleteSnapshot(await offsite.openExisting(target), row.id);
          } catch (error) {
            logger.warn(
              { err: error, target, backupId: row.id },
              'could not remove a deleted backup’s snapshot record',
            );
          }
        }
    },

    prune,

    /** Queues a prune of the target as a job and answers it: `target.pruned` (or `target.prune-failed`) says how it ended. */
    async requestPrune(name: string): Promise<JobRow> {
      requireTarget(name);
      const now = clock.now();
      const { job } = await jobs.submit({
        id: createId('prn', now),
        kind: PRUNE_KIND,
        siteId: null,
        params: { target: name } satisfies PruneParams,
        createdAt: now,
      });
      return job;
    },

    async snapshots(name: string) {
      return offsite.snapshots(requireTarget(name));
    },

    /**
     * The backup row through which a backup the target holds is restored into `siteId`: this
     * daemon's own, or one recorded now from the target's snapshot (completed, held by that
     * target only), as on a new machine that has nothing but the bucket and the passphrase.
     */
    async adopt(name: string, backupId: string, siteId: string): Promise<BackupRow> {
      const snapshot = await readSnapshot(await offsite.openExisting(requireTarget(name)), backupId);
      if (!snapshot)
        throw offsiteProblems.snapshotNotFound.create(`target ${name} holds no backup ${backupId}`, { target: name });
      const known = await repository.findBackup(backupId);
      if (known) {
        if (known.siteId !== siteId)
          throw offsiteProblems.snapshotTaken.create(
            `backup ${backupId} is already this daemon's backup of site ${known.siteId}; restore it there, or into a new site from a target of another daemon`,
          );
        return known;
      }
      const row = {
        id: snapshot.backupId,
        siteId,
        kind: snapshot.kind,
        status: 'completed' as const,
        manifestHash: snapshot.manifestHash,
        targets: [name],
        files: snapshot.files,
        filesDone: snapshot.files,
        tables: snapshot.tables,
        tablesDone: snapshot.tables,
        rows: snapshot.rows,
        bytesTotal: snapshot.bytesTotal,
        bytesTransferred: 0,
        bytesStored: 0,
        createdAt: new Date(snapshot.createdAt),
        startedAt: new Date(snapshot.createdAt),
        finishedAt: new Date(snapshot.finishedAt),
      };
      // Its job ran on the daemon that took it: written here as it ended, with the backup's row.
      const { own } = await jobs.record(
        {
          id: row.id,
          kind: 'backup',
          siteId,
          params: backupJobParams({ kind: row.kind }),
          ...backupOutcome({ ...row, reason: null, error: null, retryOf: null }),
          attempts: 1,
          createdAt: row.createdAt,
          startedAt: row.startedAt,
        },
        // Written with its job row, in the runner's transaction (the job store's, given, on PostgreSQL).
        (tx) => (tx ? repository.withJob.insertBackup(tx, row) : repository.inHook.insertBackup(row)),
      );
      return own;
    },
  };
}

export type TargetOperations = ReturnType<typeof createTargetOperations>;
