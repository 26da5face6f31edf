import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { tightenDataDir } from '../../src/shared/data-dir-permissions.js';
import { buildOnce, startDaemonProcess } from '../support/daemon-process.js';

beforeAll(() => buildOnce(), 120_000);

const cleanup: string[] = [];
afterEach(() => {
  for (const dir of cleanup.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Every entry under `dir` (symbolic links aside) with its permission bits, as `path: 0NNN`. */
function modesUnder(dir: string): Record<string, string> {
  const modes: Record<string, string> = { '.': (lstatSync(dir).mode & 0o777).toString(8) };
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    if (entry.isSymbolicLink()) continue;
    modes[relative(dir, path)] = (lstatSync(path).mode & 0o777).toString(8);
  }
  return modes;
}

const ownerOnly = (modes: Record<string, string>) =>
  Object.entries(modes).filter(([, mode]) => mode !== '700' && mode !== '600');

describe('the data directory’s permissions', () => {
  it('are tightened at start when another tool created it loose: 0700 directories, 0600 files, the database’s -wal and -shm included', async () => {
    const root = mkdtempSync(join(tmpdir(), 'sitewarden-perms-'));
    cleanup.push(root);
    const dataDir = join(root, 'data');
    mkdirSync(dataDir, { mode: 0o755 });
    // A database in use (WAL mode keeps its -wal and -shm on disk while a connection is open).
    const earlier = openDatabase(join(dataDir, 'sitewarden.db'));
    try {
      writeFileSync(join(dataDir, 'secret.key'), `${randomBytes(32).toString('base64')}\n`);
      for (const dir of ['backups/objects/ab', 'backups/tmp', 'performance/reports/site_1'])
        mkdirSync(join(dataDir, dir), { recursive: true, mode: 0o755 });
      writeFileSync(join(dataDir, 'backups/objects/ab', 'ab'.padEnd(64, '0')), 'object');
      writeFileSync(join(dataDir, 'backups/tmp/staged.part'), 'staged');
      writeFileSync(join(dataDir, 'performance/reports/site_1/aud_1.html.gz'), 'report');
      // A link out of the directory is not followed: what it points at is not ours to change.
      const outside = join(root, 'shared.txt');
      writeFileSync(outside, 'not ours');
      chmodSync(outside, 0o644);
      symlinkSync(outside, join(dataDir, 'link-out'));
      for (const path of Object.keys(modesUnder(dataDir)))
        chmodSync(join(dataDir, path), lstatSync(join(dataDir, path)).isDirectory() ? 0o755 : 0o644);
      expect(existsSync(join(dataDir, 'sitewarden.db-wal')) && existsSync(join(dataDir, 'sitewarden.db-shm'))).toBe(
        true,
      );
      const loose = ownerOnly(modesUnder(dataDir)).length;
      expect(loose).toBe(15);

      const daemon = await startDaemonProcess({ SITEWARDEN_DATA_DIR: dataDir });
      daemon.child.kill('SIGTERM');
      expect(await daemon.exited).toBe(0);

      expect(ownerOnly(modesUnder(dataDir))).toEqual([]);
      expect(lstatSync(outside).mode & 0o777).toBe(0o644);
      expect(daemon.logs()).toMatch(new RegExp(`"event":"daemon.permissions_tightened"[^\n]*"paths":${loose}\\b`));
    } finally {
      earlier.close();
    }
  });

  it('stay owner-only for what the daemon creates itself: the database with its -wal and -shm, the key, the token, the lock', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sitewarden-perms-fresh-'));
    cleanup.push(dataDir);
    const daemon = await startDaemonProcess({ SITEWARDEN_DATA_DIR: dataDir });
    try {
      const modes = modesUnder(dataDir);
      expect(Object.keys(modes)).toEqual(
        expect.arrayContaining([
          'sitewarden.db',
          'sitewarden.db-wal',
          'sitewarden.db-shm',
          'secret.key',
          'admin-token',
          'sitewarden.lock',
          'sitewarden.pid',
        ]),
      );
      expect(ownerOnly(modes)).toEqual([]);
      expect(daemon.logs()).not.toContain('daemon.permissions_tightened');
    } finally {
      daemon.child.kill('SIGTERM');
      await daemon.exited;
    }
  });

  it('follow the data directory when it is itself a link the operator made, and no link inside it', () => {
    const root = mkdtempSync(join(tmpdir(), 'sitewarden-perms-link-'));
    cleanup.push(root);
    const real = join(root, 'disk');
    mkdirSync(real, { mode: 0o755 });
    chmodSync(real, 0o755);
    writeFileSync(join(real, 'sitewarden.db'), '');
    chmodSync(join(real, 'sitewarden.db'), 0o644);
    symlinkSync(real, join(root, 'data'));

    expect(tightenDataDir(join(root, 'data'))).toEqual({
      tightened: [join(root, 'data'), join(root, 'data/sitewarden.db')],
      failed: [],
    });
    expect(ownerOnly(modesUnder(real))).toEqual([]);
  });
});
