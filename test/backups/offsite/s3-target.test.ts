import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createS3Backend } from '../../../src/blobs/s3-backend.js';
import { openRemoteRepository } from '../../../src/backups/offsite/remote-store.js';
import { installNetworkTripwire, type NetworkTripwire } from '../../support/network-tripwire.js';
import { startS3Server, type S3TestServer } from '../../support/s3-server.js';

const WORKER = resolve(import.meta.dirname, '../../support/s3-upload-memory-worker.ts');

function blobFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('._S3rver_object'))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('an S3 target (real S3 API on loopback, the real AWS SDK)', () => {
  let s3: S3TestServer;
  let tripwire: NetworkTripwire;
  beforeAll(async () => {
    s3 = await startS3Server();
  });
  afterAll(async () => {
    await s3?.stop();
  });
  afterEach(() => tripwire?.uninstall());

  it('stores and reads back encrypted objects, talking to nothing but the configured endpoint', async () => {
    tripwire = installNetworkTripwire();
    const repository = await openRemoteRepository({
      target: 'offsite',
      backend: createS3Backend(s3.target({ prefix: 'roundtrip/' })),
      passphrase: 'a long passphrase',
      create: true,
    });
    const content = Buffer.from('<?php echo "hello from the bucket";\n'.repeat(1000));
    const { hash } = await repository.store.put(content);
    expect(await repository.store.has(hash)).toBe(true);
    expect((await repository.store.read(hash)).equals(content)).toBe(true);
    for (const file of blobFiles(s3.directory))
      expect(readFileSync(file).includes('hello from the bucket')).toBe(false);
    expect(tripwire.violations).toEqual([]);
  });

  it('without credentials in its configuration never asks the instance-metadata service for them', async () => {
    tripwire = installNetworkTripwire();
    const saved = { ...process.env };
    for (const name of Object.keys(process.env)) if (name.startsWith('AWS_')) delete process.env[name];
    process.env.AWS_SHARED_CREDENTIALS_FILE = join(s3.directory, 'no-such-credentials');
    process.env.AWS_CONFIG_FILE = join(s3.directory, 'no-such-config');
    try {
      const backend = createS3Backend(s3.target({ prefix: 'nocreds/', credentials: undefined }));
      await expect(backend.size('keys/repository')).rejects.toThrow(/credential/i);
      // The SDK's chain ends at 169.254.169.254 unless told not to: the tripwire would have recorded that.
      expect(tripwire.violations).toEqual([]);
      expect(process.env.AWS_EC2_METADATA_DISABLED).toBe('true');
    } finally {
      process.env = saved;
    }
  });

  it('takes a 200 MB object up in parts, holding one part at a time, and reads it back whole', async () => {
    // Not spawnSync: s3rver answers from this very process.
    const run = await promisify(execFile)(process.execPath, ['--import', 'tsx', WORKER, s3.endpoint, '200'], {
      encoding: 'utf8',
      timeout: 180_000,
    });
    const result = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as {
      hash: string;
      stored: { size: number; created: boolean; storedBytes: number };
      readBack: { size: number; hash: string };
      baselineRssMb: number;
      peakRssMb: number;
      parts: number;
      completed: number;
    };
    expect(result.stored).toMatchObject({ size: 200 * 1024 * 1024, created: true });
    expect(result.readBack).toEqual({ size: 200 * 1024 * 1024, hash: result.hash });
    expect(result.parts).toBeGreaterThanOrEqual(25);
    expect(result.completed).toBe(1);
    // The object is 200 MB; an upload holds one 8 MiB part (and its copy for the request) at a time.
    expect(result.peakRssMb - result.baselineRssMb).toBeLessThan(64);
  }, 200_000);

  it('names an object removed or flipped in the bucket', async () => {
    const repository = await openRemoteRepository({
      target: 'offsite',
      backend: createS3Backend(s3.target({ prefix: 'tamper/' })),
      passphrase: 'a long passphrase',
      create: true,
    });
    const flipped = await repository.store.put(Buffer.from('will be flipped'));
    const removed = await repository.store.put(Buffer.from('will be removed'));
    const fileOf = (hash: string) => blobFiles(s3.directory).find((file) => file.includes(repository.nameOf(hash)))!;
    const bytes = readFileSync(fileOf(flipped.hash));
    bytes[bytes.length - 1]! ^= 1;
    writeFileSync(fileOf(flipped.hash), bytes);
    rmSync(fileOf(removed.hash));
    await expect(repository.store.read(flipped.hash)).rejects.toThrow(
      new RegExp(`object ${flipped.hash} \\(data/.* on target offsite\\).*fails authentication`),
    );
    await expect(repository.store.read(removed.hash)).rejects.toThrow(
      new RegExp(`object ${removed.hash} .* is missing`),
    );
  });
});
