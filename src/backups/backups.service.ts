import { join } from 'node:path';
import type { Logger } from 'pino';
import type { JobRunner } from '../jobs/job-runner.js';
import type { JobMetrics } from '../metrics/metrics.js';
import type { Clock } from '../shared/clock.js';
import type { SiteAccess } from '../wordpress/site-access.js';
import { createBackupJob } from './backup-job.js';
import { createBackupQueries } from './backup-queries.js';
import { createBackupRequests } from './backup-requests.js';
import { removeBackupScratch } from './backup-scratch.js';
import { createBackupSources } from './backup-sources.js';
import { createBackupSettings, type BackupSettingsPatch } from './backup-settings.js';
import type { BackupsConfig } from './backups.config.js';
import { backupsProblems } from './backups.errors.js';
import type { BackupsRepository } from './backups.repository.js';
import type { BackupKind, RestoreRow } from './backups.table.js';
import { createCollection } from './collection.js';
import { createLocalBackupStore, type BackupStore } from './backup-store.js';
import { createRestoreJob } from './restore-job.js';
import { CHECK_KINDS, createVerifyJobs } from './verify-jobs.js';
import type { Actor } from '../shared/actor.js';
import { createOffsiteTargets } from './offsite/offsite-targets.js';
import { createTargetOperations, PRUNE_KIND } from './offsite/target-operations.js';
import { retentionHorizonMs, type RemovedSitesRepository } from './offsite/removed-sites.repository.js';

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
  siteIds,
  listConnectedSites,
  dataDir,
  config,
  clock,
  logger,
  requestTimeoutMs,
  store: backupStore = createLocalBackupStore(backupStoreDir(dataDir)),
  metrics,
  jobs,
  removedSites,
}: {
  repository: BackupsRepository;
  access: SiteAccess;
  siteExists: (siteId: string) => Promise<boolean>;
  /** Every site this daemon has, whatever its state. */
  siteIds: () => Promise<ReadonlySet<string>>;
  listConnectedSites: () => Promise<string[]>;
  dataDir: string;
  config: BackupsConfig;
  clock: Clock;
  logger: Logger;
  requestTimeoutMs: number;
  /** The `local` target: the data directory's store (the default), or the cluster's repository (backup-store.ts). */
  store?: BackupStore;
  metrics?: JobMetrics;
  jobs: JobRunner;
  /** Sites removed, whose offsite snapshots prune keeps until their retention would have expired. */
  removedSites: RemovedSitesRepository;
}) {
  const scratchPathOf = (siteId: string) => join(backupStoreDir(dataDir), 'sites', `${siteId}.sqlite`);
  const store = backupStore.objects;
  const lock = backupStore.lock;
  const settings = createBackupSettings({ repository, config, clock });
  const offsite = createOffsiteTargets({ config: config.offsite });
  const targetOperations = createTargetOperations({
    offsite,
    repository,
    siteIds,
    lock,
    clock,
    logger,
    jobs,
    removedSites,
  });
  const checks = createVerifyJobs({ repository, offsite, local: store, lock, jobs, clock, logger });
  const sources = createBackupSources({ repository, offsite, local: store });
  const collection = createCollection({ repository, settings, targetOperations, store: backupStore, clock });
  const { applyRetention, collectGarbage } = collection;
  const executeBackup = createBackupJob({
    repository,
    access,
    store: backupStore,
    offsite,
    config,
    clock,
    logger,
    metrics,
    requestTimeoutMs,
    scratchPathOf,
  });
  const executeRestore = createRestoreJob({
    repository,
    access,
    store,
    sources,
    executeBackup,
    jobs,
    clock,
    metrics,
    requestTimeoutMs,
  });

  const { requireSite, findBackup, ...queries } = createBackupQueries({
    repository,
    siteExists,
    sources,
    tmpDir: join(backupStoreDir(dataDir), 'tmp'),
  });
  const { requireConnected, claimSite, enqueueBackup, restore } = createBackupRequests({
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
  });

  return {
    store,

    /** A removed site leaves nothing behind it here but backups retention will delete. */
    async forgetSite(siteId: string): Promise<void> {
      removeBackupScratch(scratchPathOf(siteId));
      // Its history went with it; its offsite snapshots stay as long as retention (now the daemon-wide one) keeps a backup.
      if (offsite.names.length > 0) {
        const now = clock.now();
        const horizonMs = retentionHorizonMs(await settings.policy(siteId));
        await removedSites.record(siteId, now, new Date(now.getTime() + horizonMs));
      }
    },

    /** At start-up: what the last process left unfinished (the job runner's recovery, src/backups/backup-recovery.ts). */
    async recoverInterrupted(): Promise<void> {
      await backupStore.cleanUnfinished();
      await jobs.recover(ALL_KINDS);
    },

    request: (siteId: string, kind: BackupKind = 'manual') => enqueueBackup(siteId, kind),

    list: queries.list,
    get: queries.get,

    restore,

    getRestore: queries.getRestore,
    archive: queries.archive,

    /**
     * Queues a verify of a backup on one target (`local` by default, or an offsite one) as a job:
     * all of its objects or a random `sample` percent re-read, each one's authentication and content
     * hash checked; the job's progress says how far it got, then what is lost (src/backups/verify-jobs.ts).
     */
    async requestVerify(backupId: string, options: { target?: string; sample?: number } = {}, requestedBy?: Actor) {
      const row = await repository.findBackup(backupId);
      if (!row) throw backupsProblems.notFound.create(`there is no backup ${backupId}`);
      return checks.requestVerify(row, options, requestedBy);
    },

    /** Queues a repair of a backup on one target: its missing and corrupt objects sent again from a store holding them whole. */
    async requestRepair(backupId: string, options: { target?: string } = {}, requestedBy?: Actor) {
      const row = await repository.findBackup(backupId);
      if (!row) throw backupsProblems.notFound.create(`there is no backup ${backupId}`);
      return checks.requestRepair(row, options, requestedBy);
    },

    /** The newest verify and repair jobs, of one site or all. */
    recentChecks: checks.recent,

    /** The site's `backups` settings section, with the defaults filled in and when the next scheduled backup falls due. */
    async settings(siteId: string) {
      await requireSite(siteId);
      return settings.view(siteId);
    },

    /** Retention by tag, between a site's own and the daemon-wide defaults. */
    retention: {
      view: () => settings.retention(),
      setTag: settings.setTagRetention,
      deleteTag: settings.deleteTagRetention,
    },

    /** Validates a `backups` settings patch and returns the write that applies it. */
    async prepareSettings(siteId: string, patch: BackupSettingsPatch): Promise<() => Promise<void>> {
      await requireSite(siteId);
      return settings.prepare(siteId, patch);
    },

    /**
     * Scheduler tick: backs up the connected sites whose slot came (each site has a fixed offset
     * into its interval) with no good backup since. A failed one is tried again an hour later.
     */
    async enqueueDue(): Promise<string[]> {
      const enqueued: string[] = [];
      for (const siteId of await settings.dueSites(await listConnectedSites())) {
        try {
          await enqueueBackup(siteId, 'scheduled');
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
        await requireConnected(siteId);
        await claimSite(siteId);
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
}

export type BackupsService = ReturnType<typeof createBackupsService>;
