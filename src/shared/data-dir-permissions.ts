import { chmodSync, lstatSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const PRIVATE_DIR_MODE = 0o700;
const PRIVATE_FILE_MODE = 0o600;

export interface TightenResult {
  /** Paths whose mode was looser than owner-only and were tightened. */
  tightened: string[];
  /** Paths that could not be tightened (another owner, a read-only file system). */
  failed: { path: string; error: string }[];
}

/**
 * Everything in the data directory is secret (the database and its -wal/-shm, the key file,
 * the admin token, backup objects, staged files, audit reports), so at every start the
 * directory tree is made owner-only: 0700 directories, 0600 files, whoever created them and
 * with whatever umask. Symbolic links inside are left alone: following one could change the
 * mode of a file outside the directory (the directory itself may be a link the operator made). Only entries with group or other bits are touched, so a tree
 * already tight costs one lstat per entry.
 */
export function tightenDataDir(dataDir: string): TightenResult {
  mkdirSync(dataDir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const result: TightenResult = { tightened: [], failed: [] };
  const visit = (path: string, isRoot = false) => {
    let stat;
    try {
      stat = isRoot ? statSync(path) : lstatSync(path);
    } catch {
      return; // Removed while we walked: nothing to protect.
    }
    if (stat.isSymbolicLink()) return;
    const wanted = stat.isDirectory() ? PRIVATE_DIR_MODE : PRIVATE_FILE_MODE;
    if ((stat.mode & 0o077) !== 0) {
      try {
        chmodSync(path, (stat.mode & 0o700) | (wanted & 0o700));
        result.tightened.push(path);
      } catch (error) {
        result.failed.push({ path, error: (error as Error).message });
      }
    }
    if (!stat.isDirectory()) return;
    let names: string[];
    try {
      names = readdirSync(path);
    } catch (error) {
      result.failed.push({ path, error: (error as Error).message });
      return;
    }
    for (const name of names) visit(join(path, name));
  };
  visit(dataDir, true);
  return result;
}
