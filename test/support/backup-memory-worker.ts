/**
 * Backs up a made-up site of BACKUP_MEMORY_FILES small files (argv) through the real runner, the
 * real file store and a connector answering from nothing but the file index, then backs it up
 * again on top of the first manifest. Run by test/backup-memory.test.ts under a small V8 heap:
 * it only finishes if the runner holds a bounded part of the listing and manifests at a time.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BackupConnector } from '../../src/wordpress/connector-client.js';
import { createBackupLimits, DEFAULT_BACKUP_LIMITS } from '../../src/backups/backup-limits.js';
import { runBackup } from '../../src/backups/backup-runner.js';
import { openManifest } from '../../src/backups/manifest.js';
import { createFileObjectStore } from '../../src/backups/object-store.js';

const count = Number(process.argv[2]);
const pathOf = (index: number) =>
  `wp-content/uploads/many/${String(Math.floor(index / 500)).padStart(4, '0')}/file-${String(index).padStart(7, '0')}.txt`;
// One content for all: the store writes (and fsyncs) one object, so the run measures the runner, not the disk.
const content = Buffer.from('<?php // Silence is golden.\n');
const contentOf = (_path: string) => content;
const indexOf = (path: string) => Number(/file-(\d+)\.txt$/.exec(path)![1]);

const connector = {
  ensure: async () => {},
  files: async (cursor: string, limit: number) => {
    const start = cursor === '' ? 0 : indexOf(cursor) + 1;
    const files = [];
    for (let index = start; index < Math.min(count, start + limit); index++) {
      const path = pathOf(index);
      files.push({
        path,
        size: content.length,
        mtime: 1_700_000_000,
        sha256: createHash('sha256').update(content).digest('hex'),
      });
    }
    return { files, next: start + limit < count ? files.at(-1)!.path : null };
  },
  bundle: async (paths: string[], _expected: number, onBytes: (bytes: number) => void = () => {}) =>
    paths.map((path) => {
      onBytes(contentOf(path).length);
      return contentOf(path);
    }),
  tables: async () => ({ tables: [] }),
} as unknown as BackupConnector;

const dir = mkdtempSync(join(tmpdir(), 'sitewarden-memory-'));
try {
  const store = createFileObjectStore({ dir });
  let previous = null;
  for (let run = 0; run < 2; run++) {
    const limits = createBackupLimits(DEFAULT_BACKUP_LIMITS);
    const result = await runBackup({
      connector,
      store,
      previous,
      siteUrl: 'http://127.0.0.1',
      now: () => new Date(),
      onProgress: () => {},
      scratchPath: join(dir, 'sites/site.sqlite'),
      limits,
    });
    limits.dispose();
    if (result.progress.filesDone !== count)
      throw new Error(`backed up ${result.progress.filesDone} of ${count} files`);
    previous = await openManifest(store, result.manifestHash);
  }
  process.stdout.write(`ok ${Math.round(process.memoryUsage().heapUsed / 1024 / 1024)} MB heap\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
