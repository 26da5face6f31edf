import type Database from 'better-sqlite3';
import { and, asc, eq, inArray, isNotNull } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import type { BlobBackend } from '../blobs/blob-backend.js';
import { sites } from '../sites/index.js';
import { clusterPassphrase, openClusterRepository } from './backup-store.js';
import { backupStoreDir } from './backups.service.js';
import { backups, type BackupRow } from './backups.table.js';
import { createFileObjectStore } from './object-store.js';
import { replicateBackup } from './offsite/replicate.js';
import type { SnapshotRecord } from './offsite/snapshots.js';
import { verifyBackup } from './verify.js';

/**
 * `sitewarden cluster import`'s backups (issue 34, docs/cluster.md "Moving a single machine into a cluster"): each
 * backup a data directory's store holds copied into the cluster's repository (the `local` target in cluster mode,
 * backup-store.ts) as an offsite copy replicates one (replicate.ts: each object read checked against its hash, only
 * what the repository lacks uploaded, the snapshot record last), then verified there as `backup verify` does. A
 * copy that fails leaves what it uploaded, objects no snapshot names: the next import finds them there and does not
 * send them again (the cluster's garbage collection removes them if no import comes).
 */
export async function importBackups({
  dataDir,
  source,
  blobs,
  secretKey,
}: {
  dataDir: string;
  /** The data directory's database (the import reads it in one transaction). */
  source: Database.Database;
  /** The cluster's blob store under `backups/`. */
  blobs: BlobBackend;
  secretKey: Buffer;
}): Promise<{ count: number; bytes: number }> {
  const held = heldBackups(source);
  const moved = { count: 0, bytes: 0 };
  if (held.length === 0) return moved;
  const repository = await openClusterRepository({ blobs, passphrase: clusterPassphrase(secretKey) });
  const local = createFileObjectStore({ dir: backupStoreDir(dataDir) });
  for (const { backup, siteUrl } of held) {
    const which = `backup ${backup.id} of ${siteUrl}`;
    const copy = await replicateBackup({ local, repository, snapshot: snapshotOf(backup, siteUrl) }).catch(
      (error: unknown) => {
        throw new Error(
          `${which} could not be copied from ${backupStoreDir(dataDir)}: ${(error as Error).message} (\`sitewarden backup verify ${backup.id}\` on the single machine says what is damaged; delete the backup there if it is, then import again)`,
        );
      },
    );
    const verified = await verifyBackup({ store: repository.store, backup });
    if (!verified.ok)
      throw new Error(
        `${which} does not verify in the cluster’s blob store (${blobs.location}): ${verified.problems.slice(0, 3).join('; ')}`,
      );
    moved.count++;
    moved.bytes += copy.uploadedBytes;
  }
  return moved;
}

/** The backups the local store holds whole (completed, or partial: an offsite copy failed), with their site's url. */
function heldBackups(source: Database.Database): { backup: BackupRow; siteUrl: string }[] {
  return drizzle(source)
    .select({ backup: backups, siteUrl: sites.url })
    .from(backups)
    .innerJoin(sites, eq(sites.id, backups.siteId))
    .where(and(inArray(backups.status, ['completed', 'partial']), isNotNull(backups.manifestHash)))
    .orderBy(asc(backups.id))
    .all();
}

/** The repository's record of a backup, as the backup job seals it (backup-job.ts), from its row. */
function snapshotOf(backup: BackupRow, siteUrl: string): SnapshotRecord {
  return {
    format: 1,
    backupId: backup.id,
    siteId: backup.siteId,
    siteUrl,
    kind: backup.kind,
    createdAt: backup.createdAt.toISOString(),
    finishedAt: (backup.finishedAt ?? backup.createdAt).toISOString(),
    manifestHash: backup.manifestHash!,
    files: backup.files,
    tables: backup.tables,
    rows: backup.rows,
    bytesTotal: backup.bytesTotal,
  };
}
