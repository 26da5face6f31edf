import { join } from 'node:path';
import PQueue from 'p-queue';
import type { Logger } from 'pino';
import type { Clock } from '../shared/clock.js';
import { isAppError } from '../shared/errors.js';
import { logEvent } from '../shared/events.js';
import { createId } from '../shared/ids.js';
import type { SiteAccess } from '../sites/site-access.js';
import { CONNECTOR_DOWNLOAD_PATH } from '../wordpress/connector-client.js';
import { createBackupConnector } from './backup-connector.js';
import { runBackup } from './backup-runner.js';
import type { BackupsConfig } from './backups.config.js';
import { backupsProblems } from './backups.errors.js';
import type { BackupsRepository } from './backups.repository.js';
import type { BackupKind, BackupRow, RestoreRow } from './backups.table.js';
import { createStoreLock } from './concurrency.js';
import { parseManifest, referencedObjects, type Manifest } from './manifest.js';
import { createFileObjectStore, type ObjectStore } from './object-store.js';
import { runRestore } from './restore-runner.js';
import { verifyBackup } from './verify.js';
import { backupArchive } from './archive.js';

export const backupStoreDir = (dataDir: string) => join(dataDir, 'backups');

/**
 * Backup and restore jobs: persisted in SQLite, run in the background through one queue
 * (`concurrency` at once over all sites, one job per site at a time), against the site's
 * connector, into the content-addressed store.
 */
