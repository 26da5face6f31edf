import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import S3rver from 's3rver';
import { afterAll, beforeAll } from 'vitest';
import type { S3TargetConfig } from '../../src/blobs/s3-backend.js';
import type { OffsiteConfig } from '../../src/backups/offsite/targets.config.js';

/** s3rver's own account: tests always hand the SDK these explicit keys, so it never looks for credentials elsewhere. */
const S3_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export interface S3TestServer {
  endpoint: string;
  /** Where s3rver keeps the bucket's objects on disk (tests flip or remove them there, as a provider could). */
  directory: string;
  bucket: string;
  /** A target configuration for this server, path-style, explicit credentials. */
  target(overrides?: Partial<S3TargetConfig>): S3TargetConfig;
  /** Takes the server down, bucket kept on disk: the target is unreachable until `resume`. */
  pause(): Promise<void>;
  /** Serves the same bucket on the same port again. */
  resume(): Promise<void>;
  stop(): Promise<void>;
}

/** A real S3 API (s3rver) on loopback with one empty bucket. */
export async function startS3Server({ bucket = 'sitewarden-test' }: { bucket?: string } = {}): Promise<S3TestServer> {
  const directory = mkdtempSync(join(tmpdir(), 'sitewarden-s3rver-'));
  const serve = (port: number) =>
    new S3rver({
      address: '127.0.0.1',
      port,
      silent: process.env.S3RVER_LOG !== 'on',
      directory,
      configureBuckets: [{ name: bucket, configs: [] }],
    });
  let server: S3rver | null = serve(0);
  const { port } = (await server.run()) as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    directory,
    bucket,
    target: (overrides = {}) => ({
      endpoint,
      region: 'us-east-1',
      bucket,
      prefix: 'sitewarden/',
      forcePathStyle: true,
      credentials: S3_CREDENTIALS,
      partBytes: 5 * 1024 * 1024,
      maxAttempts: 3,
      ...overrides,
    }),
    async pause() {
      await server?.close();
      server = null;
    },
    async resume() {
      server = serve(port);
      await server.run();
    },
    async stop() {
      await server?.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/**
 * For a file's tests backing up to s3rver: the server, started before the file's tests (before a
 * `useBackupSite` declared after this call creates its app) and stopped after them, and the
 * backups' offsite configuration naming it as the one target `name`, after `local` by default.
 */
export function useS3Target({
  name = 'offsite',
  passphrase,
  s3: overrides = {},
}: {
  name?: string;
  passphrase: string;
  s3?: Partial<S3TargetConfig>;
}): { server: S3TestServer; offsite: OffsiteConfig } {
  const offsite: OffsiteConfig = { targets: [], defaultTargets: ['local', name] };
  const context = { offsite } as { server: S3TestServer; offsite: OffsiteConfig };
  beforeAll(async () => {
    context.server = await startS3Server();
    context.offsite.targets.push({ name, type: 's3', passphrase, s3: context.server.target(overrides) });
  });
  afterAll(async () => {
    await context.server?.stop();
  });
  return context;
}
