import { forEachConcurrently } from '../concurrency.js';
import { referencedObjects } from '../manifest.js';
import type { ObjectStore } from '../object-store.js';
import { clearDamaged, damagedNames } from './damage-marks.js';
import type { RemoteRepository } from './remote-store.js';
import { SNAPSHOT_PREFIX, writeSnapshot, type SnapshotRecord } from './snapshots.js';

/**
 * Uploads at once per target. What they hold is bounded by the target's upload buffers (one byte
 * budget, blobs/s3-backend.ts), not by this count: many small objects go up side by side, few large ones.
 */
const UPLOADS = 16;
/** Read-backs at once of objects a copy that did not finish may have left cut short. */
const READ_BACKS = 4;

export interface ReplicationResult {
  objects: number;
  uploadedObjects: number;
  /** Sealed bytes sent to the target. */
  uploadedBytes: number;
  /** Of the uploaded objects, those a verify had found damaged there (damage-marks.ts), sent again whole. */
  resentObjects: number;
}

/**
 * Copies one backup from the local store to a repository: the objects its manifest references
 * that the repository does not hold yet (one listing of the bucket says which), then the
 * manifest, then the snapshot record. Each object is read from the local store checked against
 * its hash and stored under that hash, so a corrupt local object fails the copy instead of
 * spreading; only those this backup wrote itself moments ago (`writtenSince`) are not checked again. Killed half-way it leaves objects no snapshot names (prune removes them) and never
 * a snapshot naming a missing one; the next backup uploads only what is still missing.
 */
export async function replicateBackup({
  local,
  repository,
  snapshot,
  writtenSince,
  onUploaded,
}: {
  local: ObjectStore;
  repository: RemoteRepository;
  snapshot: SnapshotRecord;
  /**
   * When the backup began (ms since the epoch): objects the local store wrote since then came
   * from content this backup hashed itself and go up unchecked; older ones are checked.
   */
  writtenSince?: number;
  onUploaded?: (bytes: number) => void;
}): Promise<ReplicationResult> {
  let newestSnapshotAt = 0;
  for await (const { modifiedAt } of repository.backend.list(SNAPSHOT_PREFIX))
    newestSnapshotAt = Math.max(newestSnapshotAt, modifiedAt.getTime());
  const present = new Map<string, number>();
  for await (const { name, modifiedAt } of repository.dataNames()) present.set(name, modifiedAt.getTime());
  // Objects a verify found damaged there count as missing: sent again, checked, over the bad copy.
  const damaged = await damagedNames(repository);
  const objects = [...(await referencedObjects(local, snapshot.manifestHash))];
  const resent = objects.filter((hash) => damaged.has(repository.nameOf(hash)));
  const missing = objects.filter(
    (hash) => !present.has(repository.nameOf(hash)) || damaged.has(repository.nameOf(hash)),
  );
  // An object written after the newest snapshot belongs to a copy that has not finished. One killed
  // half-way may have left it cut short on a store that does not write whole objects atomically (real
  // S3 does; s3rver and some self-hosted stores do not): it is read back before it is trusted.
  const unsettled = objects.filter(
    (hash) => !damaged.has(repository.nameOf(hash)) && (present.get(repository.nameOf(hash)) ?? 0) > newestSnapshotAt,
  );
  await forEachConcurrently(unsettled, READ_BACKS, async (hash) => {
    if (!(await readsBackWhole(repository, hash))) missing.push(hash);
  });
  const result: ReplicationResult = {
    objects: objects.length + 1,
    uploadedObjects: 0,
    uploadedBytes: 0,
    resentObjects: 0,
  };
  const upload = async (hash: string) => {
    // Missing from the listing just taken: no lookup per object before its upload. The stored gzip bytes
    // are sealed as they are (checked on the way) when the local store offers them.
    const compressed = await local.openCompressed?.(hash);
    const stored = compressed
      ? await repository.putCompressed(hash, compressed, {
          // A damaged remote copy may have come from a local object gone bad: what is sent again is always checked.
          checked:
            writtenSince === undefined || compressed.writtenAt < writtenSince || damaged.has(repository.nameOf(hash)),
        })
      : await repository.store.put(local.get(hash), hash, { listedAbsent: true });
    result.uploadedObjects++;
    result.uploadedBytes += stored.storedBytes;
    onUploaded?.(stored.storedBytes);
  };
  await forEachConcurrently(missing, UPLOADS, upload);
  const manifestName = repository.nameOf(snapshot.manifestHash);
  if (!present.has(manifestName) || damaged.has(manifestName)) await upload(snapshot.manifestHash);
  await writeSnapshot(repository, snapshot);
  const cleared = [...resent, ...(damaged.has(manifestName) ? [snapshot.manifestHash] : [])];
  await clearDamaged(
    repository,
    cleared.map((hash) => repository.nameOf(hash)),
  );
  result.resentObjects = cleared.length;
  return result;
}

async function readsBackWhole(repository: RemoteRepository, hash: string): Promise<boolean> {
  try {
    for await (const _chunk of repository.store.get(hash));
    return true;
  } catch {
    return false;
  }
}
