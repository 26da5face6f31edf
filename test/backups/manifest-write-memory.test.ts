import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const WORKER = resolve(import.meta.dirname, '../support/manifest-write-memory-worker.ts');

/** The peak of ArrayBuffer memory (above the start) while the worker writes a manifest of `files` entries. */
function run(files: number) {
  const worker = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', WORKER, String(files)], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  expect(worker.status, worker.stderr.slice(-2000)).toBe(0);
  const peakMb = Number(/^ok (\d+) MB arrayBuffers/.exec(worker.stdout)?.[1]);
  expect(Number.isNaN(peakMb)).toBe(false);
  return peakMb;
}

/**
 * Writing a manifest does not leave a buffer per part behind it: parts are assembled in one
 * reused buffer, so the garbage V8 holds until its next full collection (what made the daemon's
 * RSS jump at the end of a 200,000-file backup) does not grow with the number of files.
 */
describe('manifest write memory', () => {
  it('writes a 200,000-file manifest with no more ArrayBuffer memory outstanding than a 1,000-file one, give or take 8 MB', () => {
    const small = run(1_000);
    const large = run(200_000);
    expect(large).toBeLessThanOrEqual(small + 8);
  }, 150_000);
});
