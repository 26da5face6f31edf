import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDirectoryBackend, type BlobBackend } from '../../src/blobs/blob-backend.js';
import { createS3Backend } from '../../src/blobs/s3-backend.js';
import { createReportStore } from '../../src/performance/performance.reports.js';
import { startS3Server, type S3TestServer } from '../support/s3-server.js';

/**
 * The audits' reports on either kind of blob store: the data directory's folder (one machine) and a
 * bucket (cluster mode, issue 34), through the same store and the same calls.
 */
describe.each(['directory', 's3'] as const)('audit reports in a %s', (kind) => {
  let dir: string;
  let s3: S3TestServer | undefined;
  let blobs: BlobBackend;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sitewarden-reports-'));
    if (kind === 's3') {
      s3 = await startS3Server();
      blobs = createS3Backend(s3.target({ prefix: `reports-${process.pid}/` }));
    } else blobs = createDirectoryBackend(join(dir, 'reports'));
  });
  afterAll(async () => {
    await s3?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores a worker’s report whole, serves it, and sweeps what no kept audit owns', async () => {
    const reports = createReportStore({ blobs, workRoot: join(dir, 'work') });
    const write = (auditId: string, body: string) => {
      const scratch = reports.scratchPathOf(auditId);
      mkdirSync(join(dir, 'work'), { recursive: true });
      writeFileSync(scratch, body);
      return scratch;
    };

    const scratch = write('perf_1', 'report one');
    expect(await reports.put('site_a', 'perf_1', scratch)).toEqual({ bytes: 10 });
    expect(existsSync(scratch)).toBe(false);
    await reports.put('site_a', 'perf_2', write('perf_2', 'report two'));
    await reports.put('site_b', 'perf_3', write('perf_3', 'report three'));
    expect((await reports.read('site_a', 'perf_1'))?.toString()).toBe('report one');
    expect(await reports.read('site_a', 'perf_9')).toBeUndefined();

    // A report whose scratch file is gone is not stored, and says so.
    await expect(reports.put('site_a', 'perf_4', join(dir, 'work', 'missing.html.gz'))).rejects.toThrow();
    expect(await reports.read('site_a', 'perf_4')).toBeUndefined();

    // perf_2's audit was deleted, site_b was removed with its audits.
    const kept = new Map([['site_a', new Set(['perf_1'])]]);
    expect(await reports.removeOrphans(async (siteId) => kept.get(siteId) ?? new Set())).toBe(2);
    const left: string[] = [];
    for await (const { key } of blobs.list('')) left.push(key);
    expect(left).toEqual(['site_a/perf_1.html.gz']);

    await reports.remove('site_a', 'perf_1');
    expect(await reports.read('site_a', 'perf_1')).toBeUndefined();
  });
});
