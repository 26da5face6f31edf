import { describe, expect, it } from 'vitest';
import { heapHeldByWorker } from '../support/heap-worker.js';

/** The heap the worker still holds after a collection at its peak, under a 40 MB V8 heap. */
const run = (mode: 'collect-garbage' | 'verify', files: number) =>
  heapHeldByWorker('object-walk-memory-worker.ts', mode, String(files));

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
