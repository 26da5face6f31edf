import { createHash } from 'node:crypto';
import { openHashScratch } from './hash-scratch.js';
import { openManifest, type ManifestFileEntry } from './manifest.js';
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
  /** What the missing and corrupt objects (and files whose content does not match) take away, in the site's terms. */
  lost: LostContent;
}

/**
 * Objects read back at once. An offsite read is mostly waiting on the network (a GET's latency per
 * object): side by side they take a fraction of the time one by one does. Each is streamed, so what
 * is held is a few stream buffers per read, never whole objects.
 */
const VERIFY_READS = 8;

/** At most this many paths and table names are listed; the counts say how many there are. */
export const LOST_LISTED = 50;

/** What a damaged backup cannot give back: site files by path, database tables by name. */
interface LostContent {
  /** The manifest itself is gone or unreadable: nothing of the backup can be restored, its files and tables unknown. */
  everything: boolean;
  files: number;
  /** The first LOST_LISTED of them, in the backup's path order. */
  filePaths: string[];
  tables: number;
  tableNames: string[];
}

export interface VerifyProgress {
  /** File entries and table entries read back so far, of `files` and `tables` (all of them, sampled or not). */
  filesChecked: number;
  files: number;
  tablesChecked: number;
  tables: number;
  objectsChecked: number;
  bytesChecked: number;
}

export interface VerifyOptions {
  store: ObjectStore;
  backup: BackupRow;
  /** Percent (0–100] of the backup's files and table batches read back, picked at random; 100 (default) reads all. */
  sample?: number;
  random?: () => number;
  /** Told as it goes (every entry: the caller throttles). */
  onProgress?: (progress: VerifyProgress) => void;
  /** Stops the walk (it throws the signal's reason). */
  signal?: AbortSignal;
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
  { store, backup, sample = 100, random = Math.random, onProgress, signal }: VerifyOptions,
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
    lost: { everything: false, files: 0, filePaths: [], tables: 0, tableNames: [] },
  };
  const lostFile = (path: string) => {
    if (result.lost.files++ < LOST_LISTED) result.lost.filePaths.push(path);
  };
  const lostTable = (name: string) => {
    if (result.lost.tables++ < LOST_LISTED) result.lost.tableNames.push(name);
  };
  // The manifest and its parts are always read whole; a sample skips the rest entry by entry.
  const skipped = () => sample < 100 && random() * 100 >= sample;
  const classify = async (hash: string) => {
    const present = await store.has(hash).catch(() => true);
    (present ? result.corrupt : result.missing).push(hash);
  };
  if ((backup.status !== 'completed' && backup.status !== 'partial') || !backup.manifestHash) {
    result.problems.push(`the backup is ${backup.status}, not completed`);
    result.lost.everything = true;
    return result;
  }
  let manifest;
  try {
    manifest = await openManifest(store, backup.manifestHash);
    result.objectsChecked += 1 + manifest.fileParts.length;
  } catch (error) {
    await classify(backup.manifestHash);
    result.problems.push(`manifest ${backup.manifestHash}: ${(error as Error).message}`);
    result.lost.everything = true;
    return result;
  }
  const progress: VerifyProgress = {
    filesChecked: 0,
    files: backup.files ?? 0,
    tablesChecked: 0,
    tables: manifest.tables.length,
    objectsChecked: 0,
    bytesChecked: 0,
  };
  const told = () => {
    signal?.throwIfAborted();
    onProgress?.({ ...progress, objectsChecked: result.objectsChecked, bytesChecked: result.bytesChecked });
  };

  // An object being checked by one read is not read again by another at the same time.
  const reading = new Map<string, Promise<number | false>>();
  /** Streams an object through its hash check once (`onChunk` sees the content, read again if need be); its size, or false when it is corrupt. */
  function check(hash: string, onChunk?: (chunk: Buffer) => void): Promise<number | false> {
    if (onChunk) return read(hash, onChunk);
    const known = checked.get(hash);
    if (known !== undefined) return Promise.resolve(known);
    let pending = reading.get(hash);
    if (!pending) {
      pending = read(hash).finally(() => reading.delete(hash));
      reading.set(hash, pending);
    }
    return pending;
  }
  async function read(hash: string, onChunk?: (chunk: Buffer) => void): Promise<number | false> {
    const known = checked.get(hash);
    if (known === false) return known;
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

  /** One file read back whole: each chunk, and the content against the size and hash recorded. */
  async function checkFile(file: ManifestFileEntry): Promise<void> {
    // A single object named by the file's hash: its own check proves the content, and it is read once however many files share it.
    if (file.chunks.length === 1 && file.chunks[0] === file.sha256) {
      const size = await check(file.sha256);
      if (size === false) lostFile(file.path);
      else if (size !== file.size) {
        lostFile(file.path);
        result.problems.push(
          `${file.path}: its content is ${size} bytes hashing to ${file.sha256}, not the recorded ${file.size} bytes hashing to ${file.sha256}`,
        );
      }
      return;
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
    if (!intact) {
      lostFile(file.path);
      return;
    }
    const sha256 = whole.digest('hex');
    if (size !== file.size || sha256 !== file.sha256) {
      lostFile(file.path);
      result.problems.push(
        `${file.path}: its content is ${size} bytes hashing to ${sha256}, not the recorded ${file.size} bytes hashing to ${file.sha256}`,
      );
    }
  }

  // Files (and tables) are checked VERIFY_READS at a time, in manifest order; nothing a check finds throws.
  const running = new Set<Promise<void>>();
  const start = async (work: Promise<void>) => {
    const tracked = work.finally(() => running.delete(tracked));
    tracked.catch(() => undefined);
    running.add(tracked);
    if (running.size >= VERIFY_READS) await Promise.race(running);
  };
  try {
    try {
      for await (const file of manifest.files()) {
        progress.filesChecked++;
        told();
        if (!skipped()) await start(checkFile(file));
      }
    } catch (error) {
      if (signal?.aborted) throw error;
      // A part of the file list that cannot be read: which files it held is not known.
      result.problems.push(`manifest ${backup.manifestHash}: ${(error as Error).message}`);
      result.lost.everything = true;
    }
    for (const table of manifest.tables) {
      progress.tablesChecked++;
      told();
      const batches = table.batches.filter(() => !skipped());
      await start(
        (async () => {
          let intact = true;
          for (const batch of batches) intact = (await check(batch)) !== false && intact;
          if (!intact) lostTable(table.name);
        })(),
      );
    }
  } finally {
    // Even when stopped: no read outlives the walk (the scratch it writes to is closed after it).
    await Promise.allSettled([...running]);
  }
  told();
  // Found side by side: listed in the backup's order.
  result.lost.filePaths.sort();
  result.lost.tableNames.sort();
  result.missing.sort();
  result.corrupt.sort();
  result.ok = result.problems.length === 0;
  return result;
}
