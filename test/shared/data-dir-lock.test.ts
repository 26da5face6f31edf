import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { MigrationsPendingError, openDatabase } from '../../src/db/database.js';
import { DataDirLockedError, lockDataDir, withDataDirShared } from '../../src/shared/data-dir-lock.js';

const dirs: string[] = [];
const freshDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'sitewarden-lock-unit-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('the data directory lock', () => {
  it('is held by one owner at a time, names it by PID, and is free again once released', () => {
    const dataDir = freshDir();
    const lock = lockDataDir(dataDir);
    expect(readFileSync(join(dataDir, 'sitewarden.pid'), 'utf8')).toBe(`${process.pid}\n`);
    let refused: unknown;
    try {
      lockDataDir(dataDir);
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(DataDirLockedError);
    expect((refused as Error).message).toBe(
      `the data directory ${dataDir} is in use by another sitewarden process (pid ${process.pid})`,
    );

    lock.release();
    expect(existsSync(join(dataDir, 'sitewarden.pid'))).toBe(false);
    lockDataDir(dataDir).release();
  });

  it('lets a sharing command run beside the owner, or take the lock itself when there is none', async () => {
    const dataDir = freshDir();
    expect(await withDataDirShared(dataDir, (holder) => holder)).toEqual({ owner: true });
    const lock = lockDataDir(dataDir);
    expect(await withDataDirShared(dataDir, (holder) => holder)).toEqual({ owner: false, pid: process.pid });
    lock.release();
  });
});

describe('a command beside the daemon', () => {
  it('opens a database the daemon migrated without migrating it, and refuses one that lacks this version’s migrations', () => {
    const dataDir = freshDir();
    const path = join(dataDir, 'sitewarden.db');
    openDatabase(path).close();
    openDatabase(path, { migrate: false }).close();

    const older = join(dataDir, 'older.db');
    const sqlite = new Database(older);
    sqlite.exec(
      "create table __drizzle_migrations (id integer primary key, hash text not null, created_at numeric); insert into __drizzle_migrations (hash, created_at) values ('x', 1)",
    );
    sqlite.close();
    expect(() => openDatabase(older, { migrate: false })).toThrow(MigrationsPendingError);
    expect(() => openDatabase(join(dataDir, 'empty.db'), { migrate: false })).toThrow(
      /lacks migrations of this version/,
    );
  });
});
