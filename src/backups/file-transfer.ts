import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { isAppError, isProblem } from '../shared/errors.js';
import { siteHttpProblems } from '../wordpress/site-http.js';
import { JobAborted } from './abortable-session.js';
import type { BackupConnector, SiteFileEntry } from '../wordpress/connector-client.js';
import type { ByteBudget } from './backup-limits.js';
import type { DeclaredFile } from './backup-scratch.js';
import { backupContractProblems, backupsProblems } from './backups.errors.js';
import { redeclareFile } from './file-listing.js';
import { CHUNK_BYTES, manifestProblems, type ManifestFileEntry } from './manifest.js';
import { objectStoreProblems, type ObjectStore } from './object-store.js';

/** Reads of one file (first one included) before its mismatch fails the backup: a file rewritten during the backup gets a second and third look. */
const FILE_ATTEMPTS = 3;
/** The least a bundle receive buffer holds: a bundle of the runner's size (2 MiB) with its framing. */
const RECEIVE_BYTES = 2 * 1024 * 1024 + 64 * 1024;

export type FileContent = Omit<ManifestFileEntry, 'path'>;

/** A backup's own failures end a bundle read; a failure of the site's answer falls back to reading file by file. */
const BACKUP_PROBLEMS = [
  ...Object.values(backupsProblems),
  ...Object.values(backupContractProblems),
  ...Object.values(manifestProblems),
  ...Object.values(objectStoreProblems),
];

const sha256Of = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

function mismatch(entry: SiteFileEntry, received: { size: number; sha256: string | null }, how: string) {
  return backupContractProblems.contentMismatch.create(
    `${entry.path}: the listing declared ${entry.size} bytes with SHA-256 ${entry.sha256}, the site ${how}`,
    {
      path: entry.path,
      declaredSize: entry.size,
      declaredSha256: entry.sha256,
      receivedSize: received.size,
      receivedSha256: received.sha256,
    },
  );
}

/**
 * Fetches files and keeps only bytes that are exactly what the listing declared: size and SHA-256
 * per file, whether it came in a bundle or in ranges (whose sum is checked). A body longer than
 * asked is cut off unstored. A file that does not match is declared again by the site and read
 * again, up to FILE_ATTEMPTS reads, then fails the backup with `backup-content-mismatch`.
 */
