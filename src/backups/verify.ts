import { createHash } from 'node:crypto';
import { openManifest } from './manifest.js';
import type { ObjectStore } from './object-store.js';
import type { BackupRow } from './backups.table.js';

export interface VerifyResult {
  backupId: string;
  ok: boolean;
  objectsChecked: number;
  bytesChecked: number;
  problems: string[];
}

/**
 * Re-reads a backup from the store: the manifest (and its file parts), every object it
 * references (each must decompress to content with its hash), and every file's chunks together
 * against the size and hash the file was recorded with: a backup holding other bytes than it
 * promises never verifies.
 */
export async function verifyBackup({ store, backup }: { store: ObjectStore; backup: BackupRow }): Promise<VerifyResult> {
  const result: VerifyResult = { backupId: backup.id, ok: false, objectsChecked: 0, bytesChecked: 0, problems: [] };
  if (backup.status !== 'completed' || !backup.manifestHash) {
    result.problems.push(`the backup is ${backup.status}, not completed`);
    return result;
  }
  let manifest;
  try {
    manifest = await openManifest(store, backup.manifestHash);
    result.objectsChecked += 1 + manifest.fileParts.length;
  } catch (error) {
    result.problems.push(`manifest ${backup.manifestHash}: ${(error as Error).message}`);
    return result;
  }
  const checked = new Map<string, boolean>();

  /** Streams an object through its hash check; `onChunk` sees the content. */
  async function check(hash: string, onChunk?: (chunk: Buffer) => void): Promise<boolean> {
    const known = checked.get(hash);
    if (known !== undefined && !onChunk) return known;
    try {
      for await (const chunk of store.get(hash)) {
        onChunk?.(chunk as Buffer);
        if (known === undefined) result.bytesChecked += (chunk as Buffer).length;
      }
      if (known === undefined) result.objectsChecked++;
      checked.set(hash, true);
      return true;
    } catch (error) {
      checked.set(hash, false);
      result.problems.push(`object ${hash}: ${(error as Error).message}`);
      return false;
    }
  }

  try {
    for await (const file of manifest.files()) {
      const whole = createHash('sha256');
      let size = 0;
      let intact = true;
      for (const chunk of file.chunks) {
        intact =
          (await check(chunk, (bytes) => {
            whole.update(bytes);
            size += bytes.length;
          })) && intact;
      }
      if (!intact) continue;
      const sha256 = whole.digest('hex');
      if (size !== file.size || sha256 !== file.sha256) result.problems.push(`${file.path}: its content is ${size} bytes hashing to ${sha256}, not the recorded ${file.size} bytes hashing to ${file.sha256}`);
    }
  } catch (error) {
    result.problems.push(`manifest ${backup.manifestHash}: ${(error as Error).message}`);
  }
  for (const table of manifest.tables) for (const batch of table.batches) await check(batch);
  result.ok = result.problems.length === 0;
  return result;
}
