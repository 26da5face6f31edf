import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDirectoryBackend } from '../../../src/blobs/blob-backend.js';
import { openRemoteRepository } from '../../../src/backups/offsite/remote-store.js';
import { writeSnapshot } from '../../../src/backups/offsite/snapshots.js';
import { buildOnce, runCli } from '../../support/daemon-process.js';

/** `sitewarden recover list|rekey|restore` on a directory target, as an operator on a new machine runs them. */
describe('the recover commands', () => {
  let dataDir: string;
  let targetDir: string;
  const manifestHash = 'a'.repeat(64);
  beforeAll(async () => {
    buildOnce();
    dataDir = mkdtempSync(join(tmpdir(), 'sitewarden-recover-cli-'));
    targetDir = mkdtempSync(join(tmpdir(), 'sitewarden-recover-cli-nas-'));
    const repository = await openRemoteRepository({
      target: 'nas',
      backend: createDirectoryBackend(targetDir),
      passphrase: 'the first passphrase',
      create: true,
    });
    await writeSnapshot(repository, {
      format: 1,
      backupId: 'bkp_from_the_old_machine',
      siteId: 'site_on_the_old_machine',
      siteUrl: 'https://shop.example',
      kind: 'scheduled',
      createdAt: '2026-11-20T03:00:00.000Z',
      finishedAt: '2026-11-20T03:04:00.000Z',
      manifestHash,
      files: 1200,
      tables: 14,
      rows: 5000,
      bytesTotal: 80_000_000,
    });
  });
  afterAll(() => {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(targetDir, { recursive: true, force: true });
  });
  const env = (passphrase: string) => ({
    SITEWARDEN_DATA_DIR: dataDir,
    SITEWARDEN_TARGETS: 'nas',
    SITEWARDEN_TARGET_NAS_TYPE: 'directory',
    SITEWARDEN_TARGET_NAS_PATH: targetDir,
    SITEWARDEN_TARGET_NAS_PASSPHRASE: passphrase,
  });

  it('lists the target’s backups, rotates its passphrase, and refuses what it cannot do', () => {
    const listed = runCli(['recover', 'list', '--target', 'nas'], env('the first passphrase'));
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(
      'bkp_from_the_old_machine\tsite_on_the_old_machine\thttps://shop.example\tscheduled\t2026-11-20T03:00:00.000Z\t1200\t14',
    );

    const newPassphraseFile = join(targetDir, '..', `${Date.now()}.passphrase`);
    writeFileSync(newPassphraseFile, 'the second passphrase\n', { mode: 0o600 });
    try {
      const rekeyed = runCli(
        ['recover', 'rekey', '--target', 'nas', '--new-passphrase-file', newPassphraseFile],
        env('the first passphrase'),
      );
      expect(rekeyed.status, rekeyed.stderr).toBe(0);
      expect(rekeyed.stdout).toMatch(/now wrapped by the new passphrase/);
    } finally {
      rmSync(newPassphraseFile, { force: true });
    }
    const old = runCli(['recover', 'list', '--target', 'nas'], env('the first passphrase'));
    expect(old.status).toBe(1);
    expect(old.stderr).toMatch(/target nas: the passphrase does not open/);
    expect(runCli(['recover', 'list', '--target', 'nas'], env('the second passphrase')).stdout).toContain(
      'bkp_from_the_old_machine',
    );

    const unknownSite = runCli(
      ['recover', 'restore', '--target', 'nas', '--site', 'site_nowhere', 'bkp_from_the_old_machine'],
      env('the second passphrase'),
    );
    expect(unknownSite.status).toBe(1);
    expect(unknownSite.stderr).toMatch(/site_nowhere/);
    const usage = runCli(['recover', 'list'], env('the second passphrase'));
    expect(usage.status).toBe(1);
    expect(usage.stderr).toMatch(/recover list needs --target NAME/);
  });
});
