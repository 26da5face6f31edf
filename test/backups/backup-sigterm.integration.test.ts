import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  adminApi,
  connectSite,
  PROJECT_ROOT,
  queueBackup,
  runCli,
  startDaemonProcess,
  useDaemonSite,
  waitForBackup,
} from '../support/daemon-process.js';

/** systemd's TimeoutStopSec for the unit: after it, systemd kills the daemon with SIGKILL. */
function unitStopTimeoutMs(): number {
  const match = /^TimeoutStopSec=(\d+)s?$/m.exec(
    readFileSync(join(PROJECT_ROOT, 'systemd/sitewarden.service'), 'utf8'),
  );
  if (!match) throw new Error('systemd/sitewarden.service has no TimeoutStopSec in seconds');
  return Number(match[1]) * 1000;
}

const events = (logs: string) =>
  logs
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/**
 * The real daemon process stopped with SIGTERM, as systemd stops it, in the middle of a backup
 * of a real site while uptime probes run, then started again on the same data directory.
 */
describe('a daemon stopped with SIGTERM mid-backup', () => {
  const bed = useDaemonSite('sigterm', { uploadMb: 24, slowRangeMs: 1500, lean: true });
  const env = () => ({
    SITEWARDEN_DATA_DIR: bed.dataDir,
    SITEWARDEN_LOG_LEVEL: 'info',
    SITEWARDEN_BACKUP_INTERVAL_HOURS: '0',
    SITEWARDEN_UPTIME_INTERVAL_SECONDS: '10',
    // No Lighthouse audit competes for the two cores: a scheduled one fails at once without a browser.
    CHROME_PATH: '/nonexistent/chromium',
  });

  it('exits cleanly within the unit’s stop timeout, leaves the backup interrupted, and retries it at the next start', async () => {
    let daemon = await startDaemonProcess(env());
    const call = adminApi(bed.dataDir, () => daemon.port);
    try {
      const siteId = await connectSite(call, bed.site);
      // Uptime probes run from the start.
      for (
        let polls = 0;
        polls < 200 && (await call('GET', `/api/sites/${siteId}/uptime`)).json.recentProbes.length === 0;
        polls++
      )
        await new Promise((resolve) => setTimeout(resolve, 100));
      const backupId = await queueBackup(call, siteId);

      // Stop it once the small files are stored and the large one is on its way.
      const busy = await waitForBackup(
        call,
        siteId,
        backupId,
        (backup) =>
          backup.status === 'running' &&
          backup.progress.files > 0 &&
          backup.progress.filesDone >= backup.progress.files - 1,
        3000,
      );
      expect(busy).toBe(true);
      expect((await call('GET', `/api/sites/${siteId}/uptime`)).json.recentProbes.length).toBeGreaterThan(0);

      const signalledAt = performance.now();
      daemon.child.kill('SIGTERM');
      expect(await daemon.exited, daemon.logs().slice(-8000)).toBe(0);
      const stopMs = performance.now() - signalledAt;
      console.info(
        `SIGTERM to exit mid-backup: ${Math.round(stopMs)} ms (unit TimeoutStopSec: ${unitStopTimeoutMs()} ms)`,
      );
      expect(stopMs).toBeLessThan(unitStopTimeoutMs());
      const stopped = events(daemon.logs());
      expect(stopped.at(-1)).toMatchObject({ event: 'daemon.stopped' });
      expect(stopped).toContainEqual(
        expect.objectContaining({ event: 'backup.failed', backupId, reason: 'interrupted' }),
      );
      expect(stopped).toContainEqual(
        expect.objectContaining({
          event: 'job.interrupted',
          kind: 'backup',
          jobId: backupId,
          siteId,
          action: 'failed',
        }),
      );
      expect(stopped.filter((record) => record.event === 'backup.completed')).toEqual([]);
      expect(stopped.filter((record) => record.level === 'error' && record.event === undefined)).toEqual([]);

      daemon = await startDaemonProcess(env());
      const interrupted = (await call('GET', `/api/sites/${siteId}/backups/${backupId}`)).json;
      expect(interrupted).toMatchObject({ status: 'failed', reason: 'interrupted', manifest: null, retryOf: null });
      const retried = events(daemon.logs()).find(
        (record) => record.event === 'job.interrupted' && record.action === 'retried',
      );
      expect(retried).toMatchObject({ kind: 'backup', jobId: backupId, siteId });
      let retry;
      for (let polls = 0; polls < 1200; polls++) {
        retry = (await call('GET', `/api/sites/${siteId}/backups/${retried!.retryId}`)).json;
        if (retry.status === 'completed' || retry.status === 'failed') break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(retry).toMatchObject({ status: 'completed', kind: 'manual', retryOf: backupId });
      // What the interrupted attempt stored is not downloaded again.
      expect(retry.bytes.transferred).toBeLessThan(retry.bytes.total);

      // Retention then drops the failed attempt: only the completed retry is left.
      const all = (await call('GET', `/api/sites/${siteId}/backups`)).json.items as { id: string; status: string }[];
      expect(all.map((backup) => [backup.id, backup.status])).toEqual([[retry.id, 'completed']]);
      for (const backup of all.filter((item) => item.status === 'completed')) {
        const verified = runCli(['backup', 'verify', backup.id], env());
        expect(verified.stdout, verified.stderr).toMatch(/^ok: backup /);
        expect(verified.status).toBe(0);
      }
    } finally {
      daemon.child.kill('SIGTERM');
      const code = await daemon.exited;
      // After a failure above, that failure is the one to see (a finally that throws would replace it): the log says the rest.
      if (code !== 0) console.error(`the daemon exited with ${code}; its log:\n${daemon.logs().slice(-8000)}`);
    }
    expect(await daemon.exited, daemon.logs().slice(-8000)).toBe(0);
  }, 240_000);
});
