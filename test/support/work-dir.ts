import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Everything a test run creates lives here (git-ignored), one `run-*` directory per run. */
const TEST_WORK_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../.test-work');

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
  rmSync(dir, { recursive: true, force: true });
}

function removeStaleRuns(): void {
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
