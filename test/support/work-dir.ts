import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statfsSync,
  writeFileSync,
} from 'node:fs';
import { createHash } from 'node:crypto';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Everything a test run creates lives here (git-ignored), one `run-*` directory per run. */
const TEST_WORK_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../.test-work');

/**
 * Where test sites' files go while /dev/shm is a tmpfs with room (siteFilesDir): one directory per
 * run, named as the run's, holding the run owner's pid too. Per user: /dev/shm is everyone's.
 */
const MEMORY_ROOT = `/dev/shm/sitewarden-test-sites-${process.getuid?.() ?? 'user'}`;
const TMPFS_MAGIC = 0x01021994;
/** Left free for everything else on the machine: a run's sites take a few hundred MB at a time. */
const MEMORY_MIN_FREE_BYTES = 4 * 1024 ** 3;

const OWNER_FILE = 'owner.pid';
/** Files in a run directory naming processes that belong to that run. */
const PID_FILES = ['mariadbd.pid'];

/**
 * A fresh run directory. Leftovers of runs whose owner died (killed vitest,
 * power loss) are removed first; directories of runs still alive are left alone,
 * so two runs may share the machine.
 */
export function createRunDir(): string {
  mkdirSync(TEST_WORK_ROOT, { recursive: true });
  removeStaleRuns();
  const dir = mkdtempSync(join(TEST_WORK_ROOT, 'run-'));
  writeFileSync(join(dir, OWNER_FILE), String(process.pid));
  return dir;
}

export function removeRunDir(dir: string): void {
  rmSync(memoryDirOf(dir), { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Where the run's test sites put their files: in memory when /dev/shm is a tmpfs with room, else
 * `sites/` in the run directory. Writing a site's copy of WordPress (3,000 files, 71 MB) costs
 * about 0.2 s of CPU on tmpfs against 2.5–4 s on this machine's ext4, and every restore and update
 * writes files again; what a site holds is the same either way.
 */
export function siteFilesDir(runDir: string): string {
  if (!memoryHasRoom()) return join(runDir, 'sites');
  const dir = memoryDirOf(runDir);
  if (!existsSync(dir)) {
    // Made whole (owner file in it) before it appears under its name, so another run's stale
    // cleanup never finds it without an owner; a worker that lost the race to another keeps theirs.
    mkdirSync(MEMORY_ROOT, { recursive: true });
    const made = mkdtempSync(join(MEMORY_ROOT, '.new-'));
    writeFileSync(join(made, OWNER_FILE), readFileSync(join(runDir, OWNER_FILE)));
    try {
      renameSync(made, dir);
    } catch {
      rmSync(made, { recursive: true, force: true });
    }
  }
  return dir;
}

/** The run's directory in memory: named after the run directory's path, as runs of two checkouts share MEMORY_ROOT. */
const memoryDirOf = (runDir: string) =>
  join(MEMORY_ROOT, `${basename(runDir)}-${createHash('sha256').update(runDir).digest('hex').slice(0, 8)}`);

function memoryHasRoom(): boolean {
  try {
    const shm = statfsSync('/dev/shm');
    return shm.type === TMPFS_MAGIC && shm.bavail * shm.bsize >= MEMORY_MIN_FREE_BYTES;
  } catch {
    return false;
  }
}

function removeStaleRuns(): void {
  // Site files in memory of runs whose owner died (the run directory may be gone already).
  for (const name of existsSync(MEMORY_ROOT) ? readdirSync(MEMORY_ROOT) : []) {
    if (name.startsWith('.new-')) continue;
    const dir = join(MEMORY_ROOT, name);
    const owner = readPid(join(dir, OWNER_FILE));
    if (owner !== undefined && isAlive(owner, 'node')) continue;
    rmSync(dir, { recursive: true, force: true });
  }
  for (const name of readdirSync(TEST_WORK_ROOT)) {
    if (!name.startsWith('run-')) continue;
    const dir = join(TEST_WORK_ROOT, name);
    const owner = readPid(join(dir, OWNER_FILE));
    if (owner !== undefined && isAlive(owner, 'node')) continue;
    for (const file of PID_FILES) {
      const pid = readPid(join(dir, file));
      // The command line must mention this run's directory: the pid may have been reused.
      if (pid !== undefined && isAlive(pid, dir)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone meanwhile.
        }
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

function readPid(file: string): number | undefined {
  if (!existsSync(file)) return undefined;
  const pid = Number.parseInt(readFileSync(file, 'utf8'), 10);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

function isAlive(pid: number, commandLineMustContain: string): boolean {
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
    return cmdline.includes(commandLineMustContain);
  } catch {
    return false;
  }
}
