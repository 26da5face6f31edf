/**
 * Walks every object of a made-up backup of argv[3] files, each its own content: garbage
 * collection (`collect-garbage`, the backup's manifest kept, a few unreferenced objects in the
 * store) or verify (`verify`), through the real functions. The store serves the files' contents
 * from outside the V8 heap, so the heap measured is what the walk itself holds. Run by
 * test/backups/object-walk-memory.test.ts under a small V8 heap (with --expose-gc). Prints
 * `ok <peak MB of heap still in use after a collection>`.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { collectGarbage } from '../../src/backups/garbage.js';
import { writeManifest, type ManifestFileEntry } from '../../src/backups/manifest.js';
import { createFileObjectStore, type ObjectStore } from '../../src/backups/object-store.js';
import { verifyBackup } from '../../src/backups/verify.js';
import type { BackupRow } from '../../src/backups/backups.table.js';

const mode = process.argv[2];
const count = Number(process.argv[3]);
const contentOf = (index: number) => Buffer.from(`file ${index}\n`);
const hashOf = (content: Buffer) => createHash('sha256').update(content).digest();

let peakHeap = 0;
/** The heap that survives a full collection: what is held, not what awaits collection. */
function sampleHeap(): void {
  globalThis.gc!();
  peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
}

// Every file's hash and index, sorted by hash, in one Buffer (outside the heap): the store finds a content by its hash.
const ENTRY = 36;
const byHash = Buffer.alloc(count * ENTRY);
{
  const entries = Array.from({ length: count }, (_, index) => ({ hash: hashOf(contentOf(index)), index }));
  entries.sort((a, b) => Buffer.compare(a.hash, b.hash));
  for (const [position, { hash, index }] of entries.entries()) {
    hash.copy(byHash, position * ENTRY);
    byHash.writeUInt32LE(index, position * ENTRY + 32);
  }
}
function contentWithHash(hex: string): Buffer | undefined {
  const wanted = Buffer.from(hex, 'hex');
  let low = 0;
  let high = count - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const order = Buffer.compare(byHash.subarray(middle * ENTRY, middle * ENTRY + 32), wanted);
    if (order === 0) return contentOf(byHash.readUInt32LE(middle * ENTRY + 32));
    if (order < 0) low = middle + 1;
    else high = middle - 1;
  }
  return undefined;
}

const dir = mkdtempSync(join(tmpdir(), 'sitewarden-object-walk-memory-'));
try {
  const files = createFileObjectStore({ dir });
  let reads = 0;
  const store: ObjectStore = {
    ...files,
    get: (hash) => {
      if (++reads % 10_000 === 0) sampleHeap();
      const content = contentWithHash(hash);
      return content ? Readable.from([content]) : files.get(hash);
    },
  };
  const manifest = await writeManifest(
    store,
    { siteUrl: 'http://127.0.0.1', createdAt: new Date().toISOString(), tables: [] },
    (function* (): Generator<ManifestFileEntry> {
      for (let index = 0; index < count; index++) {
        const content = contentOf(index);
        const sha256 = hashOf(content).toString('hex');
        yield {
          path: `wp-content/uploads/file-${String(index).padStart(7, '0')}.txt`,
          size: content.length,
          mtime: 1,
          sha256,
          chunks: [sha256],
        };
      }
    })(),
  );
  sampleHeap();

  if (mode === 'collect-garbage') {
    const unreferenced = await Promise.all(['one', 'two', 'three'].map((text) => files.put(Buffer.from(text))));
    const walked: ObjectStore = {
      ...store,
      async *list() {
        let listed = 0;
        for await (const hash of files.list()) {
          if (++listed % 100 === 0) sampleHeap();
          yield hash;
        }
        sampleHeap();
      },
      has: async (hash) => {
        sampleHeap();
        return files.has(hash);
      },
    };
    const deleted = await collectGarbage(walked, [manifest.hash]);
    if (deleted !== unreferenced.length) throw new Error(`deleted ${deleted} objects, expected ${unreferenced.length}`);
    for (const { hash } of unreferenced) if (await files.has(hash)) throw new Error(`${hash} was kept`);
  } else if (mode === 'verify') {
    const backup = { id: 'memory', status: 'completed', manifestHash: manifest.hash } as BackupRow;
    const result = await verifyBackup({ store, backup });
    if (!result.ok || result.objectsChecked !== count + 1 + Math.ceil(count / 2000))
      throw new Error(`verify: ${JSON.stringify({ ...result, problems: result.problems.slice(0, 3) })}`);
  } else throw new Error(`unknown mode ${mode}`);
  sampleHeap();
  process.stdout.write(`ok ${Math.round(peakHeap / 1024 / 1024)} MB heap\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