export function createBackupsService({ repository, access, listConnectedSites, dataDir, config, clock, logger, requestTimeoutMs, store: injectedStore }: {
  repository: BackupsRepository;
  access: SiteAccess;
  listConnectedSites: () => string[];
  dataDir: string;
  config: BackupsConfig;
  clock: Clock;
  logger: Logger;
  requestTimeoutMs: number;
  store?: ObjectStore;
}) {
  const fileStore = createFileObjectStore({ dir: backupStoreDir(dataDir) });
  const store = injectedStore ?? fileStore;
  const queue = new PQueue({ concurrency: config.concurrency });
  const lock = createStoreLock();
  const running = new Set<Promise<unknown>>();

  const readManifest = async (hash: string): Promise<Manifest> => parseManifest(await store.read(hash));
  const failure = (error: unknown) => {
    if (isAppError(error) && error.extensions.siteCode === 'rest_no_route') {
      return { reason: 'connector-outdated', error: `the site’s Sitewarden connector is missing or has no backup routes: install the current one from ${CONNECTOR_DOWNLOAD_PATH}` };
    }
    return { reason: isAppError(error) ? error.problem.name : 'internal-error', error: isAppError(error) ? error.detail : (error as Error).message };
  };

  function requireSite(siteId: string) {
    return access.connected(siteId);
  }

  function claimSite(siteId: string) {
    const active = repository.activeJob(siteId);
    if (active) throw backupsProblems.inProgress.create(`a ${active.kind} of site ${siteId} is already queued or running (${active.id}); try again when it has finished`, { jobId: active.id });
  }

  function track<T>(promise: Promise<T>): void {
    const tracked = promise.catch((error: unknown) => logger.error({ err: error }, 'backup job crashed'));
    running.add(tracked);
    void tracked.finally(() => running.delete(tracked));
  }

  /** Runs one backup row to its end; resolves with the finished row, never rejects. */
  async function executeBackup(row: BackupRow): Promise<BackupRow> {
    const started = clock.now();
    repository.updateBackup(row.id, { status: 'running', startedAt: started });
    try {
      const { site, session } = requireSite(row.siteId);
      const previousRow = repository.completedBackups(row.siteId).find((candidate) => candidate.manifestHash);
      const previous = previousRow?.manifestHash ? await readManifest(previousRow.manifestHash).catch(() => null) : null;
      const result = await runBackup({
        connector: createBackupConnector(session, { timeoutMs: requestTimeoutMs }),
        store,
        previous,
        siteUrl: site.url,
        now: () => clock.now(),
        onProgress: (progress) => repository.updateBackup(row.id, progress),
      });
      const finished = repository.updateBackup(row.id, { ...result.progress, status: 'completed', manifestHash: result.manifestHash, finishedAt: clock.now() })!;
      logEvent(logger, 'backup.completed', { siteId: row.siteId, backupId: row.id, kind: row.kind, files: finished.files, tables: finished.tables, bytesTransferred: finished.bytesTransferred, bytesStored: finished.bytesStored, durationMs: finished.finishedAt!.getTime() - started.getTime() });
      return finished;
    } catch (error) {
      const { reason, error: message } = failure(error);
      const failed = repository.updateBackup(row.id, { status: 'failed', reason, error: message, finishedAt: clock.now() })!;
      logEvent(logger, 'backup.failed', { siteId: row.siteId, backupId: row.id, kind: row.kind, reason, message });
      return failed;
    }
  }

  function enqueueBackup(siteId: string, kind: BackupKind): BackupRow {
    requireSite(siteId);
    claimSite(siteId);
    const row = repository.insertBackup({ id: createId('bkp', clock.now()), siteId, kind, status: 'queued', createdAt: clock.now() });
    track(
      queue.add(async () => {
        const finished = await lock.shared(() => executeBackup(row));
        if (finished.status === 'completed') await applyRetention(siteId);
      }),
    );
    return row;
  }

  async function executeRestore(row: RestoreRow, target: BackupRow): Promise<void> {
    const started = clock.now();
    repository.updateRestore(row.id, { status: 'running', startedAt: started });
    try {
      const pre = repository.insertBackup({ id: createId('bkp', clock.now()), siteId: row.siteId, kind: 'pre_restore', status: 'queued', createdAt: clock.now() });
      repository.updateRestore(row.id, { preRestoreBackupId: pre.id });
      const preResult = await executeBackup(pre);
      if (preResult.status !== 'completed' || !preResult.manifestHash) {
        throw Object.assign(new Error(`the backup of the site before restoring failed (${preResult.reason ?? 'unknown'}: ${preResult.error ?? ''}); nothing was restored`), { reason: 'pre-restore-backup-failed' });
      }
      const [targetManifest, currentManifest] = await Promise.all([readManifest(target.manifestHash!), readManifest(preResult.manifestHash)]);
      const progress = await access.operate(row.siteId, ({ session }) =>
        runRestore({
          connector: createBackupConnector(session, { timeoutMs: requestTimeoutMs }),
          store,
          target: targetManifest,
          current: currentManifest,
          onProgress: (update) => repository.updateRestore(row.id, update),
        }),
      );
      const finished = repository.updateRestore(row.id, { ...progress, status: 'completed', finishedAt: clock.now() })!;
      logEvent(logger, 'restore.completed', { siteId: row.siteId, restoreId: row.id, backupId: row.backupId, preRestoreBackupId: pre.id, durationMs: finished.finishedAt!.getTime() - started.getTime() });
    } catch (error) {
      const { reason: problemReason, error: message } = failure(error);
      const reason = (error as { reason?: string }).reason ?? problemReason;
      repository.updateRestore(row.id, { status: 'failed', reason, error: message, finishedAt: clock.now() });
      logEvent(logger, 'restore.failed', { siteId: row.siteId, restoreId: row.id, backupId: row.backupId, reason, message });
    }
  }

  function findBackup(siteId: string, backupId: string): BackupRow {
    const row = repository.findBackup(backupId);
    if (!row || row.siteId !== siteId) throw backupsProblems.notFound.create(`site ${siteId} has no backup ${backupId}`);
    return row;
  }

  /** Keeps the newest `keepLast` completed backups and those younger than `keepDays`; failed ones older than the oldest kept go too. */
  async function applyRetention(siteId: string): Promise<{ deletedBackups: string[]; deletedObjects: number }> {
    const all = repository.allBackups(siteId);
    const youngest = clock.now().getTime() - config.keepDays * 86_400_000;
    const completed = all.filter((row) => row.status === 'completed');
    const kept = completed.filter((row, index) => index < config.keepLast || (config.keepDays > 0 && row.createdAt.getTime() >= youngest));
    const oldestKept = kept.at(-1)?.id ?? '';
    const doomed = all.filter((row) => (row.status === 'completed' && !kept.includes(row)) || (row.status === 'failed' && row.id < oldestKept));
    for (const row of doomed) repository.deleteBackup(row.id);
    const deletedObjects = doomed.length > 0 ? await collectGarbage() : 0;
    return { deletedBackups: doomed.map((row) => row.id), deletedObjects };
  }

  /** Deletes every object no completed backup references; waits until no job is using the store. */
  function collectGarbage(): Promise<number> {
    return lock.exclusive(async () => {
      const referenced = new Set<string>();
      for (const row of repository.completedBackups()) {
        if (!row.manifestHash) continue;
        referenced.add(row.manifestHash);
        for (const hash of referencedObjects(await readManifest(row.manifestHash))) referenced.add(hash);
      }
      let deleted = 0;
      for await (const hash of store.list()) {
        if (referenced.has(hash)) continue;
        await store.delete(hash);
        deleted++;
      }
      return deleted;
    });
  }

  return {
    store,

    /** At start-up: jobs a killed process left `queued` or `running` become `failed` (`interrupted`). */
    async recoverInterrupted(): Promise<void> {
      await fileStore.cleanTemporary();
      const { backups, restores } = repository.failUnfinished(clock.now());
      for (const row of backups) logEvent(logger, 'backup.failed', { siteId: row.siteId, backupId: row.id, kind: row.kind, reason: 'interrupted', message: row.error });
      for (const row of restores) logEvent(logger, 'restore.failed', { siteId: row.siteId, restoreId: row.id, backupId: row.backupId, reason: 'interrupted', message: row.error });
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

    restore(siteId: string, backupId: string): RestoreRow {
      requireSite(siteId);
      const target = findBackup(siteId, backupId);
      if (target.status !== 'completed' || !target.manifestHash) throw backupsProblems.notCompleted.create(`backup ${backupId} is ${target.status}; only a completed backup can be restored`);
      claimSite(siteId);
      const row = repository.insertRestore({ id: createId('rst', clock.now()), siteId, backupId, status: 'queued', createdAt: clock.now() });
      track(queue.add(() => lock.shared(() => executeRestore(row, target))));
      return row;
    },

    getRestore(siteId: string, restoreId: string): RestoreRow {
      const row = repository.findRestore(restoreId);
      if (!row || row.siteId !== siteId) throw backupsProblems.restoreNotFound.create(`site ${siteId} has no restore ${restoreId}`);
      return row;
    },

    /** The backup as a tar.gz of its files plus an SQL dump (checked against hashes as it is read). */
    async archive(siteId: string, backupId: string) {
      requireSiteExists(siteId);
      const row = findBackup(siteId, backupId);
      if (row.status !== 'completed' || !row.manifestHash) throw backupsProblems.notCompleted.create(`backup ${backupId} is ${row.status}; only a completed backup can be downloaded`);
      const manifest = await readManifest(row.manifestHash);
      const host = new URL(manifest.siteUrl).host.replace(/[^A-Za-z0-9.-]/g, '-');
      return { filename: `${host}-${row.id}.tar.gz`, stream: backupArchive({ store, manifest, tmpDir: join(backupStoreDir(dataDir), 'tmp') }) };
    },

    /** Re-reads every object of a backup and checks every hash. */
    verify: (backupId: string) => {
      const row = repository.findBackup(backupId);
      if (!row) throw backupsProblems.notFound.create(`there is no backup ${backupId}`);
      return verifyBackup({ store, backup: row });
    },

    /**
     * Scheduler tick: backs up connected sites whose last good backup is older than the interval.
     * A site whose backup just failed is tried again an hour later, not at every tick.
     */
    enqueueDue(): string[] {
      if (config.intervalHours <= 0) return [];
      const now = clock.now().getTime();
      const enqueued: string[] = [];
      for (const siteId of listConnectedSites()) {
        const history = repository.allBackups(siteId).filter((row) => row.kind !== 'pre_restore');
        const lastGood = history.find((row) => row.status !== 'failed');
        const lastFailed = history.find((row) => row.status === 'failed');
        const recentlyGood = lastGood && lastGood.createdAt.getTime() > now - config.intervalHours * 3_600_000;
        const recentlyFailed = lastFailed && lastFailed.createdAt.getTime() > now - 3_600_000;
        if (recentlyGood || recentlyFailed || repository.activeJob(siteId)) continue;
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

    /** Waits for queued and running jobs (tests, shutdown). */
    async idle(): Promise<void> {
      while (running.size > 0) await Promise.all([...running]);
    },

    async drain(graceMs: number): Promise<boolean> {
      queue.pause();
      queue.clear();
      let timer: NodeJS.Timeout | undefined;
      const finished = await Promise.race([queue.onPendingZero().then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), graceMs)))]);
      clearTimeout(timer);
      return finished;
    },
  };

  function requireSiteExists(siteId: string) {
    try {
      access.connected(siteId);
    } catch (error) {
      // Backups of a site that is no longer connected can still be listed.
      if (!(isAppError(error) && error.problem.name === 'site-not-connected')) throw error;
    }
  }
}

export type BackupsService = ReturnType<typeof createBackupsService>;
