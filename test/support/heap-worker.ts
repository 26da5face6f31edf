import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { expect } from 'vitest';

/**
 * Runs a memory worker of test/support under a 40 MB V8 heap with `args`; its answer is the heap
 * still in use after a collection, at its peak (the worker prints `ok <n> MB heap`).
 */
export function heapHeldByWorker(worker: string, ...args: string[]): number {
  const run = spawnSync(
    process.execPath,
    ['--max-old-space-size=40', '--expose-gc', '--import', 'tsx', resolve(import.meta.dirname, worker), ...args],
    { encoding: 'utf8', timeout: 120_000 },
  );
  expect(run.stderr.slice(-2000)).not.toMatch(/heap out of memory/);
  expect(run.status, run.stderr.slice(-2000)).toBe(0);
  const heldMb = Number(/^ok (\d+) MB heap/.exec(run.stdout)?.[1]);
  expect(heldMb).toBeGreaterThan(0);
  return heldMb;
}
