import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const WORKER = resolve(import.meta.dirname, '../support/manifest-memory-worker.ts');

/** Runs the worker under a 40 MB V8 heap; its answer is the heap still in use after a collection, at its peak. */
function run(mode: 'restore' | 'download', files: number) {
  const worker = spawnSync(
    process.execPath,
    ['--max-old-space-size=40', '--expose-gc', '--import', 'tsx', WORKER, mode, String(files)],
    { encoding: 'utf8', timeout: 120_000 },
  );
  expect(worker.stderr.slice(-2000)).not.toMatch(/heap out of memory/);
  expect(worker.status, worker.stderr.slice(-2000)).toBe(0);
  const heldMb = Number(/^ok (\d+) MB heap/.exec(worker.stdout)?.[1]);
  expect(heldMb).toBeGreaterThan(0);
  return heldMb;
}

/**
 * Restore and download walk the manifests' file entries part by part, in path order, and never
 * hold a manifest whole: the heap they keep does not grow with the number of files. The
 * daemon's figures for a real 200,000-file site are in bench/backups.ts (BENCH_FILES=200000).
 */
describe('manifest memory', () => {
  it('restores a 100,000-file backup over a site differing in 30,000 files within a 40 MB heap, holding no more than for 1,000 files', () => {
    const small = run('restore', 1_000);
    const large = run('restore', 100_000);
    expect(large).toBeLessThanOrEqual(small + 5);
  }, 150_000);

  it('downloads a 100,000-file backup within a 40 MB heap, holding no more than for 1,000 files', () => {
    const small = run('download', 1_000);
    const large = run('download', 100_000);
    expect(large).toBeLessThanOrEqual(small + 5);
  }, 150_000);
});
