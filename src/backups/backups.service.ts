import { join } from 'node:path';
import type { Logger } from 'pino';
import { CANCELLED_MESSAGE, jobEvent, wasCancelled, type JobRunner, type Settlement } from '../jobs/job-runner.js';
import type { JobMetrics } from '../metrics/metrics.js';
import type { Clock } from '../shared/clock.js';
import { isAppError, isProblem } from '../shared/errors.js';
import { createId } from '../shared/ids.js';
import type { SiteAccess } from '../wordpress/site-access.js';
import { sitesProblems } from '../sites/index.js';
import { CONNECTOR_DOWNLOAD_HINT, createConnector } from '../wordpress/connector-client.js';
import { abortableSession } from './abortable-session.js';
import { backupRecovery, interruptedBackup, interruptedRestore, restoreRecovery } from './backup-recovery.js';
import { runBackup } from './backup-runner.js';
import { removeBackupScratch } from './backup-scratch.js';
import { createBackupSettings, type BackupSettingsPatch } from './backup-settings.js';
import type { BackupsConfig } from './backups.config.js';
import { backupsProblems } from './backups.errors.js';
import type { BackupsRepository } from './backups.repository.js';
import type { BackupKind, BackupRow, RestoreRow } from './backups.table.js';
import { createStoreLock } from './concurrency.js';
import { collectGarbage as deleteUnreferenced } from './garbage.js';
import { openManifest, type OpenedManifest } from './manifest.js';
import { createBackupLimits } from './backup-limits.js';
import { createFileObjectStore, type ObjectStore } from './object-store.js';
import { lostPart, runRestore } from './restore-runner.js';
import { CHECK_KINDS, createVerifyJobs } from './verify-jobs.js';
import type { Actor } from '../shared/actor.js';
import { backupArchive } from './archive.js';
import { createOffsiteTargets } from './offsite/offsite-targets.js';
import { offsiteProblems } from './offsite/offsite.errors.js';
import { createTargetOperations, PRUNE_KIND } from './offsite/target-operations.js';
import type { JobsRepository } from '../jobs/jobs.repository.js';
import { retentionHorizonMs, type RemovedSitesRepository } from './offsite/removed-sites.repository.js';
import { keptBackups } from './retention.js';

export const backupStoreDir = (dataDir: string) => join(dataDir, 'backups');

/** Both kinds share one pool of `concurrency` slots. */
const KINDS = ['backup', 'restore'] as const;
/** With the prunes of offsite targets, verifies and repairs: recovered, waited for and stopped with backups. */
const ALL_KINDS = [...KINDS, PRUNE_KIND, ...CHECK_KINDS] as const;

/**
 * Backup and restore jobs: kinds of the job runner (src/jobs/job-runner.ts), persisted in
 * SQLite, run in the background (`concurrency` at once over all sites, one job per site at a
 * time), against the site's connector, into the content-addressed store. At shutdown running
 * backups are aborted (and retried at the next start); a running restore gets the grace period first.
 */
