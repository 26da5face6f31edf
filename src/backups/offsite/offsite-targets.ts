import { isAppError, isProblem } from '../../shared/errors.js';
import type { ObjectStore } from '../object-store.js';
import { openStoreLocation } from '../../blobs/store-location.js';
import { offsiteProblems } from './offsite.errors.js';
import { openRemoteRepository, rewrapRepositoryKey, type RemoteRepository } from './remote-store.js';
import { replicateBackup } from './replicate.js';
import { listSnapshots, type SnapshotRecord } from './snapshots.js';
import { LOCAL_TARGET, type OffsiteConfig } from './targets.config.js';

export interface TargetFailure {
  target: string;
  message: string;
}

/**
 * The configured offsite targets: each repository is opened (its key unwrapped) once and kept,
 * a failed open is tried again next time. Backups are taken into the local store, then copied to
 * each target of the site; restores and downloads read from whichever target holds the backup.
 */
export function createOffsiteTargets({ config }: { config: OffsiteConfig | undefined }) {
  const configs = new Map((config?.targets ?? []).map((target) => [target.name, target]));
  const opened = new Map<string, Promise<RemoteRepository>>();

  /** The target's repository; `create` makes its key file when the bucket has none (backups do, recovery does not). */
  function open(name: string, { create = true }: { create?: boolean } = {}): Promise<RemoteRepository> {
    const target = configs.get(name);
    if (!target)
      return Promise.reject(
        offsiteProblems.targetUnknown.create(
          `no backup target is named ${JSON.stringify(name)} (configured: ${[LOCAL_TARGET, ...configs.keys()].join(', ')})`,
        ),
      );
    let repository = opened.get(name);
    if (!repository) {
      repository = openStoreLocation(target).then((backend) =>
        openRemoteRepository({ target: name, backend, passphrase: target.passphrase, create }),
      );
      opened.set(name, repository);
      repository.catch(() => opened.delete(name));
    }
    return repository;
  }

  /** An existing repository, for reading on a user's request: a target that cannot be reached is `backup-target-failed`. */
  async function openExisting(name: string): Promise<RemoteRepository> {
    try {
      return await open(name, { create: false });
    } catch (error) {
      if (isAppError(error)) throw error;
      throw offsiteProblems.targetFailed.create(`target ${name}: ${(error as Error).message}`, { target: name });
    }
  }

  return {
    /** Names of the configured offsite targets (not `local`). */
    names: [...configs.keys()],
    open,
    openExisting,

    /** The targets a site backs up to. */
    targetsFor(_siteId: string): string[] {
      return config?.defaultTargets ?? [LOCAL_TARGET];
    },

    /**
     * Copies a completed local backup to each offsite target in `targets`. A target that fails is
     * reported (the backup is then `partial`), the others still get their copy.
     */
    async replicate({
      local,
      targets,
      snapshot,
      writtenSince,
    }: {
      local: ObjectStore;
      targets: string[];
      snapshot: SnapshotRecord;
      /** When the backup began, by the file system's clock: see replicateBackup. */
      writtenSince?: number;
    }): Promise<{
      held: string[];
      failures: TargetFailure[];
      uploadedBytes: number;
      /** Targets where objects a verify had found damaged were sent again, and how many. */
      resent: { target: string; objects: number }[];
    }> {
      const held = [LOCAL_TARGET];
      const failures: TargetFailure[] = [];
      const resent: { target: string; objects: number }[] = [];
      let uploadedBytes = 0;
      for (const name of targets) {
        if (name === LOCAL_TARGET) continue;
        try {
          const repository = await open(name);
          const copy = await replicateBackup({ local, repository, snapshot, writtenSince });
          uploadedBytes += copy.uploadedBytes;
          if (copy.resentObjects > 0) resent.push({ target: name, objects: copy.resentObjects });
          held.push(name);
        } catch (error) {
          failures.push({ target: name, message: (error as Error).message });
        }
      }
      return { held, failures, uploadedBytes, resent };
    },

    /**
     * The store to read a backup from: the local one while it holds the manifest, otherwise the
     * first of the backup's offsite targets that does. A target that could not be read (unreachable,
     * timing out, a key that does not open) is not a target that lacks the backup: when none holds
     * it and one of them failed, the answer is `backup-target-failed`, naming it and why, to be
     * tried again; `backup-not-held` only when every target answered and none has it.
     */
    async storeHolding(
      backup: { id: string; manifestHash: string; targets: string[] | null },
      local: ObjectStore,
    ): Promise<{ target: string; store: ObjectStore }> {
      if (await local.has(backup.manifestHash)) return { target: LOCAL_TARGET, store: local };
      const absent: string[] = [];
      const failures: TargetFailure[] = [];
      for (const name of backup.targets ?? []) {
        if (name === LOCAL_TARGET) continue;
        if (!configs.has(name)) {
          absent.push(`${name}: no longer configured`);
          continue;
        }
        try {
          const repository = await open(name, { create: false });
          if (await repository.store.has(backup.manifestHash)) return { target: name, store: repository.store };
          absent.push(`${name}: its manifest is not there`);
        } catch (error) {
          // An answer that the bucket holds no repository at all is an answer: the backup is not there.
          if (isProblem(error, offsiteProblems.targetEmpty)) absent.push(`${name}: it holds no repository`);
          else failures.push({ target: name, message: (error as Error).message });
        }
      }
      const notHere = `backup ${backup.id}: the local store no longer holds it`;
      if (failures.length > 0)
        throw offsiteProblems.targetFailed.create(
          `${notHere}, and ${failures.map((failure) => `target ${failure.target} could not be read (${failure.message})`).join('; ')}${absent.length > 0 ? `; the others do not hold it (${absent.join('; ')})` : ''}: try again once it answers`,
          { target: failures[0]!.target, targets: failures.map((failure) => failure.target), backupId: backup.id },
        );
      throw offsiteProblems.notHeld.create(
        `${notHere}${absent.length > 0 ? `, nor does any target (${absent.join('; ')})` : ' and it was copied to no other target'}`,
        { backupId: backup.id },
      );
    },

    /** Rewraps the target's repository key under a new passphrase (at least 12 characters). */
    async rekey(name: string, newPassphrase: string): Promise<void> {
      const target = configs.get(name);
      if (!target) throw offsiteProblems.targetUnknown.create(`no offsite target is named ${JSON.stringify(name)}`);
      await rewrapRepositoryKey({
        target: name,
        backend: await openStoreLocation(target),
        passphrase: target.passphrase,
        newPassphrase,
      });
      opened.delete(name);
    },

    /** The backups a target holds, from its snapshot records alone (disaster recovery). */
    async snapshots(name: string) {
      return listSnapshots(await openExisting(name));
    },
  };
}

export type OffsiteTargets = ReturnType<typeof createOffsiteTargets>;
