import { join } from 'node:path';
import type { StateDatabase } from '../db/state-db.js';
import { createSharedBlobs } from '../blobs/shared-blobs.js';
import type { StoreLocation } from '../blobs/store-location.js';
import { clusterPassphrase, createRepositoryBackupStore } from './backup-store.js';
import { createBackupsRepository } from './backups.repository.js';
import { backupStoreDir } from './backups.service.js';
import { createFileObjectStore, type ObjectStore } from './object-store.js';
import { createOffsiteTargets } from './offsite/offsite-targets.js';
import { LOCAL_TARGET, type OffsiteConfig } from './offsite/targets.config.js';
import { verifyBackup } from './verify.js';

/**
 * `sitewarden backup verify <backupId> [--target NAME] [--sample PERCENT]`: re-reads the backup
 * from the local store or an offsite target; exit code 0 only when every hash matches. `open` gives the
 * state the backup's row is read from (the data directory's database, or the cluster's), and `local` the
 * `local` target's objects (the data directory's store, or the cluster's repository: localBackupObjects).
 */
export async function verifyBackupCommand({
  open,
  local,
  backupId,
  target = LOCAL_TARGET,
  sample,
  offsite,
  out,
}: {
  open: () => Promise<StateDatabase>;
  local: () => ObjectStore;
  backupId: string;
  target?: string;
  sample?: number;
  offsite?: OffsiteConfig;
  out: (line: string) => void;
}): Promise<number> {
  const state = await open();
  try {
    const backup = await createBackupsRepository(state).findBackup(backupId);
    if (!backup) {
      out(`no backup has the id ${backupId}`);
      return 2;
    }
    const store =
      target === LOCAL_TARGET ? local() : (await createOffsiteTargets({ config: offsite }).openExisting(target)).store;
    const result = await verifyBackup({ store, backup, sample });
    out(
      `${result.ok ? 'ok' : 'FAILED'}: backup ${backupId} on ${target}${sample === undefined ? '' : ` (sample ${sample}%)`}, ${result.objectsChecked} objects, ${result.bytesChecked} bytes checked`,
    );
    // What is lost in the site's terms first, then each object and where it is (its key in the bucket).
    if (!result.ok && result.lost.everything)
      out('  lost: everything (the list of its files and tables cannot be read)');
    else if (!result.ok) {
      out(`  lost: ${result.lost.files} file(s), ${result.lost.tables} table(s)`);
      for (const path of result.lost.filePaths) out(`  lost file: ${path}`);
      for (const name of result.lost.tableNames) out(`  lost table: ${name}`);
    }
    for (const problem of result.problems) out(`  ${problem}`);
    return result.ok ? 0 : 1;
  } finally {
    await state.close();
  }
}

/**
 * The `local` target's objects, for a command: the data directory's store on one machine; in cluster mode
 * the repository under `backups/` in the blob store, opened with the cluster's secret key, as the daemon's.
 */
export function localBackupObjects({
  dataDir,
  blobStore,
  secretKey,
}: {
  dataDir: string;
  blobStore: StoreLocation | null;
  secretKey: () => Buffer;
}): ObjectStore {
  if (!blobStore) return createFileObjectStore({ dir: backupStoreDir(dataDir) });
  return createRepositoryBackupStore({
    blobs: createSharedBlobs(blobStore).under('backups/'),
    passphrase: clusterPassphrase(secretKey()),
    scratchDir: join(backupStoreDir(dataDir), 'tmp'),
  }).objects;
}

/** `sitewarden recover list --target NAME`: the backups a target holds, read from the bucket with the passphrase alone. */
export async function listTargetSnapshotsCommand({
  target,
  offsite,
  out,
}: {
  target: string;
  offsite?: OffsiteConfig;
  out: (line: string) => void;
}): Promise<number> {
  const targets = createOffsiteTargets({ config: offsite });
  if (!targets.names.includes(target)) {
    out(`no offsite target is named ${target} (SITEWARDEN_TARGETS: ${targets.names.join(', ') || 'none'})`);
    return 2;
  }
  const { snapshots, unreadable } = await targets.snapshots(target);
  out(['BACKUP', 'SITE', 'URL', 'KIND', 'CREATED', 'FILES', 'TABLES'].join('\t'));
  for (const snapshot of snapshots)
    out(
      [
        snapshot.backupId,
        snapshot.siteId,
        snapshot.siteUrl,
        snapshot.kind,
        snapshot.createdAt,
        snapshot.files,
        snapshot.tables,
      ].join('\t'),
    );
  for (const problem of unreadable) out(`unreadable: ${problem}`);
  return unreadable.length > 0 ? 1 : 0;
}

/** `sitewarden recover rekey --target NAME --new-passphrase-file PATH`: rotates the target's passphrase (docs/offsite.md). */
export async function rekeyTargetCommand({
  target,
  offsite,
  newPassphrase,
  out,
}: {
  target: string;
  offsite?: OffsiteConfig;
  newPassphrase: string;
  out: (line: string) => void;
}): Promise<number> {
  if (newPassphrase.length < 12) {
    out('the new passphrase must have at least 12 characters');
    return 2;
  }
  await createOffsiteTargets({ config: offsite }).rekey(target, newPassphrase);
  out(`target ${target}: the repository key is now wrapped by the new passphrase; point its PASSPHRASE_FILE at it`);
  return 0;
}
