import type { Clock } from '../shared/clock.js';
import type { BackupSettings } from './backup-settings.js';
import type { BackupsRepository } from './backups.repository.js';
import type { BackupRow } from './backups.table.js';
import type { BackupStore } from './backup-store.js';
import type { TargetOperations } from './offsite/target-operations.js';
import { keptBackups } from './retention.js';

/**
 * What retention deletes and the garbage it leaves: a site's backups past its retention policy
 * (src/backups/retention.ts), then every object no completed backup references any more.
 */
export function createCollection({
  repository,
  settings,
  targetOperations,
  store,
  clock,
}: {
  repository: BackupsRepository;
  settings: BackupSettings;
  targetOperations: TargetOperations;
  store: BackupStore;
  clock: Clock;
}) {
  /** Deletes every object no completed backup references; waits until no job (of any process of a cluster) is using the store. */
  function collectGarbage(): Promise<number> {
    // Read inside the lock: no backup is between storing its objects and being written completed.
    return store.lock.exclusive(async () =>
      store.collectGarbage(
        (await repository.completedBackups()).flatMap((row) =>
          row.manifestHash ? [{ id: row.id, manifestHash: row.manifestHash }] : [],
        ),
      ),
    );
  }

  /**
   * Keeps the site's completed backups its retention keeps; failed ones older than the oldest kept
   * go too. The deleted ones' snapshot records leave their offsite targets at once; what only they
   * referenced there goes at the targets' next prune.
   */
  async function applyRetention(siteId: string): Promise<{ deletedBackups: string[]; deletedObjects: number }> {
    const all = await repository.allBackups(siteId);
    const held = (row: BackupRow) => row.status === 'completed' || row.status === 'partial';
    const keptIds = keptBackups(all.filter(held), await settings.policy(siteId), clock.now());
    const oldestKept = [...keptIds].sort()[0] ?? '';
    const doomed = all.filter(
      (row) => (held(row) && !keptIds.has(row.id)) || (row.status === 'failed' && row.id < oldestKept),
    );
    // Only those that have ended go, whatever was read: a backup is never deleted while it runs.
    const deleted = await repository.deleteEndedBackups(doomed.map((row) => row.id));
    await targetOperations.forget(deleted);
    const deletedObjects = deleted.length > 0 ? await collectGarbage() : 0;
    return { deletedBackups: deleted.map((row) => row.id), deletedObjects };
  }

  return { applyRetention, collectGarbage };
}
