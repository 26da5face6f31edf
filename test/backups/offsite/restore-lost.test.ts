import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openManifest, type Manifest } from '../../../src/backups/manifest.js';
import { createFileObjectStore, type ObjectStore } from '../../../src/backups/object-store.js';
import { runRestore } from '../../../src/backups/restore-runner.js';
import type { BackupConnector } from '../../../src/wordpress/connector-client.js';

/** A restore stopped by a missing object says which site file or table it could not give back. */
describe('a restore that meets a missing object', () => {
  let dir: string;
  let store: ObjectStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sitewarden-restore-lost-'));
    store = createFileObjectStore({ dir });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const connector = () => {
    const aborted: string[] = [];
    const stub = {
      ensure: async () => undefined,
      begin: async () => ({ restoreId: 'r1' }),
      writeFile: async () => undefined,
      planDeletions: async () => undefined,
      createTable: async () => undefined,
      insertRows: async (_id: string, _table: string, sql: string) => ({ rows: sql.split('(').length - 1 }),
      finish: async () => undefined,
      abort: async (id: string) => {
        aborted.push(id);
        return { completed: false };
      },
    };
    return { connector: stub as unknown as BackupConnector, aborted };
  };

  async function manifestOf(files: { path: string; content: string }[], batches: string[]) {
    const entries = [];
    for (const file of files) {
      const { hash } = await store.put(Buffer.from(file.content));
      entries.push({ path: file.path, size: file.content.length, mtime: 0, sha256: hash, chunks: [hash] });
    }
    const batchHashes = [];
    for (const sql of batches) batchHashes.push((await store.put(Buffer.from(sql))).hash);
    const manifest: Manifest = {
      format: 1,
      siteUrl: 'http://127.0.0.1',
      createdAt: new Date().toISOString(),
      files: entries,
      tables: [
        {
          name: 'wp_posts',
          create: 'CREATE TABLE `wp_posts` (`a` int)',
          rows: batches.length,
          primaryKey: [],
          checksum: null,
          batches: batchHashes,
        },
      ],
    };
    const { hash } = await store.put(Buffer.from(JSON.stringify(manifest)));
    return { hash, entries, batchHashes };
  }

  it('names the site file whose content is gone', async () => {
    const target = await manifestOf(
      [
        { path: 'wp-content/a.txt', content: 'a' },
        { path: 'wp-content/uploads/photo.jpg', content: 'a photo' },
      ],
      ['INSERT INTO `wp_posts` VALUES (1);'],
    );
    const current = await manifestOf([], []);
    await store.delete(target.entries[1]!.sha256);
    const { connector: stub, aborted } = connector();
    await expect(
      runRestore({
        connector: stub,
        store,
        target: await openManifest(store, target.hash),
        current: await openManifest(store, current.hash),
        onProgress: () => undefined,
      }),
    ).rejects.toMatchObject({
      problem: { name: 'backup-object-corrupt' },
      detail: expect.stringMatching(
        new RegExp(
          `^the site file wp-content/uploads/photo\\.jpg cannot be restored from this backup: its object is missing`,
        ),
      ),
      extensions: { lost: 'the site file wp-content/uploads/photo.jpg' },
    });
    expect(aborted).toEqual(['r1']);
  });

  it('names the table whose rows are gone', async () => {
    const target = await manifestOf([], ['INSERT INTO `wp_posts` VALUES (1);']);
    const current = await manifestOf([], []);
    await store.delete(target.batchHashes[0]!);
    const { connector: stub } = connector();
    await expect(
      runRestore({
        connector: stub,
        store,
        target: await openManifest(store, target.hash),
        current: await openManifest(store, current.hash),
        onProgress: () => undefined,
      }),
    ).rejects.toMatchObject({
      detail: expect.stringMatching(/^the database table wp_posts cannot be restored from this backup/),
    });
  });
});
