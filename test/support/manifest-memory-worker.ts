/**
 * Restores (`restore`) or downloads (`download`) a made-up backup of argv[3] small files through
 * the real restore runner or archive writer and the real file store, the site answering from
 * nothing. Run by test/backups/manifest-memory.test.ts under a small V8 heap (with --expose-gc):
 * it only finishes if the manifests are walked a part at a time, never held whole. Prints
 * `ok <peak MB of heap still in use after a collection>`.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { BackupConnector } from '../../src/wordpress/connector-client.js';
import { backupArchive } from '../../src/backups/archive.js';
import { openManifest, writeManifest, type ManifestFileEntry } from '../../src/backups/manifest.js';
import { createFileObjectStore, type ObjectStore } from '../../src/backups/object-store.js';
import { runRestore } from '../../src/backups/restore-runner.js';

const mode = process.argv[2];
const count = Number(process.argv[3]);
const pathOf = (index: number) =>
  `wp-content/uploads/many/${String(Math.floor(index / 500)).padStart(4, '0')}/file-${String(index).padStart(7, '0')}.txt`;

type StoredContent = Awaited<ReturnType<ObjectStore['put']>>;

let peakHeap = 0;
/** The heap that survives a full collection: what is held, not what awaits collection. */
function sampleHeap(): void {
  globalThis.gc!();
  peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
}

const dir = mkdtempSync(join(tmpdir(), 'sitewarden-manifest-memory-'));
try {
  const files = createFileObjectStore({ dir });
  // Two contents for all files, served from memory: the run measures the manifests (real objects in the store), not the disk.
  const contents = new Map(
    ['<?php // Silence is golden.\n', '<?php // An older silence.\n'].map((text) => [
      createHash('sha256').update(text).digest('hex'),
      Buffer.from(text),
    ]),
  );
  const store: ObjectStore = {
    ...files,
    get: (hash) => (contents.has(hash) ? Readable.from([contents.get(hash)!]) : files.get(hash)),
    read: async (hash) => contents.get(hash) ?? files.read(hash),
  };
  const [now, before] = (await Promise.all([...contents.values()].map((content) => files.put(content)))) as [
    StoredContent,
    StoredContent,
  ];
  const entry = (path: string, content: StoredContent): ManifestFileEntry => ({
    path,
    size: content.size,
    mtime: 1_700_000_000,
    sha256: content.hash,
    chunks: [content.hash],
  });
  const header = { siteUrl: 'http://127.0.0.1', createdAt: new Date().toISOString(), tables: [] };
  // The backup: every file. The site now: every 10th file changed, every 10th (another) gone, and one new file per 10.
  const target = await writeManifest(
    store,
    header,
    (function* () {
      for (let index = 0; index < count; index++) yield entry(pathOf(index), index % 10 === 3 ? before : now);
    })(),
  );
  const current = await writeManifest(
    store,
    header,
    (function* () {
      for (let index = 0; index < count; index++) {
        if (index % 10 !== 5) yield entry(pathOf(index), now);
        if (index % 10 === 7) yield entry(`${pathOf(index)}.new`, now);
      }
    })(),
  );
  sampleHeap();

  if (mode === 'restore') {
    let written = 0;
    let deleted = 0;
    const connector = {
      ensure: async () => {},
      begin: async () => ({ restoreId: 'memory' }),
      writeFile: async () => {
        if (++written % 10_000 === 0) sampleHeap();
      },
      planDeletions: async (_restore: string, paths: string[]) => {
        deleted += paths.length;
        return { planned: paths.length };
      },
      finish: async () => ({ tables: 0, dropped: 0, moved: 0, deleted }),
      abort: async () => ({ aborted: true }),
    } as unknown as BackupConnector;
    const progress = await runRestore({
      connector,
      store,
      target: await openManifest(store, target.hash),
      current: await openManifest(store, current.hash),
      onProgress: () => {},
    });
    const expected = { written: count / 5, deleted: count / 10 };
    if (written !== expected.written || deleted !== expected.deleted || progress.filesDeleted !== deleted)
      throw new Error(`restored ${written} files and deleted ${deleted}, expected ${JSON.stringify(expected)}`);
  } else if (mode === 'download') {
    const archive = await backupArchive({
      store,
      manifest: await openManifest(store, target.hash),
      tmpDir: join(dir, 'tmp'),
    });
    let bytes = 0;
    let chunks = 0;
    for await (const chunk of archive) {
      bytes += (chunk as Buffer).length;
      if (++chunks % 50 === 0) sampleHeap();
    }
    if (bytes === 0) throw new Error('the archive is empty');
  } else throw new Error(`unknown mode ${mode}`);
  sampleHeap();
  process.stdout.write(`ok ${Math.round(peakHeap / 1024 / 1024)} MB heap\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
