import { createHash } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import { isAppError } from '../shared/errors.js';
import type { BackupConnector, SiteFileEntry } from './backup-connector.js';
import { forEachConcurrently } from './concurrency.js';
import { CHUNK_BYTES, isSafeRelativePath, manifestProblems, type Manifest, type ManifestFileEntry } from './manifest.js';
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
const FILES_PER_PAGE = 1000;
/** Files up to this size travel in bundles of up to BUNDLE_BYTES or BUNDLE_FILES files. */
const BUNDLE_FILE_BYTES = 1024 * 1024;
const BUNDLE_BYTES = 2 * 1024 * 1024;
const BUNDLE_FILES = 500;
const REUSE_CHECKS = 16;

/**
 * Takes one backup: lists the site's files and tables through the connector, downloads only
 * content the store does not hold yet (and reuses the previous backup's table batches when a
 * table's checksum and row count are unchanged), then writes the manifest. Returns the
 * manifest's hash; the caller marks the backup completed only after this resolves.
 */
export async function runBackup({ connector, store, previous, siteUrl, now, onProgress }: { connector: BackupConnector; store: ObjectStore; previous: Manifest | null; siteUrl: string; now: () => Date; onProgress: (progress: BackupProgress) => void }): Promise<{ manifestHash: string; manifest: Manifest; progress: BackupProgress }> {
  await connector.ensure('backups');
  const progress: BackupProgress = { files: 0, filesDone: 0, tables: 0, tablesDone: 0, rows: 0, bytesTotal: 0, bytesTransferred: 0, bytesStored: 0 };
  let lastReport = 0;
  const report = (force = false) => {
    if (!force && Date.now() - lastReport < 500) return;
    lastReport = Date.now();
    onProgress({ ...progress });
  };

  // Both sides order paths by their bytes, so the previous backup's entries after the cursor are the page's candidates.
  // Files changed within the second the previous backup started are hashed again (mtime has one-second resolution).
  const trustedBefore = previous?.listedAt ? Math.floor(Date.parse(previous.listedAt) / 1000) - 2 : 0;
  const listedAt = now().toISOString();
  const knownFiles = (previous?.files ?? []).filter((file) => file.mtime < trustedBefore);
  let knownAt = 0;
  const listed: SiteFileEntry[] = [];
  for (let cursor = ''; ; ) {
    while (knownAt < knownFiles.length && Buffer.compare(Buffer.from(knownFiles[knownAt]!.path), Buffer.from(cursor)) <= 0) knownAt++;
    const known = knownFiles.slice(knownAt, knownAt + FILES_PER_PAGE).map((file): [string, number, number, string] => [file.path, file.size, file.mtime, file.sha256]);
    const page = await connector.files(cursor, FILES_PER_PAGE, known);
    listed.push(...page.files);
    if (page.next === null) break;
    cursor = page.next;
  }
  // A connector that hands out a path escaping the root is not trusted with anything.
  const unsafe = listed.find((entry) => !isSafeRelativePath(entry.path));
  if (unsafe) throw manifestProblems.unsafePath.create(`the site listed the unsafe path ${JSON.stringify(unsafe.path)}`);
  const readable = listed.filter((entry): entry is SiteFileEntry & { sha256: string } => entry.sha256 !== null);
  progress.files = readable.length;
  progress.bytesTotal = readable.reduce((sum, entry) => sum + entry.size, 0);
  report(true);

  const chunksBySha = new Map<string, string[]>();
  for (const file of previous?.files ?? []) chunksBySha.set(file.sha256, file.chunks);

  const stored = async (content: Buffer, expectedHash?: string) => {
    const result = await store.put(content, expectedHash);
    progress.bytesStored += result.storedBytes;
    return result.hash;
  };

  // Content already stored is not downloaded; small files travel many to a request, large ones in ranges.
  const files: (ManifestFileEntry | null)[] = new Array(readable.length).fill(null);
  const bundled: number[] = [];
  const ranged: number[] = [];
  // Stored content is reused after a look at its recorded size (a 4-byte read, many at once), not re-read: `verify` re-reads.
  await forEachConcurrently(readable, REUSE_CHECKS, async (entry, index) => {
    const known = entry.size <= CHUNK_BYTES ? [entry.sha256] : chunksBySha.get(entry.sha256);
    if (known && (await allHeld(store, known, entry.size))) files[index] = { path: entry.path, mtime: entry.mtime, size: entry.size, sha256: entry.sha256, chunks: known };
  });
  for (const [index, entry] of readable.entries()) {
    if (files[index]) progress.filesDone++;
    else (entry.size <= BUNDLE_FILE_BYTES ? bundled : ranged).push(index);
  }
  report(true);

  await forEachConcurrently(bundles(bundled.map((index) => ({ index, size: readable[index]!.size }))), FILE_TRANSFERS, async (bundle) => {
    const contents = await connector.bundle(bundle.map(({ index }) => readable[index]!.path), bundle.reduce((sum, { size }) => sum + size, 0));
    for (const [position, { index }] of bundle.entries()) {
      const entry = readable[index]!;
      const content = contents[position];
      if (content) {
        progress.bytesTransferred += content.length;
        const hash = await stored(content);
        files[index] = { path: entry.path, mtime: entry.mtime, size: content.length, sha256: hash, chunks: [hash] };
      } else files[index] = await rangedFile(entry); // Grown past the bundle limit, or gone.
      progress.filesDone++;
    }
    report();
  });
  await forEachConcurrently(ranged, FILE_TRANSFERS, async (index) => {
    files[index] = await rangedFile(readable[index]!);
    progress.filesDone++;
    report();
  });

  /** A file in CHUNK_BYTES ranges; null when it is gone. What was read is recorded, even if the file changed since it was listed. */
  async function rangedFile(entry: SiteFileEntry): Promise<ManifestFileEntry | null> {
    const whole = createHash('sha256');
    const chunks: string[] = [];
    let size = 0;
    for (let offset = 0; ; offset += CHUNK_BYTES) {
      let body: Readable;
      try {
        body = await connector.fileRange(entry.path, offset, CHUNK_BYTES);
      } catch (error) {
        if (isAppError(error) && error.extensions.siteCode === 'sitewarden_file_not_found') return null;
        throw error;
      }
      // Streamed into the store: a chunk is never held whole in memory.
      const tap = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          whole.update(chunk);
          progress.bytesTransferred += chunk.length;
          done(null, chunk);
        },
      });
      body.on('error', (error) => tap.destroy(error));
      // Large files are mostly media that is compressed already: the fastest gzip level costs little there.
      const result = await store.put(body.pipe(tap), undefined, { compressionLevel: 1 });
      progress.bytesStored += result.storedBytes;
      chunks.push(result.hash);
      size += result.size;
      if (result.size < CHUNK_BYTES) break;
    }
    return { path: entry.path, mtime: entry.mtime, size, sha256: whole.digest('hex'), chunks };
  }

  const tables = await readTables({ connector, store, previous: previous?.tables ?? [], progress, report, put: (content) => stored(content) });

  const manifest: Manifest = { format: 1, siteUrl, createdAt: now().toISOString(), listedAt, files: files.filter((file): file is ManifestFileEntry => file !== null), tables };
  const manifestHash = await stored(Buffer.from(JSON.stringify(manifest), 'utf8'));
  report(true);
  return { manifestHash, manifest, progress };
}

/** A file's stored chunks are all there with the sizes its size implies (CHUNK_BYTES each, the rest in the last). */
async function allHeld(store: ObjectStore, chunks: string[], size: number): Promise<boolean> {
  for (const [index, hash] of chunks.entries()) {
    if (!(await store.holds(hash, Math.min(CHUNK_BYTES, Math.max(0, size - index * CHUNK_BYTES))))) return false;
  }
  return true;
}

function bundles(items: { index: number; size: number }[]): { index: number; size: number }[][] {
  const groups: { index: number; size: number }[][] = [];
  let current: { index: number; size: number }[] = [];
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
