/**
 * Writes the manifest of a made-up backup of argv[2] files through the real writeManifest and
 * file store, sampling (without forcing a collection) the memory of ArrayBuffers as each part is
 * stored. Run by test/backups/manifest-write-memory.test.ts. Prints `ok <peak MB of ArrayBuffers>`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeManifest, type ManifestFileEntry } from '../../src/backups/manifest.js';
import { createFileObjectStore, type ObjectStore } from '../../src/backups/object-store.js';

const count = Number(process.argv[2]);
const hash = (index: number) => index.toString(16).padStart(64, '0');

const dir = mkdtempSync(join(tmpdir(), 'sitewarden-manifest-write-memory-'));
try {
  const files = createFileObjectStore({ dir });
  let peak = 0;
  const store: ObjectStore = {
    ...files,
    put: async (...args) => {
      const result = await files.put(...args);
      peak = Math.max(peak, process.memoryUsage().arrayBuffers);
      return result;
    },
  };
  globalThis.gc!();
  const base = process.memoryUsage().arrayBuffers;
  await writeManifest(
    store,
    { siteUrl: 'http://127.0.0.1', createdAt: new Date().toISOString(), tables: [] },
    (function* (): Generator<ManifestFileEntry> {
      for (let index = 0; index < count; index++)
        yield {
          path: `wp-content/uploads/many/${String(Math.floor(index / 500)).padStart(4, '0')}/file-${String(index).padStart(7, '0')}.txt`,
          size: 1000 + index,
          mtime: 1_700_000_000,
          sha256: hash(index),
          chunks: [hash(index)],
        };
    })(),
  );
  process.stdout.write(`ok ${Math.round((peak - base) / 1024 / 1024)} MB arrayBuffers\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
