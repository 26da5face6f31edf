import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRemoteRepository } from '../../../src/backups/offsite/remote-store.js';
import { createS3Backend } from '../../../src/blobs/s3-backend.js';
import {
  adminApi,
  connectSite,
  queueBackup,
  runCliAsync,
  startDaemonProcess,
  useDaemonSite,
  waitForBackup,
} from '../../support/daemon-process.js';
import { checkRepository } from '../../support/repository-check.js';
import { startS3Server, type S3TestServer } from '../../support/s3-server.js';

const passphrase = 'crash test passphrase';

/**
 * The real daemon process, killed with SIGKILL while it uploads a backup to s3rver (a 12 MB file
 * goes up as a multipart upload), then started again: its retry completes, and no snapshot in the
 * bucket ever names an object that is missing or does not read back whole.
 */
describe('a daemon killed mid-upload to an S3 target', () => {
  let s3: S3TestServer;
  beforeAll(async () => {
    s3 = await startS3Server();
  });
  afterAll(async () => {
    await s3?.stop();
  });
  const bed = useDaemonSite('offsite-crash', { uploadMb: 12, lean: true });
  const env = () => ({
    SITEWARDEN_DATA_DIR: bed.dataDir,
    SITEWARDEN_LOG_LEVEL: 'info',
    SITEWARDEN_BACKUP_INTERVAL_HOURS: '0',
    SITEWARDEN_TARGETS: 'offsite',
    SITEWARDEN_TARGET_OFFSITE_ENDPOINT: s3.endpoint,
    SITEWARDEN_TARGET_OFFSITE_BUCKET: s3.bucket,
    SITEWARDEN_TARGET_OFFSITE_PATH_STYLE: 'on',
    SITEWARDEN_TARGET_OFFSITE_ACCESS_KEY_ID: 'S3RVER',
    SITEWARDEN_TARGET_OFFSITE_SECRET_ACCESS_KEY: 'S3RVER',
    SITEWARDEN_TARGET_OFFSITE_PASSPHRASE: passphrase,
    SITEWARDEN_TARGET_OFFSITE_PART_MB: '5',
    SITEWARDEN_TARGET_OFFSITE_MAX_ATTEMPTS: '2',
  });
  const dataObjects = () =>
    readdirSync(s3.directory, { recursive: true, withFileTypes: true }).filter(
      (entry) =>
        entry.isFile() && entry.name.endsWith('._S3rver_object') && entry.parentPath.includes('/sitewarden/data/'),
    ).length;
  const bucket = () =>
    openRemoteRepository({ target: 'offsite', backend: createS3Backend(s3.target()), passphrase, create: false });

  it('never references a missing or corrupt object, and the retry completes the copy', async () => {
    let daemon = await startDaemonProcess(env());
    const call = adminApi(bed.dataDir, () => daemon.port);
    try {
      const siteId = await connectSite(call, bed.site);
      const backupId = await queueBackup(call, siteId);
      // Killed once the copy to the bucket is under way: the local backup is done, objects are going up.
      expect(
        await waitForBackup(
          call,
          siteId,
          backupId,
          (backup) => backup.status === 'running' && dataObjects() > 20,
          30_000,
        ),
      ).toBe(true);
      daemon.child.kill('SIGKILL');
      await daemon.exited;
      const killed = await checkRepository(await bucket());
      expect(killed).toEqual({ backups: [], problems: [] });

      daemon = await startDaemonProcess(env());
      const retryId = /"event":"job.interrupted"[^\n]*"action":"retried"[^\n]*"retryId":"(bkp_\w+)"/.exec(
        daemon.logs(),
      )?.[1];
      expect(retryId, daemon.logs()).toBeDefined();
      let done;
      for (;;) {
        done = (await call('GET', `/api/sites/${siteId}/backups/${retryId}`)).json;
        if (done.status !== 'queued' && done.status !== 'running') break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(done).toMatchObject({ status: 'completed', retryOf: backupId, targets: ['local', 'offsite'] });
      const after = await checkRepository(await bucket());
      expect(after).toEqual({ backups: [retryId], problems: [] });

      // The operator's view of the same, beside the running daemon.
      const listed = await runCliAsync(['recover', 'list', '--target', 'offsite'], env());
      expect(listed.status, listed.stderr).toBe(0);
      expect(listed.stdout).toContain(`${retryId}\t${siteId}\t${bed.site.url}\tmanual`);
      const verified = await runCliAsync(['backup', 'verify', retryId!, '--target', 'offsite'], env());
      expect(verified.stdout, verified.stderr).toMatch(new RegExp(`^ok: backup ${retryId} on offsite`));
      expect(verified.status).toBe(0);
      const unknown = await runCliAsync(['backup', 'verify', retryId!, '--target', 'glacier'], env());
      expect(unknown.status).toBe(1);
      expect(unknown.stderr).toMatch(/no backup target is named "glacier"/);
    } finally {
      daemon.child.kill('SIGTERM');
      await daemon.exited;
    }
  }, 600_000);
});
