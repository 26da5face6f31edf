import { isProblem } from '../shared/errors.js';
import { backupsProblems } from './backups.errors.js';
import type { BackupsRepository } from './backups.repository.js';
import type { BackupRow } from './backups.table.js';
import type { ObjectStore } from './object-store.js';
import type { OffsiteTargets } from './offsite/offsite-targets.js';
import { offsiteProblems } from './offsite/offsite.errors.js';

/** A backup that can be read whole: `completed`, or `partial` (an offsite copy failed, the local one is whole). */
export type UsableBackup = BackupRow & { manifestHash: string };

export const usable = (row: BackupRow | undefined): row is UsableBackup =>
  (row?.status === 'completed' || row?.status === 'partial') && !!row.manifestHash;

/**
 * Where a backup is read from, for a restore or a download. Reads take no store lock (a slow
 * download would hold off garbage collection and prune, and every backup queued behind them):
 * neither deletes what a listed backup references, so a backup is only gone from under a read when
 * retention deleted it meanwhile, which is said so.
 */
export function createBackupSources({
  repository,
  offsite,
  local,
}: {
  repository: BackupsRepository;
  offsite: OffsiteTargets;
  local: ObjectStore;
}) {
  return {
    /** The local store while it holds the backup, else an offsite target that does. */
    async holding(row: UsableBackup): Promise<ObjectStore> {
      try {
        return (await offsite.storeHolding(row, local)).store;
      } catch (error) {
        if (isProblem(error, offsiteProblems.notHeld) && !(await repository.findBackup(row.id)))
          throw backupsProblems.notFound.create(`backup ${row.id} was deleted by the site's retention meanwhile`);
        throw error;
      }
    },

    /** The named offsite target's store, which must hold the backup's manifest. */
    async named(name: string, row: UsableBackup): Promise<ObjectStore> {
      const { store } = await offsite.openExisting(name);
      if (!(await store.has(row.manifestHash)))
        throw offsiteProblems.notHeld.create(
          `target ${name} does not hold backup ${row.id} (its manifest is not there)`,
          {
            backupId: row.id,
            target: name,
          },
        );
      return store;
    },
  };
}

export type BackupSources = ReturnType<typeof createBackupSources>;
