import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  adminApi,
  connectSite,
  queueBackup,
  runCli,
  startDaemonProcess,
  storingFiles,
  useDaemonSite,
  waitForBackup,
} from '../support/daemon-process.js';

/** The real daemon process, killed with SIGKILL in the middle of a backup. */
describe('a daemon killed mid-backup', () => {
  const bed = useDaemonSite('crash', { lean: true });
  const env = () => ({
    SITEWARDEN_DATA_DIR: bed.dataDir,
    SITEWARDEN_LOG_LEVEL: 'info',
    SITEWARDEN_BACKUP_INTERVAL_HOURS: '0',
  });

  it('leaves the backup failed (interrupted), never completed, and no half-written object under a final name', async () => {
    let daemon = await startDaemonProcess(env());
    const call = adminApi(bed.dataDir, () => daemon.port);
    try {
      const siteId = await connectSite(call, bed.site);
      const backupId = await queueBackup(call, siteId);

      // Kill it once objects are being written.
      expect(await waitForBackup(call, siteId, backupId, storingFiles)).toBe(true);
      daemon.child.kill('SIGKILL');
      await daemon.exited;
      const failedVerify = runCli(['backup', 'verify', backupId], env());
      expect(failedVerify.status).toBe(1);
      expect(failedVerify.stdout).toContain('FAILED');
      const tmpDir = join(bed.dataDir, 'backups/tmp');
      const leftovers = existsSync(tmpDir) ? readdirSync(tmpDir) : [];

      daemon = await startDaemonProcess(env());
      const after = (await call('GET', `/api/sites/${siteId}/backups/${backupId}`)).json;
      expect(after).toMatchObject({ status: 'failed', reason: 'interrupted', manifest: null });
      expect(daemon.logs()).toContain('"event":"backup.failed"');
      expect(daemon.logs()).toMatch(
        new RegExp(`"event":"job.interrupted"[^\n]*"jobId":"${backupId}"[^\n]*"action":"failed"`),
      );
      // What the killed process was writing is gone (the retry may be writing new files there already).
      const tmpNow = existsSync(tmpDir) ? readdirSync(tmpDir) : [];
      expect(leftovers.filter((name) => tmpNow.includes(name))).toEqual([]);
      // Every object under its final name is complete: it decompresses to content with that hash.
      const objectsDir = join(bed.dataDir, 'backups/objects');
      let objects = 0;
      for (const prefix of readdirSync(objectsDir)) {
        for (const name of readdirSync(join(objectsDir, prefix))) {
          expect(
            createHash('sha256')
              .update(gunzipSync(readFileSync(join(objectsDir, prefix, name))))
              .digest('hex'),
          ).toBe(name);
          objects++;
        }
      }
      expect(objects).toBeGreaterThan(0);

      // The daemon retries it once: the retry completes, reusing what the killed one stored, and verifies.
      const retryId = /"event":"job.interrupted"[^\n]*"action":"retried"[^\n]*"retryId":"(bkp_\w+)"/.exec(
        daemon.logs(),
      )?.[1];
      expect(retryId, daemon.logs()).toBeDefined();
      expect((await call('POST', `/api/sites/${siteId}/backups`)).json).toMatchObject({
        type: '/problems/backup-in-progress',
        jobId: retryId,
      });
      let done;
      for (;;) {
        done = (await call('GET', `/api/sites/${siteId}/backups/${retryId}`)).json;
        if (done.status === 'completed' || done.status === 'failed') break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(done).toMatchObject({ status: 'completed', retryOf: backupId });
      expect(done.bytes.transferred).toBeLessThan(done.bytes.total);
      const verified = runCli(['backup', 'verify', retryId!], env());
      expect(verified.stdout, verified.stderr).toMatch(/^ok: backup /);
      expect(verified.status).toBe(0);
    } finally {
      daemon.child.kill('SIGTERM');
      await daemon.exited;
    }
  });
});
