import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const WORKER = resolve(import.meta.dirname, '../support/backup-memory-worker.ts');

/**
 * A backup's memory does not grow with the site: the listing goes to a scratch store on disk
 * page by page, and manifests are written and read in parts. The daemon's figure for a real
 * 200,000-file site is in bench/backups.ts (BENCH_FILES=200000).
 */
describe('backup memory', () => {
  it('backs up a 100,000-file site twice (the second on top of the first manifest) within a 40 MB heap', () => {
    const run = spawnSync(process.execPath, ['--max-old-space-size=40', '--import', 'tsx', WORKER, '100000'], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(run.stderr.slice(-2000)).not.toMatch(/heap out of memory/);
    expect(run.status, run.stderr.slice(-2000)).toBe(0);
    expect(run.stdout).toMatch(/^ok /);
  }, 150_000);
});
