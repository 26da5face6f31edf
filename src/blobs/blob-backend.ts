import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * Named blobs, written whole or not at all: where the daemon keeps bytes that are not rows. The
 * offsite repositories' encrypted object store (backups/offsite/remote-store.ts), the audits' reports
 * and the safe updates' screenshots are built on it; S3 (s3-backend.ts) and a directory (below: the
 * data directory, a mounted disk, fast tests) implement it. In cluster mode (issue 34) the reports and
 * screenshots go to a bucket, so that any process can serve what any worker wrote.
 */
export interface BlobBackend {
  /** Says where, for messages: `s3://bucket/prefix` or a path. */
  readonly location: string;
  /**
   * Writes the bytes `body` yields under `key`; the blob appears only once all of them are there.
   * `beforeCommit` runs after the last byte was read and before the blob becomes visible: it
   * throws to abandon the write (a content hash that does not match). `bytes`, when the caller
   * knows it, is the body's exact length: a body of another length is not written.
   */
  put(
    key: string,
    body: AsyncIterable<Buffer> | Iterable<Buffer>,
    options?: { beforeCommit?: () => void | Promise<void>; bytes?: number },
  ): Promise<{ bytes: number }>;
  /** The blob's bytes, or null when there is none. */
  get(key: string): Promise<Readable | null>;
  size(key: string): Promise<number | null>;
  delete(key: string): Promise<void>;
  /** Keys under `prefix`, with their size and last change. */
  list(prefix: string): AsyncIterable<{ key: string; size: number; modifiedAt: Date }>;
  /** Writes a process killed mid-way left behind (temporary files, unfinished multipart uploads) older than `before`. */
  cleanUnfinished(before: Date): Promise<number>;
}

/** A blob's bytes whole, or null when there is none. */
export async function readBlob(backend: BlobBackend, key: string): Promise<Buffer | null> {
  const body = await backend.get(key);
  if (!body) return null;
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Deletes the blobs under `prefix` that `keep` refuses (it may read the database: awaited, key by key), once
 * all are listed (a directory's walk does not see its own deletions); answers the keys deleted.
 */
export async function deleteBlobs(
  backend: BlobBackend,
  prefix: string,
  keep: (key: string) => boolean | Promise<boolean>,
): Promise<string[]> {
  const unkept: string[] = [];
  for await (const { key } of backend.list(prefix)) if (!(await keep(key))) unkept.push(key);
  for (const key of unkept) await backend.delete(key);
  return unkept;
}

const SAFE_KEY = /^[A-Za-z0-9._/-]+$/;

/**
 * A blob's size, or null when there is none. Only "no such file" means absent: a disk that fails
 * (EIO, EACCES, a mount gone stale) throws, so a target that cannot be read is never taken for one
 * that lacks the blob.
 */
async function sizeOf(path: string): Promise<number | null> {
  try {
    return (await stat(path)).size;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw error;
  }
}

/**
 * Renames `temporary` to `path`, making its folder first. A delete that removes that folder as empty
 * (below) at that moment makes the rename fail with ENOENT, or the folder's making itself (Node's
 * recursive mkdir finds the folder there, then not there when it checks what it found): the folder
 * is made again, a few times at most.
 */
async function moveInto(temporary: string, path: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      await rename(temporary, path);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt === 5) throw error;
    }
  }
}

/** Blobs as files under `dir`, written to `dir/.tmp/` first, then fsync and rename. */
export function createDirectoryBackend(directory: string): BlobBackend {
  const dir = resolve(directory);
  const tmpDir = join(dir, '.tmp');
  const pathOf = (key: string) => {
    if (!SAFE_KEY.test(key) || key.split('/').some((part) => part === '' || part === '.' || part === '..'))
      throw new Error(`not a blob key: ${key}`);
    return join(dir, key);
  };
  return {
    location: dir,
    async put(key, body, options = {}) {
      await mkdir(tmpDir, { recursive: true, mode: 0o700 });
      const temporary = join(tmpDir, `${process.pid}-${randomBytes(8).toString('hex')}`);
      let bytes = 0;
      try {
        await pipeline(
          Readable.from(
            (async function* () {
              for await (const chunk of body) {
                bytes += chunk.length;
                yield chunk;
              }
            })(),
          ),
          createWriteStream(temporary, { mode: 0o600 }),
        );
        if (options.bytes !== undefined && bytes !== options.bytes)
          throw new Error(`blob ${key}: its body is ${bytes} bytes, not the ${options.bytes} declared`);
        await options.beforeCommit?.();
        const handle = await open(temporary, 'r');
        await handle.sync().finally(() => handle.close());
        await moveInto(temporary, pathOf(key));
        return { bytes };
      } catch (error) {
        await rm(temporary, { force: true });
        throw error;
      }
    },
    async get(key) {
      if ((await sizeOf(pathOf(key))) === null) return null;
      return createReadStream(pathOf(key));
    },
    async size(key) {
      return sizeOf(pathOf(key));
    },
    async delete(key) {
      const path = pathOf(key);
      await rm(path, { force: true });
      // The folders the key named go with their last blob (a safe update's screenshots, a site's reports),
      // as a bucket has no folders to leave behind; a put into one of them meanwhile makes it again.
      for (let parent = dirname(path); parent.startsWith(`${dir}/`); parent = dirname(parent)) {
        try {
          await rmdir(parent);
        } catch {
          break;
        }
      }
    },
    async *list(prefix) {
      async function* walk(path: string): AsyncGenerator<{ key: string; size: number; modifiedAt: Date }> {
        let names: string[];
        try {
          names = (await readdir(path)).sort();
        } catch {
          return;
        }
        for (const name of names) {
          const full = join(path, name);
          const key = relative(dir, full);
          if (key === '.tmp') continue;
          const stats = await stat(full);
          if (stats.isDirectory()) yield* walk(full);
          else if (key.startsWith(prefix)) yield { key, size: stats.size, modifiedAt: stats.mtime };
        }
      }
      // Only the directory the prefix names is walked: a listing of snapshots is not a walk of every data blob.
      const base = prefix.slice(0, prefix.lastIndexOf('/') + 1);
      yield* walk(base === '' ? dir : pathOf(base.slice(0, -1)));
    },
    async cleanUnfinished(before) {
      let removed = 0;
      let names: string[] = [];
      try {
        names = await readdir(tmpDir);
      } catch {
        return 0;
      }
      for (const name of names) {
        const path = join(tmpDir, name);
        if ((await stat(path)).mtime < before) {
          await rm(path, { force: true });
          removed++;
        }
      }
      return removed;
    },
  };
}
