import { setImmediate } from 'node:timers/promises';
import { parseStored } from '../shared/stored-json.js';
import type { BackupConnector } from '../wordpress/connector-client.js';
import type { BackupLimits } from './backup-limits.js';
import { noBackupProgress } from './backup-job-rows.js';
import { openBackupScratch, type DeclaredFile, type ReuseCandidate } from './backup-scratch.js';
import { forEachConcurrently } from './concurrency.js';
import { listFiles } from './file-listing.js';
import { createFileTransfer } from './file-transfer.js';
import { CHUNK_BYTES, ChunkList, writeManifest, type OpenedManifest } from './manifest.js';
import type { ObjectStore } from './object-store.js';
import { readTables } from './table-reader.js';

export interface BackupProgress {
  files: number;
  filesDone: number;
  tables: number;
  tablesDone: number;
  rows: number;
  bytesTotal: number;
  bytesTransferred: number;
  bytesStored: number;
}

const FILE_TRANSFERS = 2;
/** Files up to this size travel in bundles of up to BUNDLE_BYTES or BUNDLE_FILES files. */
const BUNDLE_FILE_BYTES = 1024 * 1024;
const BUNDLE_BYTES = 2 * 1024 * 1024;
const BUNDLE_FILES = 500;
/** Listed files taken from the scratch store at a time to see whether they are held already. */
const REUSE_SLICE = 250;
/** Files to download gathered before their transfers start: what the transfer holds in memory. */
const FILES_PER_WINDOW = 4000;
const REUSE_CHECKS = 16;

/**
 * Takes one backup: lists the site's files (into a scratch store on disk, page by page) and
 * tables through the connector, downloads only content this site has not already proven it
 * holds, checking every file against its declared size and hash (and reuses the previous
 * backup's table batches when a table's checksum and row count are unchanged), then writes the
 * manifest. Returns the manifest's hash; the caller marks the backup completed only after this
 * resolves. `limits` bounds its time and bytes: past the deadline it fails with
 * `backup-deadline-exceeded`.
 */
