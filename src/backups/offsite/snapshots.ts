import { z } from 'zod';
import { backupKinds } from '../backups.table.js';
import { keyedName } from './repository-key.js';
import type { RemoteRepository } from './remote-store.js';
import { openBuffer, sealBuffer } from './sealed-stream.js';

export const SNAPSHOT_PREFIX = 'snapshots/';

/**
 * What a repository says about each backup it holds, sealed like its objects: enough for a daemon
 * with an empty data directory to list a site's backups and restore one. Written last, after the
 * manifest and every object it references, so a snapshot never names anything that is not there.
 */
export const SnapshotRecord = z.object({
  format: z.literal(1),
  backupId: z.string().min(1).max(100),
  siteId: z.string().min(1).max(100),
  siteUrl: z.string(),
  kind: z.enum(backupKinds),
  createdAt: z.string(),
  finishedAt: z.string(),
  manifestHash: z.string().regex(/^[0-9a-f]{64}$/),
  files: z.number().int().min(0),
  tables: z.number().int().min(0),
  rows: z.number().int().min(0),
  bytesTotal: z.number().int().min(0),
});
export type SnapshotRecord = z.infer<typeof SnapshotRecord>;

const snapshotKey = (repository: RemoteRepository, backupId: string) =>
  `${SNAPSHOT_PREFIX}${keyedName(repository.keys, `snapshot ${backupId}`)}`;

export async function writeSnapshot(repository: RemoteRepository, record: SnapshotRecord): Promise<void> {
  const key = snapshotKey(repository, record.backupId);
  await repository.backend.put(key, [await sealBuffer(repository.keys.data, key, Buffer.from(JSON.stringify(record)))]);
}

/** Removes a backup's snapshot record: the repository no longer offers the backup, and prune may delete what only it referenced. */
export async function deleteSnapshot(repository: RemoteRepository, backupId: string): Promise<void> {
  await repository.backend.delete(snapshotKey(repository, backupId));
}

/** One backup's snapshot record, or null when the repository holds none for it. */
export async function readSnapshot(repository: RemoteRepository, backupId: string): Promise<SnapshotRecord | null> {
  const key = snapshotKey(repository, backupId);
  const body = await repository.backend.get(key);
  if (!body) return null;
  return openSnapshot(repository, key, body);
}

async function openSnapshot(repository: RemoteRepository, key: string, body: AsyncIterable<unknown>) {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  const plain = await openBuffer(repository.keys.data, key, Buffer.concat(chunks));
  return SnapshotRecord.parse(JSON.parse(plain.toString('utf8')));
}

/** Every snapshot the repository holds, oldest first; one that cannot be opened is reported in `unreadable`, not skipped silently. */
export async function listSnapshots(
  repository: RemoteRepository,
): Promise<{ snapshots: SnapshotRecord[]; unreadable: string[] }> {
  const snapshots: SnapshotRecord[] = [];
  const unreadable: string[] = [];
  for await (const { key } of repository.backend.list(SNAPSHOT_PREFIX)) {
    try {
      const body = await repository.backend.get(key);
      if (body) snapshots.push(await openSnapshot(repository, key, body));
    } catch (error) {
      unreadable.push(`${key}: ${(error as Error).message}`);
    }
  }
  snapshots.sort((a, b) => (a.backupId < b.backupId ? -1 : a.backupId > b.backupId ? 1 : 0));
  return { snapshots, unreadable };
}
