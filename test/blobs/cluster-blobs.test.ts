import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createTestApp, insertConnectedSite, type TestApp } from '../support/test-app.js';
import { startS3Server, type S3TestServer } from '../support/s3-server.js';

const CLUSTER = {
  SITEWARDEN_DATABASE_URL: 'postgres://sitewarden@127.0.0.1:5432/sitewarden',
  SITEWARDEN_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
};

/** Cluster mode's blob store (issue 34): SITEWARDEN_BLOB_*, required in a cluster, refused on one machine. */
describe('the blob store setting', () => {
  const bucket = {
    SITEWARDEN_BLOB_BUCKET: 'cluster-blobs',
    SITEWARDEN_BLOB_ENDPOINT: 'http://127.0.0.1:9000',
    SITEWARDEN_BLOB_PATH_STYLE: 'on',
  };

  it('is a bucket written as an offsite target’s location is, or a directory every process mounts', () => {
    expect(loadConfig({ ...CLUSTER, ...bucket }).blobStore).toEqual({
      type: 's3',
      s3: expect.objectContaining({
        endpoint: 'http://127.0.0.1:9000',
        bucket: 'cluster-blobs',
        prefix: 'sitewarden/',
        region: 'us-east-1',
        forcePathStyle: true,
        credentials: undefined,
      }),
    });
    expect(
      loadConfig({ ...CLUSTER, SITEWARDEN_BLOB_TYPE: 'directory', SITEWARDEN_BLOB_PATH: '/srv/shared' }).blobStore,
    ).toEqual({ type: 'directory', path: '/srv/shared' });
    expect(loadConfig({}).blobStore).toBeNull();
  });

  it('is required in cluster mode, and a start without it is refused naming it', () => {
    expect(() => loadConfig(CLUSTER)).toThrow(
      new ConfigError(
        'invalid configuration: SITEWARDEN_BLOB_BUCKET: cluster mode (SITEWARDEN_DATABASE_URL) needs a blob store every process reads (SITEWARDEN_BLOB_BUCKET and SITEWARDEN_BLOB_ENDPOINT, or SITEWARDEN_BLOB_TYPE=directory and SITEWARDEN_BLOB_PATH); one process’s data directory is not shared',
      ),
    );
    expect(() => loadConfig({ ...CLUSTER, SITEWARDEN_BLOB_BUCKET: 'cluster-blobs' })).toThrow(
      'invalid configuration: SITEWARDEN_BLOB_ENDPOINT is required for the blob store',
    );
    expect(() => loadConfig({ ...CLUSTER, ...bucket, SITEWARDEN_BLOB_PART_MB: '2' })).toThrow(
      'invalid configuration: SITEWARDEN_BLOB_PART_MB must be a whole number from 5 to 512',
    );
  });

  it('is refused on one machine, where blobs stay in the data directory', () => {
    expect(() => loadConfig(bucket)).toThrow(
      'invalid configuration: SITEWARDEN_BLOB_*: a blob store is for cluster mode (SITEWARDEN_DATABASE_URL); on one machine backups, reports and screenshots stay in the data directory',
    );
  });
});

/**
 * Two processes of a cluster, each with its own data directory, sharing the state and the bucket: an audit's
 * report stored by the one that ran it is served by the other, and neither keeps it in its data directory.
 */
describe('audit reports in the cluster’s bucket', () => {
  let s3: S3TestServer;
  let root: string;
  let worker: TestApp;
  let api: TestApp;

  beforeAll(async () => {
    s3 = await startS3Server();
    root = mkdtempSync(join(tmpdir(), 'sitewarden-cluster-blobs-'));
    // A stand-in audit worker: the protocol of audit-protocol.ts, a small report written where it is asked.
    const workerPath = join(root, 'audit-worker.mjs');
    writeFileSync(
      workerPath,
      [
        "import { mkdirSync, writeFileSync } from 'node:fs';",
        "import { dirname } from 'node:path';",
        "import { gzipSync } from 'node:zlib';",
        "let input = '';",
        'for await (const chunk of process.stdin) input += chunk;',
        'const request = JSON.parse(input);',
        'const report = gzipSync(`<!doctype html><title>Lighthouse Report</title><p>${request.url}</p>`);',
        'mkdirSync(dirname(request.reportPath), { recursive: true });',
        'writeFileSync(request.reportPath, report);',
        'const metrics = { firstContentfulPaintMs: 1, largestContentfulPaintMs: 1, totalBlockingTimeMs: 0, cumulativeLayoutShift: 0, speedIndexMs: 1, timeToFirstByteMs: 1 };',
        'const scores = { performance: 1, accessibility: 1, bestPractices: 1, seo: 1 };',
        "const summary = { lighthouseVersion: '12', chromeVersion: null, scores, metrics, reportBytes: report.length };",
        "process.stdout.write(JSON.stringify({ type: 'completed', summary }) + '\\n');",
      ].join('\n'),
    );
    const blobStore = { type: 's3' as const, s3: s3.target({ prefix: 'cluster/' }) };
    const databasePath = join(root, 'state.sqlite');
    const processOf = (name: string) =>
      createTestApp({
        databasePath,
        auditWorkerPath: workerPath,
        config: { dataDir: join(root, name), blobStore },
      });
    worker = processOf('worker');
    api = processOf('api');
  });
  afterAll(async () => {
    await worker?.close();
    await api?.close();
    await s3?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('is stored under reports/ by the process that ran the audit and served by another', async () => {
    const siteId = insertConnectedSite(worker);
    const queued = await worker.call('POST', `/api/sites/${siteId}/performance`, { form: { formFactor: 'desktop' } });
    expect(queued.status, queued.text).toBe(202);
    await worker.services.performance.idle();

    const audit = await api.call('GET', `/api/sites/${siteId}/performance/${queued.json.id}`);
    expect(audit.json, audit.text).toMatchObject({ status: 'completed' });
    const report = await api.call('GET', `/api/sites/${siteId}/performance/${queued.json.id}/report`);
    expect(report.status, report.text).toBe(200);
    expect(report.text).toContain('Lighthouse Report');

    const keys = readdirSync(join(s3.directory, s3.bucket), { recursive: true }).map(String);
    expect(keys.some((key) => key.startsWith(`cluster/reports/${siteId}/${queued.json.id}.html.gz`))).toBe(true);
    // Only its work directory (emptied) is in the worker's data directory: no report.
    const local = readdirSync(join(root, 'worker'), { recursive: true }).map(String);
    expect(local.filter((path) => path.includes('reports'))).toEqual([]);
  });
});
