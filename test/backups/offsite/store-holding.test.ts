import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFileObjectStore } from '../../../src/backups/object-store.js';
import { offsiteProblems } from '../../../src/backups/offsite/offsite.errors.js';
import { createOffsiteTargets } from '../../../src/backups/offsite/offsite-targets.js';
import { isProblem, type AppError } from '../../../src/shared/errors.js';
import { startS3Server, type S3TestServer } from '../../support/s3-server.js';

/**
 * Where a backup is read from once the local store lost it (restore, download): a target that
 * could not be read is not a target that lacks the backup. The first is `backup-target-failed`
 * (502: try again), only the second `backup-not-held` (409: it is gone).
 */
const passphrase = 'store holding passphrase';
let dir: string;
let s3: S3TestServer;
let targets: ReturnType<typeof createOffsiteTargets>;
const local = () => createFileObjectStore({ dir: join(dir, 'local') });
/** A manifest held by the `nas` target only, and one held by no one. */
const hashes = { onNas: '', nowhere: '' };

async function holding(manifestHash: string, names: string[]) {
  return targets.storeHolding({ id: 'bkp_test', manifestHash, targets: ['local', ...names] }, local());
}

async function problemOf(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => null,
    (rejected: unknown) => rejected,
  );
  if (!isProblem(error, offsiteProblems.targetFailed, offsiteProblems.notHeld))
    throw new Error(`expected an offsite problem, got ${String(error)}`);
  return error;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sitewarden-store-holding-'));
  s3 = await startS3Server();
  targets = createOffsiteTargets({
    config: {
      defaultTargets: ['local'],
      targets: [
        { name: 'nas', type: 'directory', path: join(dir, 'nas'), passphrase },
        { name: 'disk', type: 'directory', path: join(dir, 'disk'), passphrase },
        // One attempt: the paused server's refusal is the answer at once.
        { name: 'bucket', type: 's3', passphrase, s3: s3.target({ maxAttempts: 1 }) },
      ],
    },
  });
  hashes.onNas = (await (await targets.open('nas')).store.put(Buffer.from('a manifest on the nas'))).hash;
  hashes.nowhere = (await local().put(Buffer.from('a manifest no target holds'))).hash;
  await local().delete(hashes.nowhere);
  // Every repository is opened (its key file made) while all of them answer.
  await targets.open('bucket');
  await targets.open('disk');
  // The disk then fails under the repository: every path into its data is a symbolic link loop (ELOOP).
  rmSync(join(dir, 'disk', 'data'), { recursive: true, force: true });
  symlinkSync('data', join(dir, 'disk', 'data'));
}, 60_000);

afterAll(async () => {
  await s3?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the store a backup is read from when the local one lost it', () => {
  it('is the target that holds it', async () => {
    expect((await holding(hashes.onNas, ['bucket', 'nas'])).target).toBe('nas');
  });

  it('answers backup-not-held (409) when every target answered and none holds it', async () => {
    const problem = await problemOf(holding(hashes.nowhere, ['nas', 'bucket']));
    expect(problem.problem).toBe(offsiteProblems.notHeld);
    expect(problem.problem.status).toBe(409);
    expect(problem.detail).toContain('nas: its manifest is not there');
    expect(problem.detail).toContain('bucket: its manifest is not there');
  });

  it('answers backup-target-failed (502), naming the target and why, when a target that may hold it cannot be read', async () => {
    await s3.pause();
    try {
      const problem = await problemOf(holding(hashes.nowhere, ['nas', 'bucket']));
      expect(problem.problem, problem.detail).toBe(offsiteProblems.targetFailed);
      expect(problem.problem.status).toBe(502);
      expect(problem.extensions).toMatchObject({ target: 'bucket', targets: ['bucket'], backupId: 'bkp_test' });
      expect(problem.detail).toMatch(/target bucket could not be read \(.+\)/);
      expect(problem.detail).toContain('nas: its manifest is not there');
      expect(problem.detail).toContain('try again');

      // A target that cannot be read does not keep the backup from one that holds it.
      expect((await holding(hashes.onNas, ['bucket', 'nas'])).target).toBe('nas');
    } finally {
      await s3.resume();
    }
    // Answering again, the bucket is read: not there.
    expect((await problemOf(holding(hashes.nowhere, ['bucket']))).problem).toBe(offsiteProblems.notHeld);
  });

  it('takes a directory target whose disk fails for a failure, not for an absence', async () => {
    const problem = await problemOf(holding(hashes.nowhere, ['disk']));
    expect(problem.problem, problem.detail).toBe(offsiteProblems.targetFailed);
    expect(problem.detail).toMatch(/target disk could not be read \(.*ELOOP/);
  });

  it('takes a target no longer configured for one that does not hold it', async () => {
    const problem = await problemOf(holding(hashes.nowhere, ['gone']));
    expect(problem.problem).toBe(offsiteProblems.notHeld);
    expect(problem.detail).toContain('gone: no longer configured');
  });
});
