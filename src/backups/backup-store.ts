import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { hashingTap } from './hashing-tap.js';
import type { BlobBackend } from '../blobs/blob-backend.js';
import type { ReadWriteLock } from '../db/cluster-lock.js';
import { createStoreLock } from './concurrency.js';
import { collectGarbage } from './garbage.js';
import { openHashScratch } from './hash-scratch.js';
import { eachReferencedObject } from './manifest.js';
import { createFileObjectStore, type ObjectStore } from './object-store.js';
import { openRemoteRepository, REMOTE_READ_AHEAD, type RemoteRepository } from './offsite/remote-store.js';
import { deleteSnapshot, listSnapshots, writeSnapshot, type SnapshotRecord } from './offsite/snapshots.js';
import { LOCAL_TARGET } from './offsite/targets.config.js';

/**
 * Where the daemon's own backups are kept: the `local` target. On one machine, the content-addressed file
 * store in the data directory (object-store.ts), as always. In cluster mode (issue 34), an offsite repository
 * (remote-store.ts: sealed, under keyed names) under the `backups/` prefix of the cluster's blob store, so that
 * any process restores, verifies and downloads what any worker took, and a worker keeps only scratch files.
 * Backups, restores and the jobs that read or repair take the store `shared`; what deletes from it (garbage
 * collection, a target's prune) `exclusive`, across every process of a cluster.
 */
export interface BackupStore {
  readonly objects: ObjectStore;
  readonly lock: ReadWriteLock;
  /**
   * Called once a backup's objects and manifest are stored, before it is written completed: the repository
   * writes the backup's snapshot record last, so a snapshot never names anything that is not there.
   */
  seal(snapshot: SnapshotRecord): Promise<void>;
  /** Deletes what the kept backups (completed or partial) do not reference; the caller holds the lock exclusively. */
  collectGarbage(kept: readonly { id: string; manifestHash: string }[]): Promise<number>;
  /** At start: what this process's killed predecessor left unfinished (temporary files), never another process's. */
  cleanUnfinished(): Promise<void>;
}

/** The cluster's lock on its backup store: key 4 of ADVISORY_LOCK_NAMESPACE (1 migrations, 2 fleet totals, 3 uptime). */
export const BACKUP_STORE_LOCK_KEY = 4;

/** The passphrase of the cluster's repository key file: the cluster's secret key, its 32 bytes in base64 (however it was given). */
export const clusterPassphrase = (secretKey: Buffer): string => secretKey.toString('base64');

/** One machine: DATA_DIR/backups, and the lock of this process's jobs. */
export function createLocalBackupStore(dir: string): BackupStore {
  const objects = createFileObjectStore({ dir });
  return {
    objects,
    lock: createStoreLock(),
    seal: async () => undefined,
    collectGarbage: (kept) =>
      collectGarbage(
        objects,
        kept.map((row) => row.manifestHash),
      ),
    cleanUnfinished: () => objects.cleanTemporary(),
  };
}

/**
 * Cluster mode: the repository in `blobs` (the blob store's `backups/` prefix), its key file created on first use
 * and wrapped by `passphrase` (the cluster's secret key: every process has it, and nobody keeps a second secret),
 * opened at first use. `scratchDir` holds a chunk whose hash is not known yet while it is hashed (its keyed name
 * comes from the hash). `lock` is the cluster's (every process's jobs), taken after this process's own.
 */
