import type { ReadAhead } from './read-ahead.js';
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  createReadStream,
  createWriteStream,
  fstatSync,
  fsync,
  openSync,
  readFile,
  readSync,
  writeSync,
} from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { createGunzip, createGzip, gunzipSync, gzipSync } from 'node:zlib';
import { hashingTap } from './hashing-tap.js';
import { defineProblem } from '../shared/errors.js';

export const objectStoreProblems = {
  corrupt: defineProblem('backup-object-corrupt', 500, 'A stored backup object does not match its hash'),
};

export const HASH_PATTERN = /^[0-9a-f]{64}$/;

/**
 * Content up to this size is compressed, written and read back in one synchronous step. A stream
 * per object (gzip, write stream, read stream, gunzip) allocated 16–64 KiB ArrayBuffers for each
 * one, whatever its size, and lived across the awaits of its write long enough to be promoted:
 * 200,000 small files kept 50–65 MB of them waiting for V8's next full collection. Here the
 * buffers are sized to the object (small ones come from Node's shared pool) and die young.
 */
const WHOLE_OBJECT_BYTES = 4 * 1024 * 1024;
/** holds() reads an object up to this size whole: its length without an fstat. */
const HEAD_BYTES = 4096;

const fsyncDescriptor = promisify(fsync);
// The callback API, not fs/promises: no FileHandle to outlive the read (see holds).
const readWholeFile = promisify(readFile);

/** zlib's output buffer for `bytes` of output: one buffer, sized to fit (at least zlib's minimum of 64). */
const outputChunk = (bytes: number) => Math.max(64, bytes + 64);

/**
 * Content-addressed storage of backup data: every object is named by the SHA-256 of its
 * uncompressed content, so equal content is stored once. An S3-compatible backend can
 * implement the same interface.
 */
export interface ObjectStore {
  has(hash: string): Promise<boolean>;
  /**
   * Present, and recorded as holding `size` bytes of content, checked without reading the
   * object (the file store reads gzip's 4-byte length trailer): a cheap guard against reusing
   * a truncated or replaced object. `verify` is what reads every byte.
   */
  holds(hash: string, size: number): Promise<boolean>;
  /**
   * Stores content and returns its hash. With `expectedHash` the content must hash to it,
   * otherwise nothing is stored and it throws. Only a complete, verified, durable object
   * ever appears under its final name.
   */
  put(
    content: Buffer | Readable,
    expectedHash?: string,
    options?: {
      compressionLevel?: number;
      /** The caller has just listed the store and this object is not in it: no lookup first (an offsite copy, one request per object instead of two). */
      listedAbsent?: boolean;
    },
  ): Promise<{ hash: string; size: number; storedBytes: number; created: boolean }>;
  /** The uncompressed content; reading to the end checks it against its hash (an error if it does not match). */
  get(hash: string): Readable;
  /**
   * The object as stored, gzip, unchecked, and its length: an offsite copy seals these bytes as
   * they are (checking them on the way) rather than decompressing and compressing them again.
   * Stores that do not keep gzip bytes do not offer it.
   */
  openCompressed?(hash: string): Promise<CompressedObject>;
  read(hash: string): Promise<Buffer>;
  /**
   * How far a sequential reader (a restore, a download) reads ahead, for a store whose every read
   * is a round trip (an offsite bucket); absent, one object at a time.
   */
  readonly readAhead?: ReadAhead;
  delete(hash: string): Promise<void>;
  list(): AsyncIterable<string>;
}

/** An object's gzip bytes as stored, read into the caller's buffers (no allocation per read); closed by the caller. */
export interface CompressedObject {
  /** The length of the gzip bytes when opened. */
  readonly bytes: number;
  /** When the object was written (ms since the epoch): an object is written once, whole, and never changed. */
  readonly writtenAt: number;
  /** Reads into `into` from `position`; 0 at the end. */
  read(into: Buffer, position: number): Promise<number>;
  close(): Promise<void>;
}

