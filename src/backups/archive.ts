import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import { CHUNK_BYTES, checkManifestFiles, type OpenedManifest } from './manifest.js';
import { readAhead } from './read-ahead.js';
import type { ObjectStore } from './object-store.js';
import { writeSqlDump } from './sql-dump.js';
import { tarEnd, tarFileHeader, tarPadding } from './tar.js';

const COALESCE_BYTES = 64 * 1024;
/** Files up to this size are read as one object (see filePieces). */
const READ_WHOLE_BYTES = 64 * 1024;

/**
 * A backup as one standard archive, so nobody is locked in: a tar.gz holding the site's files
 * under `files/` and `database.sql`, an SQL dump any MySQL or MariaDB client imports, written by
 * the daemon (src/backups/sql-dump.ts). The dump is assembled in a temporary file before the
 * archive is returned (tar needs its size up front), so a table that cannot be dumped safely is
 * a problem answer, not a broken download; the rest is streamed object by object, and the file
 * entries part by part (memory does not grow with the number of files).
 */
export async function backupArchive({
  store,
  manifest,
  tmpDir,
}: {
  store: ObjectStore;
  manifest: OpenedManifest;
  tmpDir: string;
}): Promise<Readable> {
  // The entries are read again as the archive streams: one that cannot be archived is a problem answer now, not a broken download.
  await checkManifestFiles(manifest);
  const created = Math.floor(Date.parse(manifest.createdAt) / 1000) || 0;
  await mkdir(tmpDir, { recursive: true, mode: 0o700 });
  const dumpPath = join(tmpDir, `dump-${randomBytes(8).toString('hex')}.sql`);
  let dumpSize: number;
  try {
    const dump = createWriteStream(dumpPath, { mode: 0o600 });
    try {
      await writeSqlDump({
        manifest,
        store,
        write: async (chunk) => {
          if (!dump.write(chunk)) await once(dump, 'drain');
        },
      });
    } finally {
      dump.end();
      await once(dump, 'close');
    }
    dumpSize = (await stat(dumpPath)).size;
  } catch (error) {
    await rm(dumpPath, { force: true });
    throw error;
  }
  let removed = false;
  const removeDump = async () => {
    if (removed) return;
    removed = true;
    await rm(dumpPath, { force: true });
  };

  // Small files in one read each (a stream per object allocated 80 KiB of buffers whatever its size), larger ones
  // streamed; from an offsite bucket every chunk is read whole, several ahead of the archive (store.readAhead).
  const load = (piece: Piece) =>
    piece.kind === 'chunk' && (store.readAhead || piece.fileBytes <= READ_WHOLE_BYTES) ? store.read(piece.hash) : null;
  const weight = (piece: Piece) => (piece.kind === 'chunk' ? piece.bytes : 0);
  const reading = store.readAhead ?? { objects: 1, bytes: Infinity };

  async function* entries(): AsyncGenerator<Buffer> {
    try {
      yield tarFileHeader('database.sql', dumpSize, created);
      for await (const chunk of createReadStream(dumpPath)) yield chunk as Buffer;
      yield tarPadding(dumpSize);
    } finally {
      await removeDump();
    }
    // Small pieces go to gzip together: each write is a deflate call of its own, which for sites of many small files cost more than the bytes.
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    for await (const [piece, read] of readAhead(filePieces(manifest), load, weight, reading)) {
      // A large file's chunk not read ahead streams: read whole, a site of 2 MiB media files had the download copy
      // each one three times (273 MB peak).
      const parts = piece.kind === 'bytes' ? [piece.bytes] : read ? [read] : store.get(piece.hash);
      for await (const part of parts) {
        pending.push(part as Buffer);
        pendingBytes += (part as Buffer).length;
        if (pendingBytes >= COALESCE_BYTES) {
          yield Buffer.concat(pending);
          pending = [];
          pendingBytes = 0;
        }
      }
    }
    pending.push(tarEnd());
    yield Buffer.concat(pending);
  }
  const gzip = createGzip();
  const source = Readable.from(entries());
  source.on('error', (error) => gzip.destroy(error));
  // A download abandoned early may never run the generator's cleanup.
  gzip.on('close', () => {
    source.destroy();
    void removeDump();
  });
  return source.pipe(gzip);
}

type Piece = { kind: 'bytes'; bytes: Buffer } | { kind: 'chunk'; hash: string; bytes: number; fileBytes: number };

/** Each file's tar entry in order: its header, its content's objects (read by the caller), its padding. */
async function* filePieces(manifest: OpenedManifest): AsyncGenerator<Piece> {
  for await (const file of manifest.files()) {
    yield { kind: 'bytes', bytes: tarFileHeader(`files/${file.path}`, file.size, file.mtime) };
    for (const [index, hash] of file.chunks.entries())
      yield {
        kind: 'chunk',
        hash,
        bytes: Math.min(CHUNK_BYTES, file.size - index * CHUNK_BYTES),
        fileBytes: file.size,
      };
    yield { kind: 'bytes', bytes: tarPadding(file.size) };
  }
}
