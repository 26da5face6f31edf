import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { unitMemoryEnv } from '../support/daemon-process.js';

const WORKER = resolve(import.meta.dirname, '../support/reuse-check-memory-worker.ts');

/**
 * MB that young collections promoted to the old generation during the worker's checks (`--trace-gc-nvp`'s
 * `promoted=`, summed between the worker's `listed` and `checked` lines), under `nodeOptions`.
 */
function promotedMb(mode: 'prepare' | 'backup', dir: string, files: number, nodeOptions: string): number {
  const run = spawnSync(process.execPath, ['--trace-gc-nvp', '--import', 'tsx', WORKER, mode, dir, String(files)], {
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: nodeOptions },
    timeout: 180_000,
    maxBuffer: 256 * 1024 * 1024,
  });
  expect(run.status, run.stderr.slice(-2000)).toBe(0);
  expect(run.stdout).toMatch(/^ok$/m);
  if (mode === 'prepare') return 0;
  const checks = /^listed$([\s\S]*)^checked$/m.exec(run.stdout);
  expect(checks, 'the worker marks where the checks start and end').not.toBeNull();
  let bytes = 0;
  for (const match of checks![1]!.matchAll(/\bpromoted=(\d+)/g)) bytes += Number(match[1]);
  return bytes / 1024 / 1024;
}

function secondBackupPromotes(files: number, nodeOptions: string): number {
  const dir = mkdtempSync(join(tmpdir(), 'sitewarden-reuse-memory-'));
  try {
    promotedMb('prepare', dir, files, nodeOptions);
    return promotedMb('backup', dir, files, nodeOptions);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A later backup checks, for every file of an unchanged site, that the object it reuses is still
 * stored. What those checks allocate goes away young, so it does not pile up in V8's old
 * generation as garbage that only a full collection frees. That depends on where young
 * collections fall, so it is measured under the systemd unit's small semi-space (a collection
 * every megabyte, as the daemon runs) and under V8's default one. Entries taken 4,000 at a time
 * left an unchanged 200,000-file site's whole listing there (about 80 MB); slices of 250 whose
 * checks allocated 5 KB a file left about 25 MB of a 100,000-file site under the unit’s settings
 * and up to 22 MB under the default ones, whenever collections fell mid-slice. The bytes promoted are V8's
 * own count, not a time; the figure for a real site is bench/backups.ts (BENCH_FILES=200000).
 */
describe('reuse check memory', () => {
  const unit = unitMemoryEnv().NODE_OPTIONS ?? '';
  it.each([
    ['the systemd unit’s', unit],
    ['V8’s default', ''],
  ])(
    'promotes about as little of an unchanged 100,000-file site as of a 1,000-file one, with %s semi-space',
    (_name, nodeOptions) => {
      const small = secondBackupPromotes(1_000, nodeOptions);
      const large = secondBackupPromotes(100_000, nodeOptions);
      expect(large - small).toBeLessThan(4);
    },
    400_000,
  );
});