/** `<dir>/objects/ab/<sha256>` gzip files, written to `<dir>/tmp/` first, then fsync, rename, fsync of the directory. */
export function createFileObjectStore({ dir }: { dir: string }): ObjectStore & { cleanTemporary(): Promise<void> } {
  const objectsDir = join(dir, 'objects');
  const tmpDir = join(dir, 'tmp');
  const pathOf = (hash: string) => {
    if (!HASH_PATTERN.test(hash)) throw new Error(`not an object hash: ${hash}`);
    // Not path.join: its normalising allocates, and a later backup asks for a path per file (holds()); objectsDir is normal already.
    return `${objectsDir}${sep}${hash.slice(0, 2)}${sep}${hash}`;
  };

  async function fsyncPath(path: string): Promise<void> {
    const handle = await open(path, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  async function has(hash: string): Promise<boolean> {
    try {
      return (await stat(pathOf(hash))).isFile();
    } catch {
      return false;
    }
  }

  /** Moves a complete temporary object under its final name, durably. */
  async function publish(temporary: string, hash: string): Promise<void> {
    const finalPath = pathOf(hash);
    await mkdir(join(objectsDir, hash.slice(0, 2)), { recursive: true, mode: 0o700 });
    await rename(temporary, finalPath);
    await fsyncPath(join(objectsDir, hash.slice(0, 2)));
  }

  /** Hashes, compresses and writes content without a stream; only the fsync waits (see WHOLE_OBJECT_BYTES). */
  function writeWholeSync(
    content: Buffer,
    temporary: string,
    level: number,
  ): { hash: string; storedBytes: number; fd: number } {
    const hash = createHash('sha256').update(content).digest('hex');
    const compressed = gzipSync(content, { level, chunkSize: outputChunk(content.length + (content.length >> 10)) });
    const fd = openSync(temporary, 'w', 0o600);
    try {
      for (let written = 0; written < compressed.length;)
        written += writeSync(fd, compressed, written, compressed.length - written);
    } catch (error) {
      closeSync(fd);
      throw error;
    }
    return { hash, storedBytes: compressed.length, fd };
  }

  async function putWhole(content: Buffer, temporary: string, expectedHash: string | undefined, level: number) {
    try {
      const { hash, storedBytes, fd } = writeWholeSync(content, temporary, level);
      try {
        if (expectedHash && hash !== expectedHash)
          throw objectStoreProblems.corrupt.create(`content hashes to ${hash}, not the expected ${expectedHash}`);
        if (await has(hash)) {
          await rm(temporary, { force: true });
          return { hash, size: content.length, storedBytes: 0, created: false };
        }
        await fsyncDescriptor(fd);
      } finally {
        closeSync(fd);
      }
      await publish(temporary, hash);
      return { hash, size: content.length, storedBytes, created: true };
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }

  // The start of the object being checked (a small object whole) and its gzip length trailer: one buffer, holds() being synchronous inside.
  const head = Buffer.alloc(HEAD_BYTES);

  return {
    has,

    /**
     * Synchronous on purpose: a later backup asks this for every file of the site, and each
     * asynchronous open held a FileHandle (and its promises) across the thread pool, long enough
     * to be promoted into V8's old generation: 100,000 checks left about 20 MB there for the next
     * full collection. Three system calls on a local file cost microseconds; callers yield between
     * batches of checks (backup-runner.ts). A small object is read whole, which gives its length
     * without an fstat (and the Stats object each fstat allocates); a larger one is asked its size.
     */
    async holds(hash, size) {
      let fd: number | undefined;
      try {
        fd = openSync(pathOf(hash), 'r');
        let stored = readSync(fd, head, 0, HEAD_BYTES, 0);
        let trailerAt = stored - 4;
        if (stored === HEAD_BYTES) {
          stored = fstatSync(fd).size;
          readSync(fd, head, 0, 4, stored - 4);
          trailerAt = 0;
        }
        if (stored < 18) return false; // Shorter than an empty gzip member.
        return head.readUInt32LE(trailerAt) === size % 2 ** 32;
      } catch {
        return false;
      } finally {
        if (fd !== undefined) closeSync(fd);
      }
    },

    async put(content, expectedHash, options = {}) {
      if (expectedHash !== undefined && expectedHash !== null && (await has(expectedHash))) {
        if (Buffer.isBuffer(content)) {
          const actual = createHash('sha256').update(content).digest('hex');
          if (actual !== expectedHash)
            throw objectStoreProblems.corrupt.create(`content hashes to ${actual}, not the expected ${expectedHash}`);
        } else content.destroy();
        return { hash: expectedHash, size: 0, storedBytes: 0, created: false };
      }
      await mkdir(tmpDir, { recursive: true, mode: 0o700 });
      const temporary = join(tmpDir, `${process.pid}-${randomBytes(8).toString('hex')}.tmp`);
      if (Buffer.isBuffer(content) && content.length <= WHOLE_OBJECT_BYTES)
        return putWhole(content, temporary, expectedHash, options.compressionLevel ?? 6);
      const counted = hashingTap();
      try {
        const source = Buffer.isBuffer(content) ? Readable.from([content]) : content;
        await pipeline(
          source,
          counted.tap,
          createGzip({ level: options.compressionLevel ?? 6 }),
          createWriteStream(temporary, { mode: 0o600 }),
        );
        const hash = counted.digest();
        if (expectedHash && hash !== expectedHash)
          throw objectStoreProblems.corrupt.create(`content hashes to ${hash}, not the expected ${expectedHash}`);
        const storedBytes = (await stat(temporary)).size;
        if (await has(hash)) {
          await rm(temporary, { force: true });
          return { hash, size: counted.size, storedBytes: 0, created: false };
        }
        await fsyncPath(temporary);
        await publish(temporary, hash);
        return { hash, size: counted.size, storedBytes, created: true };
      } catch (error) {
        await rm(temporary, { force: true });
        throw error;
      }
    },

    get(hash) {
      const hasher = createHash('sha256');
      const verify = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          hasher.update(chunk);
          done(null, chunk);
        },
        flush(done) {
          const actual = hasher.digest('hex');
          done(
            actual === hash
              ? null
              : objectStoreProblems.corrupt.create(`object ${hash} holds content hashing to ${actual}`),
          );
        },
      });
      const file = createReadStream(pathOf(hash));
      const gunzip = createGunzip();
      file.on('error', (error) => verify.destroy(error));
      gunzip.on('error', (error) =>
        verify.destroy(objectStoreProblems.corrupt.create(`object ${hash} cannot be decompressed: ${error.message}`)),
      );
      // As the remote store's: an object gone or bad fails the stream perhaps before its reader listens; the
      // reader still gets the error, and the process no uncaught exception.
      verify.on('error', () => undefined);
      return file.pipe(gunzip).pipe(verify);
    },

    async openCompressed(hash) {
      const handle = await open(pathOf(hash), 'r');
      try {
        const { size, mtimeMs } = await handle.stat();
        return {
          bytes: size,
          writtenAt: mtimeMs,
          read: async (into, position) => (await handle.read(into, 0, into.length, position)).bytesRead,
          close: () => handle.close(),
        };
      } catch (error) {
        await handle.close();
        throw error;
      }
    },

    /**
     * One read, then decompressed and checked in one synchronous step, like putWhole (objects read whole are
     * parts, batches and chunks of at most 8 MiB). The read goes through the thread pool: a walk over a
     * manifest's parts or a download's files yields to the event loop at each object, as streams did.
     */
    async read(hash) {
      const compressed = await readWholeFile(pathOf(hash));
      // gzip's trailer holds the content's size (mod 2^32): one output buffer of that size.
      const declared = compressed.length >= 18 ? compressed.readUInt32LE(compressed.length - 4) : 0;
      let content: Buffer;
      try {
        content = gunzipSync(compressed, { chunkSize: outputChunk(Math.min(declared, WHOLE_OBJECT_BYTES)) });
      } catch (error) {
        throw objectStoreProblems.corrupt.create(`object ${hash} cannot be decompressed: ${(error as Error).message}`);
      }
      const actual = createHash('sha256').update(content).digest('hex');
      if (actual !== hash)
        throw objectStoreProblems.corrupt.create(`object ${hash} holds content hashing to ${actual}`);
      return content;
    },

    async delete(hash) {
      await rm(pathOf(hash), { force: true });
    },

    async *list() {
      let prefixes: string[];
      try {
        prefixes = await readdir(objectsDir);
      } catch {
        return;
      }
      for (const prefix of prefixes.sort()) {
        for (const name of (await readdir(join(objectsDir, prefix))).sort()) if (HASH_PATTERN.test(name)) yield name;
      }
    },

    /** Temporary files of a process that was killed while writing; never under a final name. */
    async cleanTemporary() {
      await rm(tmpDir, { recursive: true, force: true });
    },
  };
}

export type FileObjectStore = ReturnType<typeof createFileObjectStore>;
