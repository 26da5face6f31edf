import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { forEachConcurrently } from '../../../src/backups/concurrency.js';
import { createFileObjectStore, objectStoreProblems } from '../../../src/backups/object-store.js';
import { isProblem } from '../../../src/shared/errors.js';
import { createDirectoryBackend } from '../../../src/blobs/blob-backend.js';
import { writeManifest } from '../../../src/backups/manifest.js';
import { openRemoteRepository } from '../../../src/backups/offsite/remote-store.js';
import { replicateBackup } from '../../../src/backups/offsite/replicate.js';
import { createS3Backend } from '../../../src/blobs/s3-backend.js';
import { FRAME_BYTES, sealBuffer, sealedLength } from '../../../src/backups/offsite/sealed-stream.js';
import { createUploadBuffers } from '../../../src/blobs/upload-buffers.js';
import { startS3Server, type S3TestServer } from '../../support/s3-server.js';

const MiB = 1024 * 1024;
const sha = (content: Buffer) => createHash('sha256').update(content).digest('hex');

function allFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('upload buffers: one byte budget across a target’s uploads', () => {
  it('lends within the budget, first come first served, and reuses part buffers', async () => {
    const buffers = createUploadBuffers({ budgetBytes: 3 * MiB, partBytes: MiB });
    const first = await buffers.take(MiB);
    const second = await buffers.take(MiB);
    const small = await buffers.take(1000);
    const order: string[] = [];
    // A whole part does not fit beside two parts and a small buffer: it waits, and a small one asked later waits behind it.
    const third = buffers.take(MiB).then((buffer) => (order.push('part'), buffer));
    const later = buffers.take(10).then((buffer) => (order.push('small'), buffer));
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual([]);
    expect(buffers.lent).toBe(2 * MiB + 1000);
    buffers.give(first);
    const reused = await third;
    await later;
    expect(order).toEqual(['part', 'small']);
    expect(reused.buffer).toBe(first.buffer);
    for (const buffer of [second, small, reused]) buffers.give(buffer);
    expect(buffers.lent).toBe(10);
    expect(buffers.peak).toBeLessThanOrEqual(3 * MiB);
    await expect(buffers.take(MiB + 1)).rejects.toThrow(RangeError);
  });
});

/** A local store under `dir`/local and a repository in the directory `dir`/nas. */
async function localAndNas(dir: string) {
  const local = createFileObjectStore({ dir: join(dir, 'local') });
  const repository = await openRemoteRepository({
    target: 'nas',
    backend: createDirectoryBackend(join(dir, 'nas')),
    passphrase: 'correct horse battery',
    create: true,
  });
  return { local, repository };
}

