import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

const LOCK_FILE = 'sitewarden.lock';
const PID_FILE = 'sitewarden.pid';

export interface DataDirLock {
  release(): void;
}

/** Another process holds the data directory; `pid` is null when it has not written its PID file yet. */
export class DataDirLockedError extends Error {
  override name = 'DataDirLockedError';
  constructor(
    readonly dataDir: string,
    readonly pid: number | null,
  ) {
    super(
      `the data directory ${dataDir} is in use by another sitewarden process (${pid === null ? 'pid unknown' : `pid ${pid}`})`,
    );
  }
}

/**
 * One process at a time owns a data directory. The lock is an SQLite exclusive lock (an fcntl
 * lock underneath) on a file of its own, held by an open transaction for the process's life: the
 * kernel drops it when the process dies, even by SIGKILL, so a crashed daemon never blocks the
 * next start, and there is no stale lock file to judge. The PID file only names the holder; it
 * is written after the lock is taken, so it is never trusted for the decision.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const sqlite = new Database(join(dataDir, LOCK_FILE), { timeout: 0 });
  try {
    sqlite.pragma('journal_mode = MEMORY');
    sqlite.pragma('locking_mode = EXCLUSIVE');
    sqlite.exec('BEGIN EXCLUSIVE');
  } catch (error) {
    sqlite.close();
    if ((error as { code?: string }).code === 'SQLITE_BUSY')
      throw new DataDirLockedError(dataDir, readHolderPid(dataDir));
    throw error;
  }
  const pidPath = join(dataDir, PID_FILE);
  const temporary = `${pidPath}.tmp-${process.pid}`;
  writeFileSync(temporary, `${process.pid}\n`, { mode: 0o600 });
  renameSync(temporary, pidPath);
  return {
    release() {
      if (!sqlite.open) return;
      if (readHolderPid(dataDir) === process.pid) rmSync(pidPath, { force: true });
      sqlite.close();
    },
  };
}

/**
 * Runs `work` holding the lock when no other process does (`owner: true`), or beside the process
 * that holds it (`owner: false`, with its PID) for commands that may share the directory.
 */
export async function withDataDirShared<T>(
  dataDir: string,
  work: (holder: { owner: true } | { owner: false; pid: number | null }) => T | Promise<T>,
): Promise<T> {
  let lock: DataDirLock;
  try {
    lock = lockDataDir(dataDir);
  } catch (error) {
    if (error instanceof DataDirLockedError) return work({ owner: false, pid: error.pid });
    throw error;
  }
  try {
    return await work({ owner: true });
  } finally {
    lock.release();
  }
}

function readHolderPid(dataDir: string): number | null {
  try {
    const pid = Number(readFileSync(join(dataDir, PID_FILE), 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}