export function createFileTransfer({
  connector,
  store,
  budget,
  onReceived,
  onStored,
}: {
  connector: BackupConnector;
  store: ObjectStore;
  budget: ByteBudget;
  onReceived: (bytes: number) => void;
  onStored: (bytes: number) => void;
}) {
  // Bundle bodies are received into these and reused (one per transfer running at once): a new buffer per bundle, living
  // through its files' writes, reached V8's old generation and waited there for a full collection (tens of MB at a time).
  const spareBuffers: Buffer[] = [];
  const received = (bytes: number) => {
    budget.take(bytes);
    onReceived(bytes);
  };

  /** The file in CHUNK_BYTES ranges; null when it is gone; an AppError when its bytes are not the declared ones. */
  async function readRanges(entry: SiteFileEntry & { sha256: string }): Promise<FileContent | null | Error> {
    const whole = createHash('sha256');
    const chunks: string[] = [];
    let size = 0;
    for (let offset = 0; offset === 0 || offset < entry.size; offset += CHUNK_BYTES) {
      const wanted = Math.min(CHUNK_BYTES, entry.size - offset);
      let body: Readable;
      try {
        body = await connector.fileRange(entry.path, offset, wanted);
      } catch (error) {
        if (isAppError(error) && error.extensions.siteCode === 'sitewarden_file_not_found') return null;
        throw error;
      }
      // Streamed into the store: a chunk is never held whole in memory. A generator, not a piped
      // Transform: nothing is read (so nothing can fail unheard) before the store consumes it.
      async function* tapped(source: Readable): AsyncGenerator<Buffer> {
        for await (const chunk of source) {
          received((chunk as Buffer).length);
          whole.update(chunk as Buffer);
          yield chunk as Buffer;
        }
      }
      let result;
      try {
        // Large files are mostly media that is compressed already: the fastest gzip level costs little there.
        result = await store.put(Readable.from(tapped(body)), undefined, { compressionLevel: 1 });
      } catch (error) {
        if (isProblem(error, siteHttpProblems.tooLarge))
          return mismatch(
            entry,
            { size: size + wanted + 1, sha256: null },
            `sent more than the ${wanted} bytes asked from offset ${offset}`,
          );
        throw error;
      }
      onStored(result.storedBytes);
      chunks.push(result.hash);
      size += result.size;
      if (result.size !== wanted)
        return mismatch(
          entry,
          { size, sha256: null },
          `sent ${result.size} bytes for the ${wanted} asked from offset ${offset}`,
        );
    }
    const sha256 = whole.digest('hex');
    if (sha256 !== entry.sha256) return mismatch(entry, { size, sha256 }, `sent ${size} bytes hashing to ${sha256}`);
    return { size, mtime: entry.mtime, sha256, chunks };
  }

  /** One file, read on its own until it matches its (renewed) declaration, or the attempts run out. */
  async function single(listed: DeclaredFile, failures = 0, lastProblem?: Error): Promise<FileContent | null> {
    let entry: (SiteFileEntry & { sha256: string }) | null = listed;
    let problem = lastProblem;
    for (let attempt = failures; attempt < FILE_ATTEMPTS; attempt++) {
      if (attempt > 0) {
        const renewed = await redeclareFile(connector, listed.path);
        if (!renewed || renewed.sha256 === null) return null; // Deleted (or unreadable) since it was listed.
        entry = { ...renewed, sha256: renewed.sha256 };
      }
      const result = await readRanges(entry);
      if (!(result instanceof Error)) return result;
      problem = result;
    }
    throw problem;
  }

  /**
   * Many small files in one request. Each file's bytes must be the declared ones; one that is
   * not (or the whole bundle, when it is malformed or longer than declared) is read on its own.
   */
  async function bundle(entries: DeclaredFile[]): Promise<(FileContent | null)[]> {
    let buffer: Buffer | undefined;
    try {
      return await checkedBundle(entries, (maxBytes) => (buffer = spareBuffer(maxBytes)));
    } finally {
      // Every content is stored (or refused) by now: the buffer is free for the next bundle.
      if (buffer) spareBuffers.push(buffer);
    }
  }

  function spareBuffer(maxBytes: number): Buffer {
    const spare = spareBuffers.pop();
    return spare && spare.length >= maxBytes ? spare : Buffer.allocUnsafeSlow(Math.max(maxBytes, RECEIVE_BYTES));
  }

  async function checkedBundle(
    entries: DeclaredFile[],
    receiveInto: (maxBytes: number) => Buffer,
  ): Promise<(FileContent | null)[]> {
    let contents: (Buffer | null)[];
    try {
      contents = await connector.bundle(
        entries.map((entry) => entry.path),
        entries.reduce((sum, entry) => sum + entry.size, 0),
        received,
        receiveInto,
      );
    } catch (error) {
      if (error instanceof JobAborted || isProblem(error, ...BACKUP_PROBLEMS)) throw error;
      const results: (FileContent | null)[] = [];
      for (const entry of entries) results.push(await single(entry));
      return results;
    }
    const results: (FileContent | null)[] = [];
    for (const [position, entry] of entries.entries()) {
      const content = contents[position];
      if (!content) {
        results.push(await single(entry, 1)); // Grown past the bundle limit, or gone: asked again.
        continue;
      }
      const sha256 = sha256Of(content);
      if (content.length !== entry.size || sha256 !== entry.sha256) {
        results.push(
          await single(
            entry,
            1,
            mismatch(entry, { size: content.length, sha256 }, `sent ${content.length} bytes hashing to ${sha256}`),
          ),
        );
        continue;
      }
      const result = await store.put(content, sha256);
      onStored(result.storedBytes);
      results.push({ size: content.length, mtime: entry.mtime, sha256, chunks: [sha256] });
    }
    return results;
  }

  return { single, bundle };
}