describe('an offsite copy from the local store’s gzip bytes', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sitewarden-offsite-copy-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('knows the sealed length of any content length in advance', async () => {
    const key = randomBytes(32);
    for (const size of [0, 1, FRAME_BYTES - 1, FRAME_BYTES, FRAME_BYTES + 1, 5 * FRAME_BYTES + 7])
      expect((await sealBuffer(key, 'n', randomBytes(size))).length).toBe(sealedLength(size));
  });

  it('seals the stored bytes as they are and reads back the content, checked', async () => {
    const { local, repository } = await localAndNas(dir);
    const content = Buffer.concat([randomBytes(300_000), Buffer.alloc(300_000, 'a')]);
    const { hash } = await local.put(content);
    const compressed = await local.openCompressed!(hash);
    const stored = await repository.putCompressed(hash, compressed);
    expect(stored.storedBytes).toBe(sealedLength(compressed.bytes));
    expect((await repository.store.read(hash)).equals(content)).toBe(true);
  });

  it('uploads nothing when the stored bytes do not hold the content of their hash', async () => {
    const { local, repository } = await localAndNas(dir);
    const backendDir = join(dir, 'nas');
    const replaced = await local.put(Buffer.from('the original content '.repeat(1000)));
    const flipped = await local.put(randomBytes(200_000));
    const fileOf = (hash: string) => allFiles(join(dir, 'local')).find((file) => file.endsWith(hash))!;
    // Valid gzip of other content under the first name; a flipped byte inside the second's deflate stream.
    writeFileSync(fileOf(replaced.hash), gzipSync(Buffer.from('other content')));
    const bytes = readFileSync(fileOf(flipped.hash));
    bytes[1000]! ^= 0xff;
    writeFileSync(fileOf(flipped.hash), bytes);
    for (const { hash } of [replaced, flipped]) {
      const error = await repository.putCompressed(hash, await local.openCompressed!(hash)).catch((caught) => caught);
      expect(isProblem(error, objectStoreProblems.corrupt)).toBe(true);
      expect((error as Error).message).toContain(hash);
      expect(allFiles(backendDir).some((file) => file.includes(repository.nameOf(hash)))).toBe(false);
    }
  });

  it('checks every object written before the backup began, and only those', async () => {
    const { local, repository } = await localAndNas(dir);
    const content = randomBytes(100_000);
    const { hash } = await local.put(content);
    const entries = [{ path: 'a.bin', size: content.length, mtime: 0, sha256: hash, chunks: [hash] }];
    const manifest = await writeManifest(local, { siteUrl: 'http://127.0.0.1', createdAt: '', tables: [] }, entries);
    // The object rots on disk after it was written: a flipped byte inside its deflate stream.
    const file = allFiles(join(dir, 'local')).find((path) => path.endsWith(hash))!;
    const bytes = readFileSync(file);
    bytes[1000]! ^= 0xff;
    writeFileSync(file, bytes);
    const { mtimeMs } = statSync(file);
    const snapshot = {
      format: 1 as const,
      backupId: 'bkp_1',
      siteId: 'site_1',
      siteUrl: 'http://127.0.0.1',
      kind: 'manual' as const,
      createdAt: new Date().toISOString(),
      finishedAt: new Date().toISOString(),
      manifestHash: manifest.hash,
      files: 1,
      tables: 0,
      rows: 0,
      bytesTotal: content.length,
    };
    // Written before this backup began (a reused object): checked, and the copy fails naming it.
    const error = await replicateBackup({ local, repository, snapshot, writtenSince: mtimeMs + 1 }).catch((e) => e);
    expect(isProblem(error, objectStoreProblems.corrupt)).toBe(true);
    expect((error as Error).message).toContain(hash);
    expect(allFiles(join(dir, 'nas')).some((path) => path.includes(repository.nameOf(hash)))).toBe(false);
    // Written by this backup from content it hashed moments ago: sealed as stored, not decompressed again.
    const copied = await replicateBackup({ local, repository, snapshot, writtenSince: mtimeMs });
    expect(copied.uploadedObjects).toBe(2);
    expect(allFiles(join(dir, 'nas')).some((path) => path.includes(repository.nameOf(hash)))).toBe(true);
  });
});

describe('an offsite copy to S3 (s3rver on loopback)', () => {
  let s3: S3TestServer;
  let dir: string;
  beforeAll(async () => {
    s3 = await startS3Server();
    dir = mkdtempSync(join(tmpdir(), 'sitewarden-offsite-copy-s3-'));
  });
  afterAll(async () => {
    await s3.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs many uploads at once within the target’s byte budget, small and multipart, each read back whole', async () => {
    const local = createFileObjectStore({ dir });
    const backend = createS3Backend(s3.target({ prefix: 'budget/', partBytes: 5 * MiB, uploadBufferBytes: 12 * MiB }));
    const repository = await openRemoteRepository({
      target: 'offsite',
      backend,
      passphrase: 'a long passphrase',
      create: true,
    });
    const contents = [11 * MiB, 3 * MiB, 3 * MiB, 2 * MiB, 40_000, 40_000, 40_000, 0].map((size) => randomBytes(size));
    const hashes = await Promise.all(
      contents.map(async (content) => (await local.put(content, undefined, { compressionLevel: 1 })).hash),
    );
    await forEachConcurrently(hashes, 8, async (hash) => {
      await repository.putCompressed(hash, await local.openCompressed!(hash));
    });
    expect(backend.buffers.peak).toBeLessThanOrEqual(12 * MiB);
    // More than one part's worth was in flight: uploads ran side by side, not one after the other.
    expect(backend.buffers.peak).toBeGreaterThan(5 * MiB);
    expect(backend.buffers.lent).toBe(0);
    for (const [index, hash] of hashes.entries())
      expect(sha(await repository.store.read(hash))).toBe(sha(contents[index]!));
  }, 120_000);
});
