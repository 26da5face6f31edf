/**
 * `prepare <dir> <files>`: stores the manifest of a made-up site of that many small files, each
 * with its own content hash. `backup <dir> <files>`: backs that site up again, unchanged, through
 * the real runner on top of that manifest, so every file goes through the check that its stored
 * object is still there. The objects' trailers are read from one real object: the run measures
 * the runner, not the disk. Run by test/backups/reuse-check-memory.test.ts with --trace-gc-nvp,
 * which sums what young collections promote between the lines `listed` (the site's last listing
 * page is sent) and `checked` (the runner asks for the tables, which come after the files): the checks.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BackupConnector } from '../../src/wordpress/connector-client.js';
import { createBackupLimits, DEFAULT_BACKUP_LIMITS } from '../../src/backups/backup-limits.js';
import { runBackup } from '../../src/backups/backup-runner.js';
import { openManifest, writeManifest } from '../../src/backups/manifest.js';
import { createFileObjectStore, type ObjectStore } from '../../src/backups/object-store.js';

const [mode, dir, files] = process.argv.slice(2) as [string, string, string];
const count = Number(files);
const pathOf = (index: number) =>
  `wp-content/uploads/many/${String(Math.floor(index / 500)).padStart(4, '0')}/file-${String(index).padStart(7, '0')}.txt`;
const indexOf = (path: string) => Number(/file-(\d+)\.txt$/.exec(path)![1]);
const content = Buffer.alloc(1000, 'x');
const entryOf = (index: number) => ({
  path: pathOf(index),
  size: content.length,
  mtime: 1_700_000_000,
  sha256: createHash('sha256').update(String(index)).digest('hex'),
});

const objects = createFileObjectStore({ dir });
const { hash: realObject } = await objects.put(content);
const store: ObjectStore = { ...objects, holds: (_hash, size) => objects.holds(realObject, size) };

if (mode === 'prepare') {
  const manifest = await writeManifest(
    store,
    {
      siteUrl: 'http://127.0.0.1',
      createdAt: new Date().toISOString(),
      listedAt: new Date().toISOString(),
      tables: [],
    },
    (function* () {
      for (let index = 0; index < count; index++) {
        const entry = entryOf(index);
        yield { ...entry, chunks: [entry.sha256] };
      }
    })(),
  );
  writeFileSync(join(dir, 'previous'), manifest.hash);
} else {
  const connector = {
    ensure: async () => {},
    files: async (cursor: string, limit: number) => {
      const start = cursor === '' ? 0 : indexOf(cursor) + 1;
      const page = [];
      for (let index = start; index < Math.min(count, start + limit); index++) page.push(entryOf(index));
      const next = start + limit < count ? page.at(-1)!.path : null;
      if (next === null) process.stdout.write('listed\n');
      return { files: page, next };
    },
    bundle: async () => {
      throw new Error('an unchanged site sends nothing');
    },
    tables: async () => {
      process.stdout.write('checked\n');
      return { tables: [] };
    },
  } as unknown as BackupConnector;
  const limits = createBackupLimits(DEFAULT_BACKUP_LIMITS);
  const result = await runBackup({
    connector,
    store,
    previous: await openManifest(store, readFileSync(join(dir, 'previous'), 'utf8')),
    siteUrl: 'http://127.0.0.1',
    now: () => new Date(),
    onProgress: () => {},
    scratchPath: join(dir, 'sites/site.sqlite'),
    limits,
  });
  limits.dispose();
  if (result.progress.filesDone !== count || result.progress.bytesTransferred !== 0)
    throw new Error(
      `reused ${result.progress.filesDone} of ${count} files, transferred ${result.progress.bytesTransferred}`,
    );
}
process.stdout.write('ok\n');
