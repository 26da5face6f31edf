import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_BACKUPS_CONFIG } from '../../src/backups/backups.config.js';
import { createBackupsRepository } from '../../src/backups/backups.repository.js';
import { writeManifest } from '../../src/backups/manifest.js';
import { createDirectoryBackend } from '../../src/blobs/blob-backend.js';
import { openRemoteRepository, type RemoteRepository } from '../../src/backups/offsite/remote-store.js';
import { replicateBackup } from '../../src/backups/offsite/replicate.js';
import type { BackupRow } from '../../src/backups/backups.table.js';
import type { Clock } from '../../src/shared/clock.js';
import { createId } from '../../src/shared/ids.js';
import { createTestApp, type TestApp } from './test-app.js';

/** A test app whose sites back up to `local` and a directory target `nas`, each in a fresh temporary directory. */
export function createDirectoryTargetApp(passphrase: string, { clock }: { clock?: Clock } = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'sitewarden-data-'));
  const targetDir = mkdtempSync(join(tmpdir(), 'sitewarden-nas-'));
  const t = createTestApp({
    clock,
    config: {
      dataDir,
      backups: {
        ...DEFAULT_BACKUPS_CONFIG,
        offsite: {
          targets: [{ name: 'nas', type: 'directory', path: targetDir, passphrase }],
          defaultTargets: ['local', 'nas'],
        },
      },
    },
  });
  return {
    t,
    targetDir,
    async close() {
      await t.close();
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(targetDir, { recursive: true, force: true });
    },
  };
}

/**
 * Backups made without a site: objects and a manifest written straight into the app's local store,
 * a completed backup row, and a copy on a directory target, as a real backup would leave them.
 * For tests of what happens to stored backups (verify, retention, prune), not of taking them.
 */
export function syntheticBackups(t: TestApp, { targetDir, passphrase }: { targetDir: string; passphrase: string }) {
  const repository = createBackupsRepository(t.state);
  let remote: Promise<RemoteRepository> | null = null;
  const openTarget = () =>
    (remote ??= openRemoteRepository({
      target: 'nas',
      backend: createDirectoryBackend(targetDir),
      passphrase,
      create: true,
    }));

  return {
    repository,
    openTarget,
    /** A completed backup of `siteId` holding `files` files (each its own object, plus `shared` ones every backup holds), on local and `nas`. */
    async create(
      siteId: string,
      {
        files = 3,
        createdAt = t.clock.now(),
        copy = true,
        record = true,
      }: {
        files?: number;
        createdAt?: Date;
        copy?: boolean;
        /** false: no backup row, only the copy on the target (another daemon's backup, when `siteId` is not one of this app's sites). */
        record?: boolean;
      } = {},
    ): Promise<BackupRow & { objects: string[]; manifestHash: string }> {
      const store = t.services.backups.store;
      const entries = [];
      for (const [index, content] of [
        Buffer.from('shared by every backup'),
        ...Array.from({ length: files }, () => randomBytes(2000)),
      ].entries()) {
        const { hash } = await store.put(content);
        entries.push({
          path: `wp-content/f${String(index).padStart(4, '0')}`,
          size: content.length,
          mtime: 0,
          sha256: hash,
          chunks: [hash],
        });
      }
      const { hash: manifestHash } = await writeManifest(
        store,
        { siteUrl: 'http://127.0.0.1', createdAt: createdAt.toISOString(), tables: [] },
        entries,
      );
      const values = {
        id: createId('bkp', createdAt),
        siteId,
        kind: 'manual',
        status: 'completed',
        manifestHash,
        targets: copy ? ['local', 'nas'] : ['local'],
        createdAt,
        finishedAt: createdAt,
      } as const;
      const row = record ? await repository.insertBackup(values) : (values as unknown as BackupRow);
      if (copy)
        await replicateBackup({
          local: store,
          repository: await openTarget(),
          snapshot: {
            format: 1,
            backupId: row.id,
            siteId,
            siteUrl: 'http://127.0.0.1',
            kind: 'manual',
            createdAt: createdAt.toISOString(),
            finishedAt: createdAt.toISOString(),
            manifestHash,
            files: entries.length,
            tables: 0,
            rows: 0,
            bytesTotal: 0,
          },
        });
      return { ...row, manifestHash, objects: entries.map((entry) => entry.sha256) };
    },
  };
}
