import { createHash } from 'node:crypto';
import { openHashScratch } from './hash-scratch.js';
import { openManifest } from './manifest.js';
import type { ObjectStore } from './object-store.js';
import type { BackupRow } from './backups.table.js';

export interface VerifyResult {
  backupId: string;
  ok: boolean;
  objectsChecked: number;
  bytesChecked: number;
  /** Objects the store does not hold, by content hash (each named in `problems` with where it should be). */
  missing: string[];
  /** Objects the store holds that fail authentication or their content hash. */
  corrupt: string[];
  problems: string[];
}

export interface VerifyOptions {
  store: ObjectStore;
  backup: BackupRow;
  /** Percent (0–100] of the backup's files and table batches read back, picked at random; 100 (default) reads all. */
  sample?: number;
  random?: () => number;
}

/**
 * Re-reads a backup from the store: the manifest (and its file parts), every object it
 * references (each must decompress to content with its hash), and every file's chunks together
 * against the size and hash the file was recorded with: a backup holding other bytes than it
 * promises never verifies.
 */
export async function verifyBackup(options: VerifyOptions): Promise<VerifyResult> {
  // What was checked grows with the backup's distinct objects: remembered on disk, not in a Map.
  const scratch = openHashScratch();
  const checked = {
    get: (hash: string): number | false | undefined => {
      const size = scratch.get(hash);
      return size === -1 ? false : size;
    },
    set: (hash: string, size: number | false) => scratch.set(hash, size === false ? -1 : size),
  };
  try {
    return await verifyWith(options, checked);
  } finally {
    scratch.close();
  }
}

async function verifyWith(
  { store, backup, sample = 100, random = Math.random }: VerifyOptions,
  checked: { get(hash: string): number | false | undefined; set(hash: string, size: number | false): void },
): Promise<VerifyResult> {
  const result: VerifyResult = {
    backupId: backup.id,
    ok: false,
    objectsChecked: 0,
    bytesChecked: 0,
    missing: [],
    corrupt: [],
    problems: [],
  };
  // The manifest and its parts are always read whole; a sample skips the rest entry by entry.
  const skipped = () => sample < 100 && random() * 100 >= sample;
  const classify = async (hash: string) => {
    const present = await store.has(hash).catch(() => true);
    (present ? result.corrupt : result.missing).push(hash);
  };
  if ((backup.status !== 'completed' && backup.status !== 'partial') || !backup.manifestHash) {
    result.problems.push(`the backup is ${backup.status}, not completed`);
    return result;
  }
  let manifest;
  try {
    manifest = await openManifest(store, backup.manifestHash);
    result.objectsChecked += 1 + manifest.fileParts.length;
  } catch (error) {
    await classify(backup.manifestHash);
    result.problems.push(`manifest ${backup.manifestHash}: ${(error as Error).message}`);
    return result;
  }

  /** Streams an object through its hash check once (`onChunk` sees the content, read again if need be); its size, or false when it is corrupt. */
  async function check(hash: string, onChunk?: (chunk: Buffer) => void): Promise<number | false> {
    const known = checked.get(hash);
    if (known !== undefined && (!onChunk || known === false)) return known;
    let size = 0;
    try {
      for await (const chunk of store.get(hash)) {
        onChunk?.(chunk as Buffer);
        size += (chunk as Buffer).length;
      }
    } catch (error) {
      checked.set(hash, false);
      await classify(hash);
      result.problems.push(`object ${hash}: ${(error as Error).message}`);
      return false;
    }
    if (known === undefined) {
      result.bytesChecked += size;
      result.objectsChecked++;
      checked.set(hash, size);
    }
    return size;
  }

  try {
    for await (const file of manifest.files()) {
      if (skipped()) continue;
      // A single object named by the file's hash: its own check proves the content, and it is read once however many files share it.
      if (file.chunks.length === 1 && file.chunks[0] === file.sha256) {
        const size = await check(file.sha256);
        if (size !== false && size !== file.size)
          result.problems.push(
            `${file.path}: its content is ${size} bytes hashing to ${file.sha256}, not the recorded ${file.size} bytes hashing to ${file.sha256}`,
          );
        continue;
      }
      const whole = createHash('sha256');
      let size = 0;
      let intact = true;
      for (const chunk of file.chunks) {
        intact =
          (await check(chunk, (bytes) => {
            whole.update(bytes);
            size += bytes.length;
          })) !== false && intact;
      }
      if (!intact) continue;
      const sha256 = whole.digest('hex');
      if (size !== file.size || sha256 !== file.sha256)
        result.problems.push(
          `${file.path}: its content is ${size} bytes hashing to ${sha256}, not the recorded ${file.size} bytes hashing to ${file.sha256}`,
        );
    }
  } catch (error) {
    result.problems.push(`manifest ${backup.manifestHash}: ${(error as Error).message}`);
  }
  for (const table of manifest.tables) for (const batch of table.batches) if (!skipped()) await check(batch);
  result.ok = result.problems.length === 0;
  return result;
}