export function createRepositoryBackupStore({
  blobs,
  passphrase,
  scratchDir,
  lock,
}: {
  blobs: BlobBackend;
  passphrase: string;
  scratchDir: string;
  /** The cluster's lock (BACKUP_STORE_LOCK_KEY); absent, this process's alone (tests of the repository on SQLite). */
  lock?: ReadWriteLock;
}): BackupStore {
  let opened: Promise<RemoteRepository> | undefined;
  const repository = () => {
    if (!opened) {
      opened = openClusterRepository({ blobs, passphrase });
      opened.catch(() => (opened = undefined));
    }
    return opened;
  };
  const store = async () => (await repository()).store;
  const local = createStoreLock();

  const objects: ObjectStore = {
    readAhead: REMOTE_READ_AHEAD,
    has: async (hash) => (await store()).has(hash),
    holds: async (hash, size) => (await store()).holds(hash, size),
    async put(content, expectedHash, options) {
      if (expectedHash || Buffer.isBuffer(content)) return (await store()).put(content, expectedHash, options);
      return putHashedFirst(await store(), content, scratchDir, options?.compressionLevel);
    },
    get(hash) {
      const out = new PassThrough();
      out.on('error', () => undefined);
      store().then(
        (opened) => {
          const body = opened.get(hash);
          body.on('error', (error) => out.destroy(error));
          body.pipe(out);
        },
        (error: unknown) => out.destroy(error as Error),
      );
      return out;
    },
    read: async (hash) => (await store()).read(hash),
    delete: async (hash) => (await store()).delete(hash),
    // eslint-disable-next-line require-yield
    async *list() {
      throw new Error('the cluster’s repository names objects by keyed hash: its garbage is collected by name');
    },
  };

  return {
    objects,
    lock: lock
      ? {
          shared: (work) => local.shared(() => lock.shared(work)),
          exclusive: (work) => local.exclusive(() => lock.exclusive(work)),
        }
      : local,
    seal: async (snapshot) => writeSnapshot(await repository(), snapshot),
    collectGarbage: async (kept) => collectRepositoryGarbage(await repository(), kept),
    cleanUnfinished: () => rm(scratchDir, { recursive: true, force: true }),
  };
}

/**
 * The cluster's repository, its key file created on first use: the `local` target's store (above) and
 * `sitewarden cluster import`, which copies a data directory's backups into it, open it the same way.
 */
export const openClusterRepository = ({ blobs, passphrase }: { blobs: BlobBackend; passphrase: string }) =>
  openRemoteRepository({ target: LOCAL_TARGET, backend: blobs, passphrase, create: true });

/**
 * A stream of content whose hash is not known (a large file's chunk, as the site sends it) written to a scratch
 * file while it is hashed, then stored from there under its keyed name; the scratch file is removed either way.
 */
async function putHashedFirst(store: ObjectStore, content: Readable, scratchDir: string, compressionLevel?: number) {
  await mkdir(scratchDir, { recursive: true, mode: 0o700 });
  const scratch = join(scratchDir, `${process.pid}-${randomBytes(8).toString('hex')}`);
  try {
    const counted = hashingTap();
    await pipeline(content, counted.tap, createWriteStream(scratch, { mode: 0o600 }));
    const hash = counted.digest();
    // An object stored already answers no size: the caller checks the chunk's length against what it asked for.
    const result = await store.put(createReadStream(scratch), hash, { compressionLevel });
    return { ...result, hash, size: counted.size };
  } finally {
    await rm(scratch, { force: true });
  }
}

/**
 * The repository's garbage: the snapshot records of backups no longer kept (retention deleted them, or one
 * sealed by a run that then failed), then every data blob no kept backup's manifest references. By the
 * database's rows rather than the snapshots alone: the rows say which backups this cluster keeps.
 */
async function collectRepositoryGarbage(
  repository: RemoteRepository,
  kept: readonly { id: string; manifestHash: string }[],
): Promise<number> {
  const keptIds = new Set(kept.map((row) => row.id));
  const { snapshots } = await listSnapshots(repository);
  for (const snapshot of snapshots)
    if (!keptIds.has(snapshot.backupId)) await deleteSnapshot(repository, snapshot.backupId);
  const referenced = openHashScratch();
  try {
    for (const { manifestHash } of kept) {
      referenced.add(repository.nameOf(manifestHash));
      for await (const hash of eachReferencedObject(repository.store, manifestHash))
        referenced.add(repository.nameOf(hash));
    }
    let deleted = 0;
    for await (const { name } of repository.dataNames()) {
      if (referenced.has(name)) continue;
      await repository.deleteData(name);
      deleted++;
    }
    return deleted;
  } finally {
    referenced.close();
  }
}
