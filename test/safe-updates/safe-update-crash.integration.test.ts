import { describe, expect, it } from 'vitest';
import { adminApi, connectSite, startDaemonProcess, useDaemonSite, type DaemonApi } from '../support/daemon-process.js';
import { activePlugins, installFixturePlugin, wordpressPlugins } from '../support/wordpress-state.js';
import { fetchWhole } from '../support/fetch-whole.js';

/** The real daemon process, killed with SIGKILL while a safe update checks a site its update broke. */
describe('a daemon killed during a safe update’s after-checks', () => {
  const bed = useDaemonSite('safe-update-crash');
  const env = () => ({
    SITEWARDEN_DATA_DIR: bed.dataDir,
    SITEWARDEN_LOG_LEVEL: 'info',
    SITEWARDEN_BACKUP_INTERVAL_HOURS: '0',
    // No Lighthouse audit competes for the two cores: a scheduled one fails at once without a browser.
    CHROME_PATH: '/nonexistent/chromium',
  });

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the safe update as the API answers it
  async function waitFor(call: DaemonApi, path: string, reached: (update: any) => boolean, polls = 3000) {
    for (let poll = 0; poll < polls; poll++) {
      const update = (await call('GET', path)).json;
      if (reached(update)) return update;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`${path} never reached the state the test waits for`);
  }

  it('resumes at the start: the broken update is rolled back and recorded, the site answers 200', async () => {
    let daemon = await startDaemonProcess(env());
    const call = adminApi(bed.dataDir, () => daemon.port);
    try {
      const siteId = await connectSite(call, bed.site);
      installFixturePlugin(bed.site, 'sitewarden-fatal', '1.0.0');
      expect((await call('POST', `/api/sites/${siteId}/plugins/sitewarden-fatal/activate`)).status).toBe(200);

      // A long settle time: the kill lands while the site is broken and nothing is decided yet.
      const started = await call('POST', `/api/sites/${siteId}/plugins/sitewarden-fatal/safe-update`, {
        policy: { settleMs: 10_000, attempts: 2, retryDelayMs: 500, backup: false, visual: { enabled: false } },
      });
      expect(started.status).toBe(202);
      const path = `/api/sites/${siteId}/safe-updates/${started.json.id}`;
      await waitFor(call, path, (update) => update.phase === 'after-check');
      daemon.child.kill('SIGKILL');
      await daemon.exited;
      expect((await fetchWhole(`${bed.site.url}/`)).status).toBe(500);

      daemon = await startDaemonProcess(env());
      const decided = await waitFor(call, path, (update) => !['queued', 'running'].includes(update.status));
      expect(decided).toMatchObject({ status: 'rolled-back', reason: 'fatal-error', phase: 'done' });
      expect(decided.steps.map((step: { step: string }) => step.step)).toEqual([
        'restore-point',
        'update',
        'resumed',
        'rollback',
      ]);
      expect((await fetchWhole(`${bed.site.url}/`)).status).toBe(200);
      expect((await wordpressPlugins(bed.site))['sitewarden-fatal/sitewarden-fatal.php']?.Version).toBe('1.0.0');
      expect(await activePlugins(bed.site)).toContain('sitewarden-fatal/sitewarden-fatal.php');
      expect(daemon.logs()).toMatch(
        new RegExp(`"event":"update.rolled-back"[^\n]*"safeUpdateId":"${started.json.id}"`),
      );
      const job = (await call('GET', `/api/jobs/${started.json.id}`)).json;
      expect(job).toMatchObject({ kind: 'safe-update', state: 'failed', reason: 'rolled-back' });
    } finally {
      daemon.child.kill('SIGKILL');
      await daemon.exited;
    }
  }, 240_000);
});
