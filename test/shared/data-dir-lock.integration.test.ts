import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  adminApi,
  connectSite,
  daemonApi,
  queueBackup,
  runCli,
  startDaemonProcess,
  useDaemonSite,
  waitForBackup,
} from '../support/daemon-process.js';

/**
 * One daemon per data directory: a real daemon backing up a real site holds its data directory,
 * and a second `sitewarden start` on it (on the same port, as a mistaken second unit would) stops
 * before it touches anything, instead of running its start-up recovery on the first one's jobs.
 */
describe('a data directory already in use', () => {
  const bed = useDaemonSite('lock', { uploadMb: 24, slowRangeMs: 1500, lean: true });
  const env = () => ({
    SITEWARDEN_DATA_DIR: bed.dataDir,
    SITEWARDEN_LOG_LEVEL: 'info',
    SITEWARDEN_BACKUP_INTERVAL_HOURS: '0',
    // No Lighthouse audit competes for the two cores: a scheduled one fails at once without a browser.
    CHROME_PATH: '/nonexistent/chromium',
  });

  it('refuses a second daemon at once, naming the directory and the holder’s PID, and leaves the first one’s backup running; after kill -9 a new start succeeds', async () => {
    let daemon = await startDaemonProcess(env());
    const call = adminApi(bed.dataDir, () => daemon.port);
    try {
      const siteId = await connectSite(call, bed.site);
      const backupId = await queueBackup(call, siteId);
      expect(await waitForBackup(call, siteId, backupId, (backup) => backup.status === 'running')).toBe(true);

      const startedAt = Date.now();
      const second = runCli(['start'], { ...env(), SITEWARDEN_PORT: String(daemon.port) });
      const tookMs = Date.now() - startedAt;
      expect(second.status).toBe(1);
      expect(second.stderr.trim().split('\n')).toEqual([
        `sitewarden: the data directory ${bed.dataDir} is in use by another sitewarden process (pid ${daemon.child.pid}); stop it first (one process per data directory)`,
      ]);
      expect(second.stdout).toBe(''); // It logged nothing: no recovery, no `job.interrupted`.
      expect(tookMs).toBeLessThan(5_000);

      // The first daemon still serves and its backup is its own: not failed as interrupted, not retried.
      expect((await call('GET', `/api/sites/${siteId}/backups/${backupId}`)).json.status).not.toBe('failed');
      let done;
      for (;;) {
        done = (await call('GET', `/api/sites/${siteId}/backups/${backupId}`)).json;
        if (done.status === 'completed' || done.status === 'failed') break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(done, JSON.stringify(done)).toMatchObject({ status: 'completed', retryOf: null });
      expect(
        (await call('GET', `/api/sites/${siteId}/backups`)).json.items.map((backup: { id: string }) => backup.id),
      ).toEqual([backupId]);
      expect(daemon.logs()).not.toContain('job.interrupted');

      // Commands that write: migrate refuses beside the daemon; token commands share the directory.
      const migrate = runCli(['migrate'], env());
      expect(migrate.status).toBe(1);
      expect(migrate.stderr).toContain(
        `the data directory ${bed.dataDir} is in use by another sitewarden process (pid ${daemon.child.pid})`,
      );
      const created = runCli(['token', 'create', '--name', 'beside', '--scope', 'read'], env());
      expect(created.status, created.stderr).toBe(0);
      expect((await daemonApi(() => daemon.port, created.stdout.trim())('GET', '/api/sites')).status).toBe(200);

      // A killed daemon leaves no lock behind: the kernel released it with the process.
      daemon.child.kill('SIGKILL');
      await daemon.exited;
      daemon = await startDaemonProcess(env());
      expect((await call('GET', `/api/sites/${siteId}/backups/${backupId}`)).json.status).toBe('completed');
      expect(readFileSync(join(bed.dataDir, 'sitewarden.pid'), 'utf8').trim()).toBe(String(daemon.child.pid));
    } finally {
      daemon.child.kill('SIGTERM');
      await daemon.exited;
    }
  }, 180_000);
});
