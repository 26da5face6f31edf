import { eachReferencedObject } from '../../src/backups/manifest.js';
import type { RemoteRepository } from '../../src/backups/offsite/remote-store.js';
import { listSnapshots } from '../../src/backups/offsite/snapshots.js';

/**
 * What a repository promises, read back: every snapshot opens, and every object its manifest
 * references is there and reads back whole (authentication tag, then content hash). The problems
 * found, one line each, and the backups it holds.
 */
export async function checkRepository(
  repository: RemoteRepository,
): Promise<{ backups: string[]; problems: string[] }> {
  const { snapshots, unreadable } = await listSnapshots(repository);
  const problems = [...unreadable];
  const checked = new Set<string>();
  for (const snapshot of snapshots) {
    const objects = [snapshot.manifestHash];
    try {
      for await (const hash of eachReferencedObject(repository.store, snapshot.manifestHash)) objects.push(hash);
    } catch (error) {
      problems.push(`backup ${snapshot.backupId}: manifest: ${(error as Error).message}`);
    }
    for (const hash of objects) {
      if (checked.has(hash)) continue;
      checked.add(hash);
      try {
        for await (const _chunk of repository.store.get(hash));
      } catch (error) {
        problems.push(`backup ${snapshot.backupId}: ${(error as Error).message}`);
      }
    }
  }
  return { backups: snapshots.map((snapshot) => snapshot.backupId), problems };
}
