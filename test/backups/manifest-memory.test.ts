import { describe, expect, it } from 'vitest';
import { heapHeldByWorker } from '../support/heap-worker.js';

/** The heap the worker still holds after a collection at its peak, under a 40 MB V8 heap. */
const run = (mode: 'restore' | 'download', files: number) =>
  heapHeldByWorker('manifest-memory-worker.ts', mode, String(files));

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
