import { sitesProblems } from '../sites/index.js';
import { usable, type BackupSources } from './backup-sources.js';
import { backupsProblems } from './backups.errors.js';
import type { BackupsRepository } from './backups.repository.js';
import type { BackupRow, RestoreRow } from './backups.table.js';
import { openManifest } from './manifest.js';
import { backupArchive } from './archive.js';

/**
 * What the backups service answers about a site's backups and restores: its list of backups, one
 * backup or restore (`backup-not-found`, `restore-not-found` for another site's), and a completed
 * backup as a tar.gz to download, read from the store that holds it. Reading needs only that the
 * site exists (`site-not-found` otherwise), not that it is connected.
 */
export function createBackupQueries({
  repository,
  siteExists,
  sources,
  tmpDir,
}: {
  repository: BackupsRepository;
  siteExists: (siteId: string) => Promise<boolean>;
  sources: BackupSources;
  /** Where an archive's SQL dump is written while it is streamed. */
  tmpDir: string;
}) {
  const requireSite = async (siteId: string) => {
    if (!(await siteExists(siteId))) throw sitesProblems.notFound.create(`no site has the id ${siteId}`);
  };

  async function findBackup(siteId: string, backupId: string): Promise<BackupRow> {
    const row = await repository.findBackup(backupId);
    if (!row || row.siteId !== siteId)
      throw backupsProblems.notFound.create(`site ${siteId} has no backup ${backupId}`);
    return row;
  }

  return {
    requireSite,
    findBackup,

    async list(siteId: string, { limit, before }: { limit: number; before?: string }): Promise<BackupRow[]> {
      await requireSite(siteId);
      return repository.listBackups({ siteId, limit, before });
    },

    async get(siteId: string, backupId: string): Promise<BackupRow> {
      await requireSite(siteId);
      return findBackup(siteId, backupId);
    },

    async getRestore(siteId: string, restoreId: string): Promise<RestoreRow> {
      const row = await repository.findRestore(restoreId);
      if (!row || row.siteId !== siteId)
        throw backupsProblems.restoreNotFound.create(`site ${siteId} has no restore ${restoreId}`);
      return row;
    },

    /** The backup as a tar.gz of its files plus an SQL dump (checked against hashes as it is read). */
    async archive(siteId: string, backupId: string) {
      await requireSite(siteId);
      const row = await findBackup(siteId, backupId);
      if (!usable(row))
        throw backupsProblems.notCompleted.create(
          `backup ${backupId} is ${row.status}; only a completed backup can be downloaded`,
        );
      const source = await sources.holding(row);
      const manifest = await openManifest(source, row.manifestHash);
      const host = new URL(manifest.siteUrl).host.replace(/[^A-Za-z0-9.-]/g, '-');
      return {
        filename: `${host}-${row.id}.tar.gz`,
        stream: await backupArchive({ store: source, manifest, tmpDir }),
      };
    },
  };
}
