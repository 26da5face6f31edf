import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildOnce,
  daemonApi,
  queueBackup,
  startDaemonProcess,
  storingFiles,
  waitForBackup,
} from '../support/daemon-process.js';
import { startFakeWordPress, type FakeWordPress } from '../support/fake-wordpress/index.js';

const BIG = 'wp-content/uploads/video.bin';

/** The real daemon process, killed with SIGKILL while backing up a site that misbehaves. */
describe('a daemon killed mid-backup of a misbehaving site', () => {
  let site: FakeWordPress;
  let dataDir: string;
  const env = () => ({
    SITEWARDEN_DATA_DIR: dataDir,
    SITEWARDEN_LOG_LEVEL: 'info',
    SITEWARDEN_BACKUP_INTERVAL_HOURS: '0',
  });

  beforeAll(async () => {
    buildOnce();
    site = await startFakeWordPress();
    for (let i = 0; i < 50; i++) site.setFile(`wp-content/uploads/2026/photo-${i}.jpg`, `photo ${i} `.repeat(2000));
    site.setFile(BIG, Buffer.alloc(3 * 1024 * 1024, 7));
    dataDir = mkdtempSync(join(tmpdir(), 'sitewarden-crash-misbehaving-'));
  });
  afterAll(async () => {
    await site?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('ends the backup failed (interrupted), its retry failed with the site’s mismatch, never completed, and every stored object whole', async () => {
    let daemon = await startDaemonProcess(env());
    const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
    const call = daemonApi(() => daemon.port, token);
    try {
      const connected = await call('POST', '/api/sites', {
        url: site.url,
        username: site.username,
        applicationPassword: site.applicationPassword,
      });
      expect(connected.status, JSON.stringify(connected.json)).toBe(201);
      const siteId = connected.json.id as string;
      // The large file's ranges stall: the backup holds there, with the small files stored.
      site.misbehaviour.stall = ['sitewarden/v1/backup/file'];
      const backupId = await queueBackup(call, siteId);
      expect(await waitForBackup(call, siteId, backupId, storingFiles)).toBe(true);
      daemon.child.kill('SIGKILL');
      await daemon.exited;

      // Now the site sends an HTML error page in place of the large file.
      site.misbehaviour.stall = [];
      site.files.get(BIG)!.served = 'html';
      daemon = await startDaemonProcess(env());
      expect((await call('GET', `/api/sites/${siteId}/backups/${backupId}`)).json).toMatchObject({
        status: 'failed',
        reason: 'interrupted',
        manifest: null,
      });
      const retryId = /"event":"job.interrupted"[^\n]*"action":"retried"[^\n]*"retryId":"(bkp_\w+)"/.exec(
        daemon.logs(),
      )?.[1];
      expect(retryId, daemon.logs()).toBeDefined();
      let retry;
      for (;;) {
        retry = (await call('GET', `/api/sites/${siteId}/backups/${retryId}`)).json;
        if (retry.status === 'completed' || retry.status === 'failed') break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(retry).toMatchObject({
        status: 'failed',
        reason: 'backup-content-mismatch',
        manifest: null,
        retryOf: backupId,
      });
      expect(retry.error).toContain(BIG);
      const all = (await call('GET', `/api/sites/${siteId}/backups`)).json.items as { status: string }[];
      expect(all.map((backup) => backup.status)).not.toContain('completed');

      // Nothing half written under a final name, no scratch store left behind by the killed process.
      const objectsDir = join(dataDir, 'backups/objects');
      for (const prefix of readdirSync(objectsDir)) {
        for (const name of readdirSync(join(objectsDir, prefix))) {
          expect(
            createHash('sha256')
              .update(gunzipSync(readFileSync(join(objectsDir, prefix, name))))
              .digest('hex'),
          ).toBe(name);
        }
      }
      const tmpDir = join(dataDir, 'backups/tmp');
      expect(existsSync(tmpDir) ? readdirSync(tmpDir) : []).toEqual([]);
    } finally {
      daemon.child.kill('SIGTERM');
      await daemon.exited;
    }
  });
});
