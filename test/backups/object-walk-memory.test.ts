import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const WORKER = resolve(import.meta.dirname, '../support/object-walk-memory-worker.ts');

/** Runs the worker under a 40 MB V8 heap; its answer is the heap still in use after a collection, at its peak. */
function run(mode: 'collect-garbage' | 'verify', files: number) {
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
 * Garbage collection and verify remember every distinct object they meet (what is referenced,
 * what was already checked): on disk, so the heap they keep does not grow with a site's files
 * or with the backups kept.
 */
describe('object walk memory', () => {
  it('collects garbage beside a 100,000-object backup within a 40 MB heap, holding no more than for 1,000', () => {
    const small = run('collect-garbage', 1_000);
    const large = run('collect-garbage', 100_000);
    expect(large).toBeLessThanOrEqual(small + 5);
  }, 150_000);

  it('verifies a backup of 100,000 distinct objects within a 40 MB heap, holding no more than for 1,000', () => {
    const small = run('verify', 1_000);
    const large = run('verify', 100_000);
    expect(large).toBeLessThanOrEqual(small + 5);
  }, 150_000);
});
