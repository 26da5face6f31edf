/**
 * The offsite copy alone, in this process (issue 18): BENCH_COPY_MB (default 150) of incompressible
 * objects shaped like bench-media.ts's (12 MiB videos, 2 MiB photos, 48 KiB thumbnails) stored in a
 * local file store, then copied to an encrypted S3 repository on s3rver, which runs in a child
 * process so that this process's CPU time is the copy's own. Prints MiB/s, the copy's CPU seconds
 * and the upload buffers' peak. With BENCH_PROFILE the copy's CPU profile is written (the copy alone, not the set-up)
 * (bench/lab/profile-summary.ts reads it).
 *
 *   node --import tsx bench/lab/offsite-copy.ts
 *   BENCH_PROFILE=/tmp/copy.cpuprofile node --import tsx bench/lab/offsite-copy.ts   # the copy alone
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { forEachConcurrently } from '../../src/backups/concurrency.js';
import { createFileObjectStore } from '../../src/backups/object-store.js';
import { openRemoteRepository } from '../../src/backups/offsite/remote-store.js';
import { createS3Backend } from '../../src/blobs/s3-backend.js';

const MiB = 1024 * 1024;
const PROFILE = process.env.BENCH_PROFILE;
const BUCKET = 'sitewarden-bench';

if (process.argv[2] === 'serve') {
  // The child: s3rver on loopback, its port sent to the parent.
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: process.argv[3]!,
    configureBuckets: [{ name: BUCKET, configs: [] }],
  });
  const { port } = (await server.run()) as AddressInfo;
  process.send!({ port });
} else {
  const megabytes = Number(process.env.BENCH_COPY_MB ?? 150);
  const localDir = mkdtempSync(join(tmpdir(), 'sitewarden-bench-copy-'));
  const bucketDir = mkdtempSync(join(tmpdir(), 'sitewarden-bench-copy-s3-'));
  const child = fork(import.meta.filename, ['serve', bucketDir], { execArgv: ['--import', 'tsx'] });
  try {
    const local = createFileObjectStore({ dir: localDir });
    const hashes: string[] = [];
    const sizes = [12 * MiB, 2 * MiB, 2 * MiB, 48 * 1024, 48 * 1024, 48 * 1024, 48 * 1024];
    let total = 0;
    for (let index = 0; total < megabytes * MiB; index++) {
      const size = sizes[index % sizes.length]!;
      hashes.push((await local.put(randomBytes(size), undefined, { compressionLevel: 1 })).hash);
      total += size;
    }
    const port = await new Promise<number>((resolve) =>
      child.once('message', (m: { port: number }) => resolve(m.port)),
    );
    const backend = createS3Backend({
      endpoint: `http://127.0.0.1:${port}`,
      region: 'us-east-1',
      bucket: BUCKET,
      prefix: 'copy/',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      partBytes: 8 * MiB,
      maxAttempts: 3,
    });
    const repository = await openRemoteRepository({
      target: 'bench',
      backend,
      passphrase: 'bench passphrase',
      create: true,
    });
    const profiler = PROFILE ? new Session() : undefined;
    if (profiler) {
      profiler.connect();
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.start');
    }
    const start = Date.now();
    const cpu = process.cpuUsage();
    // As replicate.ts uploads: 16 at once, from the stored gzip bytes.
    await forEachConcurrently(hashes, 16, async (hash) => {
      await repository.putCompressed(hash, await local.openCompressed!(hash));
    });
    const seconds = (Date.now() - start) / 1000;
    const used = process.cpuUsage(cpu);
    if (profiler) {
      const { profile } = await profiler.post('Profiler.stop');
      writeFileSync(PROFILE!, JSON.stringify(profile));
      profiler.disconnect();
    }
    console.log(
      JSON.stringify({
        objects: hashes.length,
        mib: Math.round(total / MiB),
        seconds,
        mibPerS: Math.round((total / MiB / seconds) * 10) / 10,
        cpuS: Math.round((used.user + used.system) / 1e4) / 100,
        uploadBuffersPeakMib: backend.buffers.peak / MiB,
      }),
    );
  } finally {
    child.kill();
    rmSync(localDir, { recursive: true, force: true });
    rmSync(bucketDir, { recursive: true, force: true });
  }
}
