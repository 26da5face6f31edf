import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const WORKER = resolve(import.meta.dirname, '../support/reuse-check-memory-worker.ts');

/** MB that young collections promoted to the old generation over a worker run (`--trace-gc-nvp`'s `promoted=`). */
function promotedMb(mode: 'prepare' | 'backup', dir: string, files: number): number {
  const run = spawnSync(process.execPath, ['--trace-gc-nvp', '--import', 'tsx', WORKER, mode, dir, String(files)], {
    encoding: 'utf8',
    timeout: 180_000,
    maxBuffer: 256 * 1024 * 1024,
  });
  expect(run.status, run.stderr.slice(-2000)).toBe(0);
  expect(run.stdout).toMatch(/^ok$/m);
  let bytes = 0;
  for (const match of run.stdout.matchAll(/\bpromoted=(\d+)/g)) bytes += Number(match[1]);
  return bytes / 1024 / 1024;
}

function secondBackupPromotes(files: number): number {
  const dir = mkdtempSync(join(tmpdir(), 'sitewarden-reuse-memory-'));
  try {
    promotedMb('prepare', dir, files);
    return promotedMb('backup', dir, files);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A later backup checks, for every file of an unchanged site, that the object it reuses is still
 * stored. Entries checked go away young: the listing is taken from the scratch store in small
 * slices, so it does not pile up in V8's old generation as garbage that only a full collection
 * frees (taken 4,000 at a time, an unchanged 200,000-file site's whole listing, about 80 MB,
 * did). The bytes promoted are V8's own count, not a time; the figure for a real site is
 * bench/backups.ts (BENCH_FILES=200000).
 */
describe('reuse check memory', () => {
  it('promotes about as little of an unchanged 100,000-file site as of a 1,000-file one', () => {
    const small = secondBackupPromotes(1_000);
    const large = secondBackupPromotes(100_000);
    expect(large - small).toBeLessThan(12);
  }, 400_000);
});
