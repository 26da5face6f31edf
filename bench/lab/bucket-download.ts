/**
 * Reading a backup from an offsite bucket, with and without read-ahead (issue 36's product gap):
 * BENCH_FILES (default 2000) files of 16 KiB and BENCH_LARGE (default 4) of 12 MiB stored in an encrypted
 * offsite repository on a directory backend that answers each read after BENCH_LATENCY_MS (default 20 ms,
 * a bucket across the internet), then downloaded as the daemon's tar.gz (src/backups/archive.ts), with
 * the store's read-ahead and with it switched off (one object at a time, as before), alternating, in
 * BENCH_ROUNDS (default 3) rounds each. Prints the median seconds of each and their ratio.
 *
 *   node --import tsx bench/lab/bucket-download.ts
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { backupArchive } from '../../src/backups/archive.js';
import { CHUNK_BYTES, openManifest, writeManifest, type ManifestFileEntry } from '../../src/backups/manifest.js';
import type { ObjectStore } from '../../src/backups/object-store.js';
import { createDirectoryBackend, type BlobBackend } from '../../src/blobs/blob-backend.js';
import { openRemoteRepository } from '../../src/backups/offsite/remote-store.js';

const FILES = Number(process.env.BENCH_FILES ?? 2000);
const LARGE = Number(process.env.BENCH_LARGE ?? 4);
const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const dir = mkdtempSync(join(tmpdir(), 'sw-bucket-download-'));
try {
  const directory = createDirectoryBackend(join(dir, 'bucket'));
  const slow: BlobBackend = {
    ...directory,
    get: async (key) => {
      await sleep(LATENCY_MS);
      return directory.get(key);
    },
  };
  const repository = await openRemoteRepository({
    target: 'bench',
    backend: slow,
    passphrase: 'bench passphrase',
    create: true,
  });
  const store = repository.store;

  const files: ManifestFileEntry[] = [];
  const add = async (path: string, size: number) => {
    const chunks: string[] = [];
    for (let offset = 0; offset < size; offset += CHUNK_BYTES)
      chunks.push((await store.put(randomBytes(Math.min(CHUNK_BYTES, size - offset)))).hash);
    files.push({ path, size, mtime: 1_700_000_000, sha256: randomBytes(32).toString('hex'), chunks });
  };
  for (let i = 0; i < FILES; i++) await add(`wp-content/uploads/small-${String(i).padStart(5, '0')}.jpg`, 16 * 1024);
  for (let i = 0; i < LARGE; i++) await add(`wp-content/uploads/video-${i}.mp4`, 12 * 1024 * 1024);
  files.sort((a, b) => (a.path < b.path ? -1 : 1));
  const { hash } = await writeManifest(
    store,
    { siteUrl: 'https://bench.example', createdAt: new Date().toISOString(), tables: [] },
    files,
  );

  const download = async (from: ObjectStore) => {
    const started = process.hrtime.bigint();
    const manifest = await openManifest(from, hash);
    const stream = await backupArchive({ store: from, manifest, tmpDir: join(dir, 'tmp') });
    let bytes = 0;
    for await (const chunk of stream) bytes += (chunk as Buffer).length;
    return { seconds: Number(process.hrtime.bigint() - started) / 1e9, bytes };
  };
  const oneAtATime: ObjectStore = { ...store, readAhead: undefined };
  const ahead: number[] = [];
  const single: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    single.push((await download(oneAtATime)).seconds);
    ahead.push((await download(store)).seconds);
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  console.log(`${FILES} files of 16 KiB + ${LARGE} of 12 MiB, ${LATENCY_MS} ms per read, ${ROUNDS} rounds`);
  console.log(
    `one object at a time: ${median(single).toFixed(2)} s (rounds ${single.map((s) => s.toFixed(2)).join(', ')})`,
  );
  console.log(
    `read ahead:           ${median(ahead).toFixed(2)} s (rounds ${ahead.map((s) => s.toFixed(2)).join(', ')})`,
  );
  console.log(`speed-up:             ${(median(single) / median(ahead)).toFixed(1)}×`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