export function createBackupsService({
  repository,
  access,
  siteExists,
  listConnectedSites,
  dataDir,
  config,
  clock,
  logger,
  requestTimeoutMs,
  store: injectedStore,
  metrics,
  jobs,
  jobRows,
  removedSites,
}: {
  repository: BackupsRepository;
  access: SiteAccess;
  siteExists: (siteId: string) => boolean;
  listConnectedSites: () => string[];
  dataDir: string;
  config: BackupsConfig;
  clock: Clock;
  logger: Logger;
  requestTimeoutMs: number;
  store?: ObjectStore;
  metrics?: JobMetrics;
  jobs: JobRunner;
  /** The job rows of kinds with no table of their own (a target's prune). */
  jobRows: JobsRepository;
  /** Sites removed, whose offsite snapshots prune keeps until their retention would have expired. */
  removedSites: RemovedSitesRepository;
}) {
  const fileStore = createFileObjectStore({ dir: backupStoreDir(dataDir) });
  const scratchPathOf = (siteId: string) => join(backupStoreDir(dataDir), 'sites', `${siteId}.sqlite`);
  const store = injectedStore ?? fileStore;
  const lock = createStoreLock();
  const settings = createBackupSettings({ repository, config, clock });
  const offsite = createOffsiteTargets({ config: config.offsite });
  const targetOperations = createTargetOperations({
    offsite,
    repository,
    siteExists,
    lock,
    clock,
    logger,
    jobs,
    jobRows,
    removedSites,
  });
  const checks = createVerifyJobs({ repository, offsite, local: store, lock, jobs, jobRows, clock, logger });
  /** A `partial` backup is held whole locally (an offsite copy failed): restorable like a completed one. */
  const usable = (row: BackupRow | undefined): row is BackupRow & { manifestHash: string } =>
    (row?.status === 'completed' || row?.status === 'partial') && !!row.manifestHash;
  /**
   * The store a backup is read from: the local one while it holds it, else an offsite target that
   * does. Reads take no store lock (a slow download would hold off garbage collection and prune,
   * and every backup queued behind them): neither deletes what a listed backup references, so a
   * backup is only gone from under a read when retention deleted it meanwhile, which is said so.
   */
  const sourceOf = async (row: BackupRow & { manifestHash: string }) => {
    try {
      return (await offsite.storeHolding(row, store)).store;
    } catch (error) {
      if (isProblem(error, offsiteProblems.notHeld) && !repository.findBackup(row.id))
        throw backupsProblems.notFound.create(`backup ${row.id} was deleted by the site's retention meanwhile`);
      throw error;
    }
  };
  /** The named offsite target's store, which must hold the backup's manifest. */
  const namedSource = async (name: string, row: BackupRow & { manifestHash: string }) => {
    const { store: named } = await offsite.openExisting(name);
    if (!(await named.has(row.manifestHash)))
      throw offsiteProblems.notHeld.create(
        `target ${name} does not hold backup ${row.id} (its manifest is not there)`,
        {
          backupId: row.id,
          target: name,
        },
      );
    return named;
  };

  // Opened, not read whole: restore and download walk the file entries part by part.
  const readManifest = (hash: string): Promise<OpenedManifest> => openManifest(store, hash);
  const failure = (error: unknown) => {
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
  };

  function requireSite(siteId: string) {
    return access.connected(siteId);
  }

  function claimSite(siteId: string) {
    const active = repository.activeJob(siteId);
    if (active)
      throw backupsProblems.inProgress.create(
        `a ${active.kind} of site ${siteId} is already queued or running (${active.id}); try again when it has finished`,
        { jobId: active.id, jobKind: active.kind },
      );
  }

  /** Runs one backup row to its end, never rejects; a signal aborted by a cancel ends it `cancelled`. */
  async function executeBackup(row: BackupRow, signal: AbortSignal): Promise<Settlement> {
    const started = clock.now();
    // Object files carry the file system's time, not the service clock's: what this backup writes is newer than this.
    const writtenSince = Date.now();
    repository.updateBackup(row.id, { status: 'running', startedAt: started });
    try {
      const { site, session: siteSession } = requireSite(row.siteId);
      // A site that stalls or sends without end runs into its own deadline, which stops its calls like shutdown does.
      const limits = createBackupLimits(config.limits);
      const session = abortableSession(siteSession, AbortSignal.any([signal, limits.signal]));
      const previousRow = repository.completedBackups(row.siteId).find((candidate) => candidate.manifestHash);
      const previous = previousRow?.manifestHash
        ? await openManifest(store, previousRow.manifestHash).catch(() => null)
        : null;
      const result = await runBackup({
        connector: createConnector(session, { operationTimeoutMs: requestTimeoutMs }),
        store,
        previous,
        siteUrl: site.url,
        now: () => clock.now(),
        onProgress: (progress) => repository.updateBackup(row.id, progress),
        scratchPath: scratchPathOf(row.siteId),
        limits,
      }).finally(() => limits.dispose());
      // Then the offsite copies: a target that fails leaves the backup `partial`, never silently `completed`.
      const copies = await offsite.replicate({
        local: store,
        targets: offsite.targetsFor(row.siteId),
        writtenSince,
        snapshot: {
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
        },
      });
      // Objects a verify found damaged on a target went up again with this copy: said so, with the backup that did it.
      for (const { target, objects } of copies.resent)
        logger.info(
          { siteId: row.siteId, backupId: row.id, target, objects },
          'objects a verify had found damaged on the target were sent again with this backup’s copy',
        );
      const partial = copies.failures.length > 0;
      const finished = repository.updateBackup(row.id, {
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
      })!;
      metrics?.observeJob('backup', 'completed', finished.finishedAt!.getTime() - started.getTime());
      if (partial)
        return {
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
          : failure(error);
      const failed = repository.updateBackup(row.id, {
        status: 'failed',
        reason,
        error: message,
        finishedAt: clock.now(),
      })!;
      metrics?.observeJob('backup', 'failed', failed.finishedAt!.getTime() - started.getTime());
      // A cancel is told by job.cancelled (the runner), not as a failure.
      if (reason === 'cancelled') return { events: [] };
      return {
        events: [jobEvent('backup.failed', { siteId: row.siteId, backupId: row.id, kind: row.kind, reason, message })],
        interrupted: signal.aborted,
      };
    }
  }

  function enqueueBackup(siteId: string, kind: BackupKind, retryOf?: string): BackupRow {
    requireSite(siteId);
    claimSite(siteId);
    const row = repository.insertBackup({
      id: createId('bkp', clock.now()),
      siteId,
      kind,
      status: 'queued',
      retryOf,
      createdAt: clock.now(),
    });
    jobs.enqueue('backup', row.id, siteId);
    return row;
  }

  async function executeRestore(row: RestoreRow, signal: AbortSignal): Promise<Settlement> {
    const started = clock.now();
    repository.updateRestore(row.id, { status: 'running', startedAt: started });
    try {
      const target = repository.findBackup(row.backupId);
      if (!usable(target))
        throw backupsProblems.notFound.create(`backup ${row.backupId} is no longer there to restore from`);
      const pre = repository.insertBackup({
        id: createId('bkp', clock.now()),
        siteId: row.siteId,
        kind: 'pre_restore',
        status: 'queued',
        createdAt: clock.now(),
      });
      repository.updateRestore(row.id, { preRestoreBackupId: pre.id });
      jobs.report({ id: pre.id, kind: 'backup', siteId: row.siteId }, await executeBackup(pre, signal));
      const preResult = repository.findBackup(pre.id)!;
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
      const source = row.sourceTarget ? await namedSource(row.sourceTarget, target) : await sourceOf(target);
      const [targetManifest, currentManifest] = await Promise.all([
        openManifest(source, target.manifestHash).catch(
          lostPart('the backup’s list of files and tables (its manifest)'),
        ),
        readManifest(preResult.manifestHash),
      ]);
      const progress = await access.operate(row.siteId, ({ session }) =>
        runRestore({
          connector: createConnector(abortableSession(session, signal), { operationTimeoutMs: requestTimeoutMs }),
          store: source,
          target: targetManifest,
          current: currentManifest,
          onProgress: (update) => repository.updateRestore(row.id, update),
        }),
      );
      const finished = repository.updateRestore(row.id, { ...progress, status: 'completed', finishedAt: clock.now() })!;
      metrics?.observeJob('restore', 'completed', finished.finishedAt!.getTime() - started.getTime());
      return {
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
      const { reason: problemReason, error: problemMessage } = failure(error);
      const reason = signal.aborted ? 'interrupted' : ((error as { reason?: string }).reason ?? problemReason);
      const message = signal.aborted
        ? interruptedRestore(repository.findRestore(row.id)?.preRestoreBackupId ?? null)
        : problemMessage;
      repository.updateRestore(row.id, { status: 'failed', reason, error: message, finishedAt: clock.now() });
      metrics?.observeJob('restore', 'failed', clock.now().getTime() - started.getTime());
      return {
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
  }

  jobs.register('backup', {
    pool: { name: 'backups', concurrency: config.concurrency },
    exclusive: true,
    atShutdown: 'abort',
    cancelsWhileRunning: true,
    run: (job, signal) => lock.shared(() => executeBackup(repository.findBackup(job.id)!, signal)),
    // Outside the shared lock: retention's garbage collection takes the store exclusively.
    after: async (job) => {
      const row = repository.findBackup(job.id);
      if (usable(row)) await applyRetention(row.siteId);
    },
    cancelQueued: (job, message) =>
      void repository.updateBackup(job.id, {
        status: 'failed',
        reason: 'cancelled',
        error: message,
        finishedAt: clock.now(),
      }),
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
    run: (job, signal) => lock.shared(() => executeRestore(repository.findRestore(job.id)!, signal)),
    cancelQueued: (job, message) =>
      void repository.updateRestore(job.id, {
        status: 'failed',
        reason: 'cancelled',
        error: message,
        finishedAt: clock.now(),
      }),
    recover: restoreRecovery({ repository, clock }),
  });

  function findBackup(siteId: string, backupId: string): BackupRow {
    const row = repository.findBackup(backupId);
    if (!row || row.siteId !== siteId)
      throw backupsProblems.notFound.create(`site ${siteId} has no backup ${backupId}`);
    return row;
  }

  /**
   * Keeps the site's completed backups its retention keeps (src/backups/retention.ts); failed ones
   * older than the oldest kept go too. The deleted ones' snapshot records leave their offsite
   * targets at once; what only they referenced there goes at the targets' next prune.
   */
  async function applyRetention(siteId: string): Promise<{ deletedBackups: string[]; deletedObjects: number }> {
    const all = repository.allBackups(siteId);
    const held = (row: BackupRow) => row.status === 'completed' || row.status === 'partial';
    const keptIds = keptBackups(all.filter(held), settings.policy(siteId), clock.now());
    const oldestKept = [...keptIds].sort()[0] ?? '';
    const doomed = all.filter(
      (row) => (held(row) && !keptIds.has(row.id)) || (row.status === 'failed' && row.id < oldestKept),
    );
    for (const row of doomed) repository.deleteBackup(row.id);
    await targetOperations.forget(doomed);
    const deletedObjects = doomed.length > 0 ? await collectGarbage() : 0;
    return { deletedBackups: doomed.map((row) => row.id), deletedObjects };
  }

  /** Queues a restore of the backup; `from` names the offsite target to read it from (else: local first, then its targets). */
  function restore(siteId: string, backupId: string, from?: string): RestoreRow {
    requireSite(siteId);
    const target = findBackup(siteId, backupId);
    if (!usable(target))
      throw backupsProblems.notCompleted.create(
        `backup ${backupId} is ${target.status}; only a completed backup can be restored`,
      );
    claimSite(siteId);
    const row = repository.insertRestore({
      id: createId('rst', clock.now()),
      siteId,
      backupId,
      sourceTarget: from ?? null,
      status: 'queued',
      createdAt: clock.now(),
    });
    jobs.enqueue('restore', row.id, siteId);
    return row;
  }

  /** Deletes every object no completed backup references; waits until no job is using the store. */
  function collectGarbage(): Promise<number> {
    return lock.exclusive(() =>
      deleteUnreferenced(
        store,
        repository.completedBackups().flatMap((row) => (row.manifestHash ? [row.manifestHash] : [])),
      ),
    );
  }

  return {
    store,

    /** A removed site leaves nothing behind it here but backups retention will delete. */
    forgetSite(siteId: string): void {
      removeBackupScratch(scratchPathOf(siteId));
      // Its history went with it; its offsite snapshots stay as long as retention (now the daemon-wide one) keeps a backup.
      if (offsite.names.length > 0) {
        const now = clock.now();
        removedSites.record(siteId, now, new Date(now.getTime() + retentionHorizonMs(settings.policy(siteId))));
      }
    },

    /** At start-up: what the last process left unfinished (the job runner's recovery, src/backups/backup-recovery.ts). */
    async recoverInterrupted(): Promise<void> {
      await fileStore.cleanTemporary();
      jobs.recover(ALL_KINDS);
    },

    request: (siteId: string, kind: BackupKind = 'manual') => enqueueBackup(siteId, kind),

    list(siteId: string, { limit, before }: { limit: number; before?: string }): BackupRow[] {
      requireSiteExists(siteId);
      return repository.listBackups({ siteId, limit, before });
    },

    get(siteId: string, backupId: string): BackupRow {
      requireSiteExists(siteId);
      return findBackup(siteId, backupId);
    },

    restore,

    getRestore(siteId: string, restoreId: string): RestoreRow {
      const row = repository.findRestore(restoreId);
      if (!row || row.siteId !== siteId)
        throw backupsProblems.restoreNotFound.create(`site ${siteId} has no restore ${restoreId}`);
      return row;
    },

    /** The backup as a tar.gz of its files plus an SQL dump (checked against hashes as it is read). */
    async archive(siteId: string, backupId: string) {
      requireSiteExists(siteId);
      const row = findBackup(siteId, backupId);
      if (!usable(row))
        throw backupsProblems.notCompleted.create(
          `backup ${backupId} is ${row.status}; only a completed backup can be downloaded`,
        );
      const source = await sourceOf(row);
      const manifest = await openManifest(source, row.manifestHash);
      const host = new URL(manifest.siteUrl).host.replace(/[^A-Za-z0-9.-]/g, '-');
      return {
        filename: `${host}-${row.id}.tar.gz`,
        stream: await backupArchive({ store: source, manifest, tmpDir: join(backupStoreDir(dataDir), 'tmp') }),
      };
    },

    /**
     * Queues a verify of a backup on one target (`local` by default, or an offsite one) as a job:
     * all of its objects or a random `sample` percent re-read, each one's authentication and content
     * hash checked; the job's progress says how far it got, then what is lost (src/backups/verify-jobs.ts).
     */
    requestVerify(backupId: string, options: { target?: string; sample?: number } = {}, requestedBy?: Actor) {
      const row = repository.findBackup(backupId);
      if (!row) throw backupsProblems.notFound.create(`there is no backup ${backupId}`);
      return checks.requestVerify(row, options, requestedBy);
    },

    /** Queues a repair of a backup on one target: its missing and corrupt objects sent again from a store holding them whole. */
    requestRepair(backupId: string, options: { target?: string } = {}, requestedBy?: Actor) {
      const row = repository.findBackup(backupId);
      if (!row) throw backupsProblems.notFound.create(`there is no backup ${backupId}`);
      return checks.requestRepair(row, options, requestedBy);
    },

    /** The newest verify and repair jobs, of one site or all. */
    recentChecks: checks.recent,

    /** The site's `backups` settings section, with the defaults filled in and when the next scheduled backup falls due. */
    settings(siteId: string) {
      requireSiteRow(siteId);
      return settings.view(siteId);
    },

    /** Retention by tag, between a site's own and the daemon-wide defaults. */
    retention: {
      view: () => settings.retention(),
      setTag: settings.setTagRetention,
      deleteTag: settings.deleteTagRetention,
    },

    /** Validates a `backups` settings patch and returns the write that applies it. */
    prepareSettings(siteId: string, patch: BackupSettingsPatch): () => void {
      requireSiteRow(siteId);
      return settings.prepare(siteId, patch);
    },

    /**
     * Scheduler tick: backs up the connected sites whose slot came (each site has a fixed offset
     * into its interval) with no good backup since. A failed one is tried again an hour later.
     */
    enqueueDue(): string[] {
      const enqueued: string[] = [];
      for (const siteId of settings.dueSites(listConnectedSites())) {
        try {
          enqueueBackup(siteId, 'scheduled');
          enqueued.push(siteId);
        } catch (error) {
          logger.warn({ err: error, siteId }, 'could not schedule a backup');
        }
      }
      return enqueued;
    },

    applyRetention,
    collectGarbage,

    /** Offsite targets: prune (all, or the one named), the backups one holds, and restoring one of them into a site. */
    targets: {
      names: offsite.names,
      prune: targetOperations.prune,
      requestPrune: targetOperations.requestPrune,
      snapshots: targetOperations.snapshots,
      /** Restores a backup the target holds into a connected site, recording it here first if this daemon never had it. */
      async restore(target: string, backupId: string, siteId: string): Promise<RestoreRow> {
        requireSite(siteId);
        claimSite(siteId);
        await targetOperations.adopt(target, backupId, siteId);
        return restore(siteId, backupId, target);
      },
    },

    /** Backups and restores waiting or running (metrics, readiness). */
    get queueDepth() {
      return jobs.queueDepth(KINDS);
    },

    /** Waits for queued and running jobs (tests, shutdown). */
    idle: () => jobs.idle(ALL_KINDS),

    /**
     * Shutdown: queued jobs stay queued for the next start; running backups are aborted at once
     * (retried at the next start); running restores get `graceMs` to finish, then are aborted.
     * Returns false when a restore had to be aborted or a job did not settle.
     */
    stop: (graceMs: number): Promise<boolean> => jobs.stop(ALL_KINDS, { graceMs }),
  };

  /** Settings belong to any site, connected or not. */
  function requireSiteRow(siteId: string) {
    if (!siteExists(siteId)) throw sitesProblems.notFound.create(`no site has the id ${siteId}`);
  }

  function requireSiteExists(siteId: string) {
    try {
      access.connected(siteId);
    } catch (error) {
      // Backups of a site that is no longer connected can still be listed.
      if (!isProblem(error, sitesProblems.notConnected)) throw error;
    }
  }
}

export type BackupsService = ReturnType<typeof createBackupsService>;