export async function runBackup({
  connector,
  store,
  previous,
  siteUrl,
  now,
  onProgress,
  scratchPath,
  limits,
}: {
  connector: BackupConnector;
  store: ObjectStore;
  previous: OpenedManifest | null;
  siteUrl: string;
  now: () => Date;
  onProgress: (progress: BackupProgress) => void;
  scratchPath: string;
  limits: BackupLimits;
}): Promise<{ manifestHash: string; progress: BackupProgress }> {
  const scratch = openBackupScratch(scratchPath);
  let done = false;
  let trailingReport: NodeJS.Timeout | undefined;
  try {
    // A stalled body does not end when its call is aborted (it waits for its own timeout): the deadline ends the backup at once.
    const backingUp = backUp();
    backingUp.catch(() => undefined);
    const result = await Promise.race([backingUp, deadline(limits.signal)]);
    done = true;
    return result;
  } catch (error) {
    throw limits.expired ? limits.deadlineProblem() : error;
  } finally {
    clearTimeout(trailingReport);
    trailingReport = undefined;
    scratch.close(done);
  }

  async function backUp() {
    await connector.ensure('backups');
    const progress: BackupProgress = { ...noBackupProgress };
    let lastReport = 0;
    // Throttled, but a throttled update still goes out a moment later: a site that then stalls does not hide the progress made.
    const report = (force = false) => {
      const wait = 500 - (Date.now() - lastReport);
      if (!force && wait > 0) {
        trailingReport ??= setTimeout(() => {
          trailingReport = undefined;
          report(true);
        }, wait);
        return;
      }
      clearTimeout(trailingReport);
      trailingReport = undefined;
      lastReport = Date.now();
      onProgress({ ...progress });
    };

    if (previous) {
      let batch = [];
      for await (const file of previous.files()) {
        if (batch.push(file) >= 1000) {
          scratch.addPrevious(batch);
          batch = [];
        }
      }
      scratch.addPrevious(batch);
    }
    // Both sides order paths by their bytes, so the previous backup's entries after the cursor are the page's candidates.
    // Files changed within the second the previous backup started are hashed again (mtime has one-second resolution).
    const trustedBefore = previous?.listedAt ? Math.floor(Date.parse(previous.listedAt) / 1000) - 2 : 0;
    const listedAt = now().toISOString();
    await listFiles({ connector, scratch, trustedBefore });
    const totals = scratch.totals();
    limits.declare(totals.bytes);
    progress.files = totals.files;
    progress.bytesTotal = totals.bytes;
    report(true);

    const stored = async (content: Buffer, expectedHash?: string) => {
      const result = await store.put(content, expectedHash);
      progress.bytesStored += result.storedBytes;
      return result.hash;
    };
    const transfer = createFileTransfer({
      connector,
      store,
      budget: limits.budget,
      onReceived: (bytes) => (progress.bytesTransferred += bytes),
      onStored: (bytes) => (progress.bytesStored += bytes),
    });

    // The listing a slice at a time. Content is reused only when this site proved it holds it
    // (its previous backup, or bytes it sent in this one): another site's hash is not proof.
    // Stored content is reused after a look at its recorded size (a 4-byte read, many at once), not re-read: `verify` re-reads.
    // What a slice's checks allocate must die young (an unchanged site takes every file through them): a slice is
    // small and its rows are bare (sequence number, size, proven chunks), a reused file's record is written by
    // SQLite from the proof, and only the files not reused are read whole, to be downloaded. A slice of 4,000 named
    // entries lived through enough young collections to be promoted whole; slices of 250 whose checks allocated 5 KB
    // a file were still promoted whenever collections fell mid-slice, which with the unit's 1 MB semi-space was every
    // time (about 25 MB of old-generation garbage for an unchanged 100,000-file site, test/backups/reuse-check-memory.test.ts).
    // What must be downloaded is gathered up to FILES_PER_WINDOW files, so transfers still run FILE_TRANSFERS bundles at once.
    let wanted: DeclaredFile[] = [];
    for (let seq = 0; ;) {
      const slice = scratch.candidatesAfter(seq, REUSE_SLICE);
      if (slice.length > 0) {
        const first = seq;
        seq = slice.at(-1)![0];
        const reused = await heldAlready(slice);
        if (reused < slice.length) wanted = wanted.concat(scratch.unrecordedBetween(first, seq));
        report();
        // The file store checks synchronously (object-store.ts): a slice at a time, the event loop keeps serving.
        await setImmediate();
      }
      if (wanted.length >= FILES_PER_WINDOW || (slice.length === 0 && wanted.length > 0)) {
        await download(wanted);
        wanted = [];
      }
      if (slice.length === 0) break;
    }

    /** Reuses the slice's files whose content this site already proved it has and whose objects are there; returns how many. */
    async function heldAlready(slice: ReuseCandidate[]): Promise<number> {
      const reused: number[] = [];
      await forEachConcurrently(slice, REUSE_CHECKS, async ([seq, size, chunks, held]) => {
        if (
          chunks !== null &&
          (held === 1 ||
            (await allHeld(store, parseStored(ChunkList, chunks, `the proven chunks of file ${seq}`), size)))
        )
          reused.push(seq);
      });
      scratch.reuse(reused);
      progress.filesDone += reused.length;
      return reused.length;
    }

    async function download(wanted: DeclaredFile[]): Promise<void> {
      // Small files travel many to a request, large ones in ranges.
      const steps = [
        ...bundles(wanted.filter((entry) => entry.size <= BUNDLE_FILE_BYTES)),
        ...wanted.filter((entry) => entry.size > BUNDLE_FILE_BYTES).map((entry) => [entry]),
      ];
      await forEachConcurrently(steps, FILE_TRANSFERS, async (step) => {
        const contents =
          step.length === 1 && step[0]!.size > BUNDLE_FILE_BYTES
            ? [await transfer.single(step[0]!)]
            : await transfer.bundle(step);
        for (const [position, entry] of step.entries()) {
          const content = contents[position];
          if (content) scratch.record(entry.seq, content);
          progress.filesDone++;
        }
        // Per step: what a killed backup stored stays proven for its retry.
        scratch.flush();
        report();
      });
    }

    // Rows count against the same budget, which grows by what the tables declare.
    const tables = await readTables({
      connector,
      store,
      previous: previous?.tables ?? [],
      progress,
      report,
      put: (content) => stored(content),
      onBytes: (bytes) => limits.budget.take(bytes),
      onDeclared: (bytes) => limits.declare(totals.bytes + bytes),
    });

    const manifest = await writeManifest(
      store,
      { siteUrl, createdAt: now().toISOString(), listedAt, tables },
      scratch.recordedFiles(),
    );
    progress.bytesStored += manifest.storedBytes;
    report(true);
    return { manifestHash: manifest.hash, progress };
  }
}

function deadline(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => {
    if (signal.aborted) reject(new Error('deadline passed'));
    signal.addEventListener('abort', () => reject(new Error('deadline passed')), { once: true });
  });
}

/** A file's stored chunks are all there with the sizes its size implies (CHUNK_BYTES each, the rest in the last). */
async function allHeld(store: ObjectStore, chunks: string[], size: number): Promise<boolean> {
  for (const [index, hash] of chunks.entries()) {
    if (!(await store.holds(hash, Math.min(CHUNK_BYTES, Math.max(0, size - index * CHUNK_BYTES))))) return false;
  }
  return true;
}

function bundles(items: DeclaredFile[]): DeclaredFile[][] {
  const groups: DeclaredFile[][] = [];
  let current: DeclaredFile[] = [];
  let bytes = 0;
  for (const item of items) {
    if (current.length > 0 && (current.length >= BUNDLE_FILES || bytes + item.size > BUNDLE_BYTES)) {
      groups.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += item.size;
  }
  if (current.length > 0) groups.push(current);
  return groups;
}
