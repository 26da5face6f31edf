import { openHashScratch } from '../hash-scratch.js';
import { eachReferencedObject } from '../manifest.js';
import { offsiteProblems } from './offsite.errors.js';
import type { RemoteRepository } from './remote-store.js';
import { deleteSnapshot, listSnapshots, type SnapshotRecord } from './snapshots.js';

/** Multipart uploads and temporary blobs older than this are a killed process's leftovers. */
const UNFINISHED_AFTER_MS = 24 * 3_600_000;

export interface PruneResult {
  target: string;
  /** Snapshot records removed: backups retention deleted (or whose record outlived a crash). */
  snapshotsForgotten: number;
  snapshotsKept: number;
  objectsKept: number;
  /** Data blobs no remaining snapshot references: retention's leftovers, and uploads a killed backup never sealed with a snapshot. */
  objectsDeleted: number;
  unfinishedUploadsRemoved: number;
}

/**
 * Prunes one repository by what it holds itself: the snapshot records `forgotten` says are gone
 * are removed, then every data blob that no remaining snapshot's manifest references (nor the
 * manifest itself) is deleted. Read from the bucket rather than the database, so a snapshot this
 * daemon does not know (another daemon's, a recovered one's) keeps what it references. Nothing is
 * deleted when any snapshot or manifest cannot be read: what it references is unknown.
 *
 * The caller holds the store exclusively: no backup is between listing the blobs it reuses and
 * writing the snapshot that references them (docs/offsite.md, “Prune”).
 */
export async function pruneRepository({
  repository,
  forgotten,
  now,
}: {
  repository: RemoteRepository;
  forgotten: (snapshot: SnapshotRecord) => boolean | Promise<boolean>;
  now: Date;
}): Promise<PruneResult> {
  const { snapshots, unreadable } = await listSnapshots(repository);
  if (unreadable.length > 0)
    throw offsiteProblems.targetFailed.create(
      `target ${repository.target}: prune deleted nothing, ${unreadable.length} snapshot record(s) cannot be read (${unreadable[0]})`,
      { target: repository.target },
    );
  const result: PruneResult = {
    target: repository.target,
    snapshotsForgotten: 0,
    snapshotsKept: 0,
    objectsKept: 0,
    objectsDeleted: 0,
    unfinishedUploadsRemoved: 0,
  };
  const referenced = openHashScratch();
  try {
    for (const snapshot of snapshots) {
      if (await forgotten(snapshot)) {
        await deleteSnapshot(repository, snapshot.backupId);
        result.snapshotsForgotten++;
        continue;
      }
      result.snapshotsKept++;
      referenced.add(repository.nameOf(snapshot.manifestHash));
      try {
        for await (const hash of eachReferencedObject(repository.store, snapshot.manifestHash))
          referenced.add(repository.nameOf(hash));
      } catch (error) {
        throw offsiteProblems.targetFailed.create(
          `target ${repository.target}: prune deleted nothing, the manifest of backup ${snapshot.backupId} cannot be read: ${(error as Error).message}`,
          { target: repository.target },
        );
      }
    }
    for await (const { name } of repository.dataNames()) {
      if (referenced.has(name)) {
        result.objectsKept++;
        continue;
      }
      await repository.deleteData(name);
      result.objectsDeleted++;
    }
  } finally {
    referenced.close();
  }
  result.unfinishedUploadsRemoved = await repository.backend.cleanUnfinished(
    new Date(now.getTime() - UNFINISHED_AFTER_MS),
  );
  return result;
}
