import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startS3Server, type S3TestServer } from '../../support/s3-server.js';

const WORKER = resolve(import.meta.dirname, '../../support/offsite-copy-memory-worker.ts');

/**
 * An offsite copy holds its uploads' parts within one budget for the target (UPLOAD_BUFFER_MB) in
 * reused part buffers, and an object that fits in a part in a buffer of its own length: the
 * ArrayBuffer memory outstanding while it copies 200 MiB stays near that budget plus the garbage of
 * the streams (read, decompressed, sealed chunks) awaiting collection. Before, each of four uploads
 * held a whole part's chunks and their concatenation (and the garbage of the parts before): with
 * 16 MiB parts, 64–77 MB here; a 1 GB offsite backup took the daemon's RSS to 265 MB.
 */
describe('offsite copy memory', () => {
  let s3: S3TestServer;
  beforeAll(async () => {
    s3 = await startS3Server();
  });
  afterAll(() => s3.stop());

  it('copies 200 MiB of objects with 16 MiB parts and a 16 MiB budget in at most 54 MB of ArrayBuffers', async () => {
    // Not spawnSync: s3rver answers from this very process.
    const run = await promisify(execFile)(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', WORKER, s3.endpoint, '200', '16', '16'],
      { encoding: 'utf8', timeout: 240_000 },
    );
    const match = /^ok (\d+) MB arrayBuffers (\d+) objects/m.exec(run.stdout);
    expect(match, run.stdout + run.stderr.slice(-2000)).not.toBeNull();
    expect(Number(match![2])).toBeGreaterThan(80);
    expect(Number(match![1]), match![0]).toBeLessThanOrEqual(54);
  }, 300_000);
});
