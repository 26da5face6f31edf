import { createHash } from 'node:crypto';
import { PassThrough, Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { hashingTap } from '../hashing-tap.js';
import { objectStoreProblems, type CompressedObject, type ObjectStore } from '../object-store.js';
import { offsiteProblems } from './offsite.errors.js';
import { readBlob, type BlobBackend } from '../../blobs/blob-backend.js';
import {
  deriveKeys,
  keyedName,
  unwrapRepositoryKey,
  wrapRepositoryKey,
  type RepositoryKeys,
} from './repository-key.js';
import {
  createSealer,
  FRAME_BYTES,
  openStream,
  SealBroken,
  sealedLength,
  sealStream,
  type Sealer,
} from './sealed-stream.js';

const KEY_FILE = 'keys/repository';
const DATA_PREFIX = 'data/';
/** Eight objects, 32 MiB at most (four whole 8 MiB chunks), on their way while a restore or download reads. */
export const REMOTE_READ_AHEAD = { objects: 8, bytes: 32 * 1024 * 1024 };

/**
 * An offsite repository: the object store's content, gzip-compressed then sealed
 * (sealed-stream.ts), under keyed names (`data/ab/<HMAC of the content hash>`), next to the key
 * file that wraps the repository key with the passphrase. The bucket plus the passphrase is all a
 * restore needs; the provider sees neither content nor which contents are equal to known ones.
 */
export interface RemoteRepository {
  readonly target: string;
  readonly backend: BlobBackend;
  readonly keys: RepositoryKeys;
  /** The object store over this repository; `list` is not offered (names are keyed): use `dataNames`. */
  readonly store: ObjectStore;
  /** The blob key of a content hash (or any label) in this repository. */
  nameOf(hash: string): string;
  /** Every data blob's keyed name. */
  dataNames(): AsyncIterable<{ name: string; modifiedAt: Date }>;
  /** Deletes the data blob of a keyed name (prune: it does not know the content hash). */
  deleteData(name: string): Promise<void>;
  /**
   * Uploads an object from its gzip bytes as the local store keeps them (`openCompressed`):
   * sealed as they are, not decompressed and compressed again, and checked against `hash` by
   * decompressing a copy alongside; a mismatch abandons the upload before it is committed.
   * `checked: false` skips the check, for an object this very backup has just written from
   * content it hashed itself.
   */
  putCompressed(
    hash: string,
    compressed: CompressedObject,
    options?: { checked?: boolean },
  ): Promise<{ storedBytes: number }>;
}

/**
 * Opens the repository a backend holds, creating its key file on first use (`create`): a random
 * master key wrapped by a key derived from the passphrase with scrypt. A wrong passphrase is
 * `backup-target-wrong-passphrase`.
 */
export async function openRemoteRepository({
  target,
  backend,
  passphrase,
  create,
}: {
  target: string;
  backend: BlobBackend;
  passphrase: string;
  create: boolean;
}): Promise<RemoteRepository> {
  let content = await readBlob(backend, KEY_FILE);
  if (!content && create) {
    const { file } = await wrapRepositoryKey(passphrase);
    await backend.put(KEY_FILE, [Buffer.from(JSON.stringify(file, null, 2))]);
    // Read back rather than trust our own: two daemons initialising one bucket at once both end up with the one stored.
    content = await readBlob(backend, KEY_FILE);
  }
  if (!content)
    throw offsiteProblems.targetEmpty.create(
      `target ${target} (${backend.location}) holds no Sitewarden repository (keys/repository)`,
      { target },
    );
  const keys = deriveKeys(await unwrapRepositoryKey(passphrase, content, target));
  return createRemoteRepository({ target, backend, keys });
}

/**
 * Rotates the passphrase: the repository key, unwrapped with the current passphrase, is written
 * back wrapped by the new one (a fresh salt), then read back with it. The data is not touched:
 * it is sealed under the repository key, which does not change.
 */
export async function rewrapRepositoryKey({
  target,
  backend,
  passphrase,
  newPassphrase,
}: {
  target: string;
  backend: BlobBackend;
  passphrase: string;
  newPassphrase: string;
}): Promise<void> {
  const content = await readBlob(backend, KEY_FILE);
  if (!content)
    throw offsiteProblems.targetEmpty.create(`target ${target} (${backend.location}) holds no Sitewarden repository`, {
      target,
    });
  const master = await unwrapRepositoryKey(passphrase, content, target);
  const { file } = await wrapRepositoryKey(newPassphrase, master);
  await backend.put(KEY_FILE, [Buffer.from(JSON.stringify(file, null, 2))]);
  const written = await readBlob(backend, KEY_FILE);
  if (!written || !(await unwrapRepositoryKey(newPassphrase, written, target)).equals(master))
    throw offsiteProblems.keyFileInvalid.create(`target ${target}: the rewrapped key file does not read back`, {
      target,
    });
}

/**
 * Passes gzip bytes on unchanged while a copy of them is decompressed and hashed beside the
 * upload (zlib works on the thread pool): `done` says whether they held the content of `hash`.
 */
/** Stored bytes read at once by an offsite copy: whole sealing frames, one buffer per upload, reused. */
const COPY_READ_BYTES = 4 * FRAME_BYTES;
/** zlib's output buffer for the check: fewer, larger allocations than its 16 KiB default. */
const CHECK_OUTPUT_BYTES = 64 * 1024;

/**
 * Decompresses and hashes stored gzip bytes as they are copied: `write` resolves once zlib has
 * taken the chunk (so its buffer can be reused), `done` once the whole content hashed to `hash`.
 */
function checkCompressed(hash: string) {
  const hasher = createHash('sha256');
  const gunzip = createGunzip({ chunkSize: CHECK_OUTPUT_BYTES });
  const unreadable = (error: Error) =>
    objectStoreProblems.corrupt.create(`object ${hash} in the local store cannot be decompressed: ${error.message}`);
  gunzip.on('data', (chunk: Buffer) => hasher.update(chunk));
  const ended = new Promise<void>((resolve, reject) => {
    gunzip.once('end', resolve);
    gunzip.once('error', (error) => reject(unreadable(error)));
  });
  ended.catch(() => undefined);
  return {
    // zlib that fails on a chunk never calls that write back: its error settles the wait instead.
    write: (chunk: Buffer) =>
      Promise.race([
        new Promise<void>((resolve, reject) =>
          gunzip.write(chunk, (error) => (error ? reject(unreadable(error)) : resolve())),
        ),
        ended,
      ]),
    async done() {
      gunzip.end();
      await ended;
      const actual = hasher.digest('hex');
      if (actual !== hash)
        throw objectStoreProblems.corrupt.create(
          `object ${hash} in the local store holds content hashing to ${actual}`,
        );
    },
    abandon: () => gunzip.destroy(),
  };
}

/**
 * The sealed bytes of a stored object, read into one buffer reused read after read: the header,
 * then each frame's ciphertext and tag. A read waits for the check to take the previous one, so the
 * upload never runs ahead of the check by more than one read.
 */
async function* sealedFrames(
  hash: string,
  source: CompressedObject,
  sealer: Sealer,
  check: ReturnType<typeof checkCompressed> | undefined,
): AsyncGenerator<Buffer> {
  yield sealer.header;
  if (source.bytes === 0) {
    yield* sealer.seal(Buffer.alloc(0), true);
    return;
  }
  const buffer = Buffer.allocUnsafe(Math.min(COPY_READ_BYTES, source.bytes));
  let position = 0;
  while (position < source.bytes) {
    let filled = 0;
    const wanted = Math.min(buffer.length, source.bytes - position);
    while (filled < wanted) {
      const read = await source.read(buffer.subarray(filled, wanted), position + filled);
      if (read === 0)
        throw objectStoreProblems.corrupt.create(
          `object ${hash} in the local store ends at byte ${position + filled}, not ${source.bytes}`,
        );
      filled += read;
    }
    position += filled;
    const taken = check?.write(buffer.subarray(0, filled));
    taken?.catch(() => undefined);
    for (let offset = 0; offset < filled; offset += FRAME_BYTES) {
      const end = Math.min(filled, offset + FRAME_BYTES);
      yield* sealer.seal(buffer.subarray(offset, end), position === source.bytes && end === filled);
    }
    await taken;
  }
}

function createRemoteRepository({
  target,
  backend,
  keys,
}: {
  target: string;
  backend: BlobBackend;
  keys: RepositoryKeys;
}): RemoteRepository {
  const nameOf = (hash: string) => keyedName(keys, hash);
  const blobOf = (name: string) => `${DATA_PREFIX}${name.slice(0, 2)}/${name}`;
  const where = (hash: string) => `object ${hash} (${blobOf(nameOf(hash))} on target ${target})`;
  const has = async (hash: string) => (await backend.size(blobOf(nameOf(hash)))) !== null;

  const store: ObjectStore = {
    has,
    // Every read is a request to the target: a restore or a download keeps several on their way.
    readAhead: REMOTE_READ_AHEAD,
    // The size is sealed inside: presence is what can be seen without reading, and `verify` reads.
    holds: (hash) => has(hash),

    async put(content, expectedHash, options = {}) {
      let hash = expectedHash ?? undefined;
      if (!hash) {
        if (!Buffer.isBuffer(content)) throw new Error('an offsite store is given content with its hash');
        hash = createHash('sha256').update(content).digest('hex');
      }
      if (!options.listedAbsent && (await has(hash))) {
        if (!Buffer.isBuffer(content)) content.destroy();
        return { hash, size: 0, storedBytes: 0, created: false };
      }
      const name = nameOf(hash);
      const counted = hashingTap();
      let storedBytes = 0;
      const wanted = hash;
      await pipeline(
        Buffer.isBuffer(content) ? Readable.from([content]) : content,
        counted.tap,
        createGzip({ level: options.compressionLevel ?? 6 }),
        sealStream(keys.data, name),
        async (sealed: AsyncIterable<Buffer>) => {
          const result = await backend.put(blobOf(name), sealed, {
            beforeCommit: () => {
              const actual = counted.digest();
              if (actual !== wanted)
                throw objectStoreProblems.corrupt.create(`content hashes to ${actual}, not the expected ${wanted}`);
            },
          });
          storedBytes = result.bytes;
        },
      );
      return { hash, size: counted.size, storedBytes, created: true };
    },

    get(hash) {
      const name = nameOf(hash);
      const out = new PassThrough();
      // A bad object may fail `out` before its reader listens (a put that awaits its own checks first): the
      // stream keeps the error for whoever reads it (pipeline and for-await reject with it), and an error with
      // no listener yet must not become the process's uncaught exception.
      out.on('error', () => undefined);
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
              : objectStoreProblems.corrupt.create(`${where(hash)} holds content hashing to ${actual}`),
          );
        },
      });
      void (async () => {
        const body = await backend.get(blobOf(name));
        if (!body) throw objectStoreProblems.corrupt.create(`${where(hash)} is missing`);
        // Not `out` in the pipeline: it would be destroyed with the raw error before this names the object.
        verify.pipe(out);
        await pipeline(body, openStream(keys.data, name), createGunzip(), verify);
      })().catch((error: unknown) => {
        const message = (error as Error).message;
        out.destroy(
          error instanceof SealBroken
            ? objectStoreProblems.corrupt.create(`${where(hash)}: ${message}`)
            : (error as Error).name === 'AppError'
              ? (error as Error)
              : objectStoreProblems.corrupt.create(`${where(hash)} cannot be read: ${message}`),
        );
      });
      return out;
    },

    async read(hash) {
      const chunks: Buffer[] = [];
      for await (const chunk of this.get(hash)) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    },

    async delete(hash) {
      await backend.delete(blobOf(nameOf(hash)));
    },

    // eslint-disable-next-line require-yield
    async *list() {
      throw new Error('an offsite store names objects by keyed hash: list its data names instead');
    },
  };

  return {
    target,
    backend,
    keys,
    store,
    nameOf,
    deleteData: (name) => backend.delete(blobOf(name)),
    async putCompressed(hash, source, { checked = true } = {}) {
      const name = nameOf(hash);
      const check = checked ? checkCompressed(hash) : undefined;
      try {
        const { bytes } = await backend.put(
          blobOf(name),
          sealedFrames(hash, source, createSealer(keys.data, name), check),
          { bytes: sealedLength(source.bytes), beforeCommit: check?.done },
        );
        return { storedBytes: bytes };
      } finally {
        check?.abandon();
        await source.close();
      }
    },
    async *dataNames() {
      for await (const { key, modifiedAt } of backend.list(DATA_PREFIX)) {
        const name = key.slice(key.lastIndexOf('/') + 1);
        if (/^[0-9a-f]{64}$/.test(name)) yield { name, modifiedAt };
      }
    },
  };
}
