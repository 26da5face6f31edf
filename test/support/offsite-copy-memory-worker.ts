/**
 * Copies a made-up backup (argv[3] MiB of incompressible objects: 12 MiB videos, 2 MiB photos and
 * 48 KiB thumbnails, as bench/bench-media.ts makes them; parts of argv[4] MiB, an upload budget of
 * argv[5] MiB) from a local file store to an encrypted S3
 * repository (argv[2]: the s3rver endpoint) through the real replicateBackup, sampling (without
 * forcing a collection) the memory of ArrayBuffers each time a request is sent, when an upload
 * holds its part. Run by test/backups/offsite/offsite-copy-memory.test.ts in its own process, so
 * the figure is the copy's alone. Prints `ok <peak MB of ArrayBuffers above the start> <objects>`.
 */
import { createCipheriv } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeManifest, type ManifestFileEntry } from '../../src/backups/manifest.js';
import { createFileObjectStore } from '../../src/backups/object-store.js';
import { openRemoteRepository } from '../../src/backups/offsite/remote-store.js';
import { replicateBackup } from '../../src/backups/offsite/replicate.js';
import { createS3Backend } from '../../src/blobs/s3-backend.js';

const [endpoint, megabytes, partMb, budgetMb] = [process.argv[2]!, ...process.argv.slice(3, 6).map(Number)] as [
  string,
  number,
  number,
  number,
];
const MiB = 1024 * 1024;
const keystream = createCipheriv('aes-256-ctr', Buffer.alloc(32, 9), Buffer.alloc(16));

const dir = mkdtempSync(join(tmpdir(), 'sitewarden-offsite-copy-memory-'));
try {
  const local = createFileObjectStore({ dir });
  const files: ManifestFileEntry[] = [];
  const sizes = [12 * MiB, 2 * MiB, 2 * MiB, 2 * MiB, 48 * 1024, 48 * 1024, 48 * 1024, 48 * 1024];
  for (let total = 0, index = 0; total < megabytes * MiB; index++) {
    const size = sizes[index % sizes.length]!;
    const { hash } = await local.put(keystream.update(Buffer.alloc(size)), undefined, { compressionLevel: 1 });
    files.push({
      path: `wp-content/uploads/file-${String(index).padStart(6, '0')}.bin`,
      size,
      mtime: 1_700_000_000,
      sha256: hash,
      chunks: [hash],
    });
    total += size;
  }
  const manifest = await writeManifest(
    local,
    { siteUrl: 'http://127.0.0.1', createdAt: new Date().toISOString(), tables: [] },
    files,
  );
  const backend = createS3Backend({
    endpoint,
    region: 'us-east-1',
    bucket: 'sitewarden-test',
    prefix: 'copy-memory/',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    partBytes: partMb * MiB,
    uploadBufferBytes: budgetMb * MiB,
    maxAttempts: 3,
  });
  const repository = await openRemoteRepository({ target: 'memory', backend, passphrase: 'memory test', create: true });
  let peak = 0;
  backend.client.middlewareStack.add(
    (next) => (args) => {
      peak = Math.max(peak, process.memoryUsage().arrayBuffers);
      return next(args);
    },
    { step: 'finalizeRequest' },
  );
  globalThis.gc!();
  const base = process.memoryUsage().arrayBuffers;
  const result = await replicateBackup({
    local,
    repository,
    snapshot: {
      format: 1,
      backupId: 'bk_memory',
      siteId: 'site_memory',
      siteUrl: 'http://127.0.0.1',
      kind: 'manual',
      createdAt: new Date().toISOString(),
      finishedAt: new Date().toISOString(),
      manifestHash: manifest.hash,
      files: files.length,
      tables: 0,
      rows: 0,
      bytesTotal: megabytes * MiB,
    },
  });
  process.stdout.write(`ok ${Math.round((peak - base) / MiB)} MB arrayBuffers ${result.uploadedObjects} objects\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
