/**
 * Stores argv[2] distinct small files in the real file store, two at a time as a backup's
 * transfers do, then downloads them through the real archive writer, sampling (without forcing
 * a collection) the ArrayBuffer memory outstanding after each object stored and each piece of
 * archive sent. Run by test/backups/object-buffers-memory.test.ts. Prints
 * `ok store <peak MB> archive <peak MB>` (above the start, after a collection).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { backupArchive } from '../../src/backups/archive.js';
import { forEachConcurrently } from '../../src/backups/concurrency.js';
import { openManifest, writeManifest, type ManifestFileEntry } from '../../src/backups/manifest.js';
import { createFileObjectStore } from '../../src/backups/object-store.js';

const count = Number(process.argv[2]);
const megabytes = (bytes: number) => Math.round(bytes / 1024 / 1024);

/** A PHP-like file of 500–3,000 bytes, different for every index. */
function content(index: number): Buffer {
  const line = `<?php // file ${index}: ${'lorem ipsum dolor sit amet '.repeat(1 + (index % 7))}\n`;
  return Buffer.from(line.repeat(Math.ceil((500 + ((index * 37) % 2500)) / line.length)));
}

const dir = mkdtempSync(join(tmpdir(), 'sitewarden-object-buffers-'));
try {
  const store = createFileObjectStore({ dir: join(dir, 'store') });
  globalThis.gc!();
  const base = process.memoryUsage().arrayBuffers;
  let peak = 0;
  const sample = () => (peak = Math.max(peak, process.memoryUsage().arrayBuffers - base));

  const entries: ManifestFileEntry[] = new Array(count);
  await forEachConcurrently(
    Array.from({ length: count }, (_, index) => index),
    2,
    async (index) => {
      const stored = await store.put(content(index), undefined);
      entries[index] = {
        path: `wp-content/many/${String(index).padStart(7, '0')}.php`,
        size: stored.size,
        mtime: 1_700_000_000,
        sha256: stored.hash,
        chunks: [stored.hash],
      };
      sample();
    },
  );
  const storePeak = peak;

  const header = { siteUrl: 'http://127.0.0.1', createdAt: new Date().toISOString(), tables: [] };
  const written = await writeManifest(store, header, entries);
  entries.length = 0;
  globalThis.gc!();
  peak = 0;
  let archived = 0;
  const archive = await backupArchive({
    store,
    manifest: await openManifest(store, written.hash),
    tmpDir: join(dir, 'tmp'),
  });
  for await (const piece of archive) {
    archived += (piece as Buffer).length;
    sample();
  }
  if (archived === 0) throw new Error('the archive is empty');
  process.stdout.write(`ok store ${megabytes(storePeak)} archive ${megabytes(peak)}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
