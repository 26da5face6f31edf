import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { installFixturePlugin, useConnectedSite, wordpressPlugins } from '../support/wordpress-state.js';

/**
 * A plain bulk update checks nothing, and its update request succeeds even when the new version
 * fatals on every request after it (the request ran the old code). Once per site after its plain
 * items, the daemon asks the front page: a 5xx or WordPress's critical error records the update
 * applied with the site unhealthy, as when the read-back after a single-site update fails, so the
 * site page offers to roll it back.
 */
const bed = useConnectedSite();

async function home(): Promise<number> {
  const response = await fetch(`${bed.site.url}/`, { signal: AbortSignal.timeout(30_000) });
  await response.arrayBuffer();
  return response.status;
}

const pluginVersion = (slug: string) =>
  /Version:\s*(\S+)/.exec(readFileSync(join(bed.site.root, 'wp-content/plugins', slug, `${slug}.php`), 'utf8'))?.[1];

async function plainBulk(slugs: string[]) {
  await bed.t.services.sync.syncNow(bed.siteId);
  const queued = await bed.t.call('POST', '/api/fleet/updates/apply', {
    json: { sites: [bed.siteId], items: slugs.map((slug) => ({ type: 'plugin', slug })), safe: false },
  });
  expect(queued.status, queued.text).toBe(202);
  await bed.t.services.bulkUpdates.idle();
  const run = await bed.t.call('GET', `/api/fleet/updates/runs/${queued.json.job.id}`);
  expect(run.status, run.text).toBe(200);
  const history = await bed.t.call('GET', `/api/sites/${bed.siteId}/updates/history?limit=20`);
  const entries = (history.json.items as { jobId: string | null; id: string }[]).filter(
    (row) => row.jobId === queued.json.job.id,
  );
  return { run: run.json, entries };
}

describe('a plain bulk update that breaks the site on the next request', { timeout: 300_000 }, () => {
  it('leaves a healthy run as it was: succeeded without a warning', async () => {
    installFixturePlugin(bed.site, 'sitewarden-demo', '1.0.0');
    const { run, entries } = await plainBulk(['sitewarden-demo']);
    expect(pluginVersion('sitewarden-demo')).toBe('1.1.0');
    expect(entries).toEqual([
      expect.objectContaining({ slug: 'sitewarden-demo', result: 'succeeded', reason: null, toVersion: '1.1.0' }),
    ]);
    expect(run.sites[0].items).toEqual([
      expect.objectContaining({ slug: 'sitewarden-demo', state: 'succeeded', reason: null }),
    ]);
  });

  it('records it applied with the site unhealthy, and its restore point puts it back', async () => {
    installFixturePlugin(bed.site, 'sitewarden-fatal', '1.0.0');
    const activated = await bed.t.call('POST', `/api/sites/${bed.siteId}/plugins/sitewarden-fatal/activate`);
    expect(activated.status, activated.text).toBe(200);
    expect(await home()).toBe(200);

    const { run, entries } = await plainBulk(['sitewarden-fatal']);
    // What WordPress holds: the new version on disk, every request a fatal error.
    expect(pluginVersion('sitewarden-fatal')).toBe('1.1.0');
    expect(await home()).toBe(500);

    expect(entries).toEqual([
      expect.objectContaining({
        slug: 'sitewarden-fatal',
        fromVersion: '1.0.0',
        toVersion: '1.1.0',
        result: 'succeeded',
        reason: 'update-applied-site-unhealthy',
        error: expect.stringMatching(/sitewarden-fatal 1\.1\.0 is on the site now.*HTTP 500 \(fatal-error\)/),
        restorePoint: { id: expect.any(String), target: 'plugins/sitewarden-fatal' },
      }),
    ]);
    expect(run.sites[0].items).toEqual([
      expect.objectContaining({
        slug: 'sitewarden-fatal',
        state: 'succeeded',
        reason: 'update-applied-site-unhealthy',
      }),
    ]);

    const entry = entries[0]!;
    const rolledBack = await bed.t.call('POST', `/api/sites/${bed.siteId}/updates/history/${entry.id}/rollback`);
    expect(rolledBack.status, rolledBack.text).toBe(200);
    expect(pluginVersion('sitewarden-fatal')).toBe('1.0.0');
    expect((await wordpressPlugins(bed.site))['sitewarden-fatal/sitewarden-fatal.php']?.Version).toBe('1.0.0');
    expect(await home()).toBe(200);
  });
});
