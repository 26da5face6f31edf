import { cpSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  activePlugins,
  installFixturePlugin,
  themeVersionOnDisk,
  useConnectedSite,
  wordpressPlugins,
} from '../support/wordpress-state.js';

/**
 * Safe updates against a real WordPress: the site is checked before and after, and an update that
 * breaks it is put back through the standalone rollback path, which works without WordPress.
 */
const bed = useConnectedSite();

/** Short settle and retries: the fixtures break at once or never. The backup has its own test. */
const policy = { settleMs: 300, attempts: 2, retryDelayMs: 500, backup: false };

async function safeUpdate(type: 'plugins' | 'themes', slug: string, body: Record<string, unknown> = { policy }) {
  const started = await bed.t.call('POST', `/api/sites/${bed.siteId}/${type}/${slug}/safe-update`, { json: body });
  expect(started.status, started.text).toBe(202);
  expect(started.json).toMatchObject({ status: 'queued', slug });
  await bed.t.services.safeUpdates.idle();
  const report = await bed.t.call('GET', `/api/sites/${bed.siteId}/safe-updates/${started.json.id}`);
  expect(report.status).toBe(200);
  return report.json;
}

const writeTokenId = async () => (await bed.t.services.tokens.list()).find((token) => token.name === 'test-write')!.id;

/** The site's update-history rows of one safe update, through the history API. */
async function historyOf(safeUpdateId: string) {
  const page = await bed.t.call('GET', `/api/sites/${bed.siteId}/updates/history?limit=100`);
  expect(page.status, page.text).toBe(200);
  return (page.json.items as { safeUpdateId: string | null }[]).filter((row) => row.safeUpdateId === safeUpdateId);
}

async function home(): Promise<{ status: number; body: string }> {
  const response = await fetch(`${bed.site.url}/`, { signal: AbortSignal.timeout(30_000) });
  return { status: response.status, body: await response.text() };
}

async function installAndActivate(slug: string, version: string): Promise<void> {
  installFixturePlugin(bed.site, slug, version);
  const activated = await bed.t.call('POST', `/api/sites/${bed.siteId}/plugins/${slug}/activate`);
  expect(activated.status, activated.text).toBe(200);
}

describe('safe updates on a real site', { timeout: 300_000 }, () => {
  it('rolls back on its own an update that ends every request in a fatal error, REST and connector included', async () => {
    await installAndActivate('sitewarden-fatal', '1.0.0');

    const report = await safeUpdate('plugins', 'sitewarden-fatal');

    expect(report).toMatchObject({
      status: 'rolled-back',
      reason: 'fatal-error',
      fromVersion: '1.0.0',
      toVersion: '1.1.0',
      phase: 'done',
    });
    expect(report.before).toHaveLength(1);
    expect(report.before[0].healthy).toBe(true);
    // Every after-check failed: the pages with PHP's fatal error, REST and the connector with it.
    expect(report.after.every((check: { healthy: boolean }) => !check.healthy)).toBe(true);
    const failed = report.after[0].checks;
    expect(failed).toContainEqual(
      expect.objectContaining({ name: 'page', ok: false, status: 500, problem: 'fatal-error' }),
    );
    expect(failed).toContainEqual(expect.objectContaining({ name: 'rest', ok: false }));
    expect(failed).toContainEqual(expect.objectContaining({ name: 'connector', ok: false }));
    expect(report.message).toContain('fatal-error');
    expect(report.steps.map((step: { step: string; ok: boolean }) => [step.step, step.ok])).toEqual([
      ['screenshots-before', true],
      ['restore-point', true],
      ['update', true],
      ['screenshots-after', true],
      ['rollback', true],
    ]);
    expect(report.afterRollback.at(-1).healthy).toBe(true);
    // The evidence: the broken page as the update left it, photographed before the rollback, served as PNG.
    expect(report.screenshots).toEqual([
      expect.objectContaining({ url: `${bed.site.url}/`, before: 'before-0.png', after: 'after-0.png' }),
    ]);
    expect(report.screenshots[0].changedRatio).toBeGreaterThan(0);
    const broken = await bed.t.app.request(
      `/api/sites/${bed.siteId}/safe-updates/${report.id}/screenshots/after-0.png`,
      {
        headers: { authorization: `Bearer ${bed.t.readToken}` },
      },
    );
    expect([broken.status, broken.headers.get('content-type')]).toEqual([200, 'image/png']);
    const before = await bed.t.app.request(
      `/api/sites/${bed.siteId}/safe-updates/${report.id}/screenshots/before-0.png`,
      { headers: { authorization: `Bearer ${bed.t.readToken}` } },
    );
    // WordPress's critical-error page, not the page before it.
    expect(Buffer.from(await broken.arrayBuffer()).equals(Buffer.from(await before.arrayBuffer()))).toBe(false);

    // What WordPress itself holds now: the old version, active, and a site answering 200.
    expect((await home()).status).toBe(200);
    expect((await wordpressPlugins(bed.site))['sitewarden-fatal/sitewarden-fatal.php']?.Version).toBe('1.0.0');
    expect(await activePlugins(bed.site)).toContain('sitewarden-fatal/sitewarden-fatal.php');
    // The connector answers again.
    const details = await bed.t.call('GET', `/api/sites/${bed.siteId}/plugins`);
    expect(details.status).toBe(200);

    const job = await bed.t.call('GET', `/api/jobs/${report.id}`);
    expect(job.json).toMatchObject({ kind: 'safe-update', state: 'failed', reason: 'rolled-back' });
    expect(bed.t.logs.events('update.rolled-back')).toEqual([
      expect.objectContaining({
        level: 'warn',
        siteId: bed.siteId,
        safeUpdateId: report.id,
        type: 'plugin',
        slug: 'sitewarden-fatal',
        fromVersion: '1.0.0',
        toVersion: '1.1.0',
        reason: 'fatal-error',
      }),
    ]);
    // One update-history row, like a plain single-site update's: who asked, from → to, why it failed.
    expect(await historyOf(report.id)).toEqual([
      expect.objectContaining({
        siteId: bed.siteId,
        type: 'plugin',
        slug: 'sitewarden-fatal',
        fromVersion: '1.0.0',
        toVersion: '1.1.0',
        trigger: { kind: 'request', id: await writeTokenId() },
        jobId: null,
        safeUpdateId: report.id,
        result: 'failed',
        reason: 'update-rolled-back',
        finishedAt: expect.any(String),
      }),
    ]);
    expect((await historyOf(report.id))[0]).toHaveProperty('error', expect.stringContaining('fatal-error'));
  });

  it('rolls back a fatal update in a safe bulk update too, and fails that item with the decision', async () => {
    // The previous test left sitewarden-fatal 1.0.0 active, with 1.1.0 on offer.
    await bed.t.services.sync.syncNow(bed.siteId);
    const queued = await bed.t.call('POST', '/api/fleet/updates/apply', {
      json: { sites: [bed.siteId], items: [{ type: 'plugin', slug: 'sitewarden-fatal' }], safe: true, checks: policy },
    });
    expect(queued.status, queued.text).toBe(202);
    await bed.t.services.bulkUpdates.idle();
    const run = await bed.t.call('GET', `/api/fleet/updates/runs/${queued.json.job.id}`);
    expect(run.json.sites[0]).toMatchObject({
      state: 'failed',
      items: [{ type: 'plugin', slug: 'sitewarden-fatal', state: 'failed', reason: 'update-rolled-back' }],
    });
    expect(run.json.sites[0].items[0].message).toContain('fatal-error');

    expect((await home()).status).toBe(200);
    expect((await wordpressPlugins(bed.site))['sitewarden-fatal/sitewarden-fatal.php']?.Version).toBe('1.0.0');
    expect(await activePlugins(bed.site)).toContain('sitewarden-fatal/sitewarden-fatal.php');
    expect(bed.t.logs.events('update.rolled-back')).toHaveLength(2);
    // The bulk item's history row links the safe update's report too.
    const latest = (await bed.t.call('GET', `/api/sites/${bed.siteId}/safe-updates`)).json.items[0];
    expect(await historyOf(latest.id)).toEqual([
      expect.objectContaining({
        slug: 'sitewarden-fatal',
        jobId: queued.json.job.id,
        safeUpdateId: latest.id,
        result: 'failed',
        reason: 'update-rolled-back',
      }),
    ]);
  });

  it('keeps a harmless update, and says so', async () => {
    await installAndActivate('sitewarden-demo', '1.0.0');

    const report = await safeUpdate('plugins', 'sitewarden-demo');

    expect(report).toMatchObject({ status: 'kept', reason: null, fromVersion: '1.0.0', toVersion: '1.1.0' });
    expect(report.after.at(-1).healthy).toBe(true);
    expect((await wordpressPlugins(bed.site))['sitewarden-demo/sitewarden-demo.php']?.Version).toBe('1.1.0');
    expect(await activePlugins(bed.site)).toContain('sitewarden-demo/sitewarden-demo.php');
    expect((await home()).body).toContain('sitewarden-demo 1.1.0');
    expect(bed.t.logs.events('update.verified')).toContainEqual(
      expect.objectContaining({
        safeUpdateId: report.id,
        slug: 'sitewarden-demo',
        type: 'plugin',
        visualChange: false,
        changedRatio: expect.any(Number),
      }),
    );
    expect(await historyOf(report.id)).toEqual([
      expect.objectContaining({
        type: 'plugin',
        slug: 'sitewarden-demo',
        fromVersion: '1.0.0',
        toVersion: '1.1.0',
        trigger: { kind: 'request', id: await writeTokenId() },
        result: 'succeeded',
        reason: null,
        error: null,
      }),
    ]);
  });

  it('keeps the harmless update’s screenshots, served as PNG', async () => {
    const [report] = (await bed.t.call('GET', `/api/sites/${bed.siteId}/safe-updates`)).json.items.filter(
      (item: { slug: string; status: string }) => item.slug === 'sitewarden-demo' && item.status === 'kept',
    );
    expect(report.screenshots).toEqual([
      expect.objectContaining({
        url: `${bed.site.url}/`,
        before: 'before-0.png',
        after: 'after-0.png',
        diff: 'diff-0.png',
      }),
    ]);
    expect(report.screenshots[0].changedRatio).toBeLessThan(0.03);
    expect(report.visualChange).toBe(false);
    for (const name of ['before-0.png', 'after-0.png', 'diff-0.png']) {
      const png = await bed.t.app.request(`/api/sites/${bed.siteId}/safe-updates/${report.id}/screenshots/${name}`, {
        headers: { authorization: `Bearer ${bed.t.readToken}` },
      });
      expect(png.status, name).toBe(200);
      expect(png.headers.get('content-type')).toBe('image/png');
      const bytes = Buffer.from(await png.arrayBuffer());
      expect(bytes.subarray(1, 4).toString('latin1')).toBe('PNG');
      // 1280×800, as every screenshot: width and height in the IHDR chunk.
      expect([bytes.readUInt32BE(16), bytes.readUInt32BE(20)]).toEqual([1280, 800]);
    }
    const missing = await bed.t.call(
      'GET',
      `/api/sites/${bed.siteId}/safe-updates/${report.id}/screenshots/after-7.png`,
    );
    expect(missing.json.type).toBe('/problems/safe-update-screenshot-not-found');
    const traversal = await bed.t.call(
      'GET',
      `/api/sites/${bed.siteId}/safe-updates/${report.id}/screenshots/..%2Fx.png`,
    );
    expect(traversal.status).toBe(400);
  });

  it('flags an update that changes the look beyond the threshold, and rolls it back when the policy says so', async () => {
    await installAndActivate('sitewarden-restyle', '1.0.0');
    const flagged = await safeUpdate('plugins', 'sitewarden-restyle');
    expect(flagged).toMatchObject({ status: 'kept', visualChange: true });
    expect(flagged.screenshots[0].changedRatio).toBeGreaterThan(0.03);
    // Its history row is a success with the warning.
    expect(await historyOf(flagged.id)).toEqual([
      expect.objectContaining({ slug: 'sitewarden-restyle', result: 'succeeded', reason: 'visual-change' }),
    ]);
    // Kept, but the event says it looks different, and by how much.
    expect(bed.t.logs.events('update.verified')).toContainEqual(
      expect.objectContaining({
        safeUpdateId: flagged.id,
        visualChange: true,
        changedRatio: flagged.screenshots[0].changedRatio,
      }),
    );

    installFixturePlugin(bed.site, 'sitewarden-restyle', '1.0.0');
    await bed.site.php("delete_site_transient('update_plugins');");
    const rolledBack = await safeUpdate('plugins', 'sitewarden-restyle', {
      policy: { ...policy, visual: { rollback: true, threshold: 0.05 } },
    });
    expect(rolledBack).toMatchObject({ status: 'rolled-back', reason: 'visual-change', visualChange: true });
    expect(rolledBack.message).toMatch(/changed on \d+\.\d % of its pixels \(threshold 5\.0 %\)/);
    expect((await wordpressPlugins(bed.site))['sitewarden-restyle/sitewarden-restyle.php']?.Version).toBe('1.0.0');
    expect((await home()).body).not.toContain('#8b0000');
  });

  it('gives a safe bulk update’s checks to its safe updates: a visual change kept as a warning, or rolled back', async () => {
    // The previous test left sitewarden-restyle 1.0.0, with 1.1.0 (a page repainted) on offer.
    const bulk = async (checks: Record<string, unknown>) => {
      await bed.t.services.sync.syncNow(bed.siteId);
      const queued = await bed.t.call('POST', '/api/fleet/updates/apply', {
        json: { sites: [bed.siteId], items: [{ type: 'plugin', slug: 'sitewarden-restyle' }], safe: true, checks },
      });
      expect(queued.status, queued.text).toBe(202);
      await bed.t.services.bulkUpdates.idle();
      return (await bed.t.call('GET', `/api/fleet/updates/runs/${queued.json.job.id}`)).json;
    };
    const rolledBack = await bulk({ ...policy, visual: { rollback: true, threshold: 0.05 } });
    expect(rolledBack.checks).toMatchObject({
      settleMs: 300,
      visual: { enabled: true, threshold: 0.05, rollback: true },
    });
    expect(rolledBack.sites[0]).toMatchObject({
      state: 'failed',
      items: [{ slug: 'sitewarden-restyle', state: 'failed', reason: 'update-rolled-back' }],
    });
    expect(rolledBack.sites[0].items[0].message).toContain('visual-change');
    expect((await wordpressPlugins(bed.site))['sitewarden-restyle/sitewarden-restyle.php']?.Version).toBe('1.0.0');

    const kept = await bulk(policy);
    expect(kept.sites[0]).toMatchObject({
      state: 'succeeded',
      items: [{ slug: 'sitewarden-restyle', state: 'succeeded', toVersion: '1.1.0', reason: 'visual-change' }],
    });
    expect(kept.sites[0].items[0].message).toMatch(
      /kept, but it looks different .* changed on \d+\.\d % of its pixels/,
    );
    expect((await wordpressPlugins(bed.site))['sitewarden-restyle/sitewarden-restyle.php']?.Version).toBe('1.1.0');
    expect((await home()).body).toContain('#8b0000');
  });

  it('skips a safe bulk update’s item on a site already down before it, without blaming the update', async () => {
    installFixturePlugin(bed.site, 'sitewarden-restyle', '1.0.0');
    await bed.site.php("delete_site_transient('update_plugins');");
    await bed.t.services.sync.syncNow(bed.siteId);
    const queued = await bed.t.call('POST', '/api/fleet/updates/apply', {
      json: {
        sites: [bed.siteId],
        items: [{ type: 'plugin', slug: 'sitewarden-restyle' }],
        safe: true,
        checks: { ...policy, keyword: 'a phrase this site never shows' },
      },
    });
    expect(queued.status, queued.text).toBe(202);
    await bed.t.services.bulkUpdates.idle();
    const run = (await bed.t.call('GET', `/api/fleet/updates/runs/${queued.json.job.id}`)).json;
    expect(run.job.state).toBe('succeeded');
    expect(run.progress).toMatchObject({ failed: 0, skipped: 1 });
    expect(run.sites[0]).toMatchObject({
      state: 'skipped',
      items: [{ slug: 'sitewarden-restyle', state: 'skipped', reason: 'site-down-before-update' }],
    });
    expect(run.sites[0].items[0].message).toContain('already down before the update');
    expect((await wordpressPlugins(bed.site))['sitewarden-restyle/sitewarden-restyle.php']?.Version).toBe('1.0.0');
  });

  it('does not update an unhealthy site, and says why', async () => {
    installFixturePlugin(bed.site, 'sitewarden-extra', '2.0.0');
    const report = await safeUpdate('plugins', 'sitewarden-demo', {
      policy: { ...policy, keyword: 'a phrase this site never shows' },
    });
    // Nothing newer than 1.1.0 is offered: refused before any check.
    expect(report).toMatchObject({ status: 'failed', reason: 'no-update-available' });
    expect(await historyOf(report.id)).toEqual([
      expect.objectContaining({ slug: 'sitewarden-demo', result: 'skipped', reason: 'no-update-available' }),
    ]);

    await installAndActivate('sitewarden-fatal', '1.0.0');
    const unhealthy = await safeUpdate('plugins', 'sitewarden-fatal', {
      policy: { ...policy, keyword: 'a phrase this site never shows' },
    });
    // The site was already down before the update: said so, nothing updated, never the update's fault.
    expect(unhealthy).toMatchObject({ status: 'failed', reason: 'site-down-before-update' });
    expect(unhealthy.message).toContain('already down before the update');
    expect(unhealthy.message).toContain('keyword-missing');
    expect(unhealthy.steps).toEqual([]);
    expect(await historyOf(unhealthy.id)).toEqual([
      expect.objectContaining({ slug: 'sitewarden-fatal', result: 'skipped', reason: 'site-down-before-update' }),
    ]);
    expect((await wordpressPlugins(bed.site))['sitewarden-fatal/sitewarden-fatal.php']?.Version).toBe('1.0.0');
  });

  it('alerts when the rollback does not heal the site', async () => {
    await installAndActivate('sitewarden-dropin', '1.0.0');
    const dropped = join(bed.site.root, 'wp-content/mu-plugins/sitewarden-dropin-broken.php');
    try {
      const report = await safeUpdate('plugins', 'sitewarden-dropin');
      expect(report).toMatchObject({ status: 'rollback-failed', reason: 'fatal-error' });
      expect(report.message).toContain('still unhealthy after the rollback');
      expect(report.steps.find((step: { step: string }) => step.step === 'rollback')?.ok).toBe(true);
      expect(bed.t.logs.events('update.rollback-failed')).toEqual([
        expect.objectContaining({ level: 'error', safeUpdateId: report.id, slug: 'sitewarden-dropin' }),
      ]);
      expect((await bed.t.call('GET', `/api/jobs/${report.id}`)).json.reason).toBe('rollback-failed');
    } finally {
      rmSync(dropped, { force: true });
    }
    expect((await home()).status).toBe(200);
  });

  it('restores the backup taken before the update when putting the old version back does not heal the site', async () => {
    await installAndActivate('sitewarden-migrate', '1.0.0');
    const title = (await bed.site.option('blogname')) as string;
    const report = await safeUpdate('plugins', 'sitewarden-migrate', {
      policy: { ...policy, backup: true, keyword: title, visual: { enabled: false } },
    });
    expect(report, JSON.stringify(report)).toMatchObject({ status: 'rolled-back', reason: 'keyword-missing' });
    expect(report.message).toContain('healed by restoring backup');
    expect(report.steps.map((step: { step: string; ok: boolean }) => [step.step, step.ok])).toEqual([
      ['restore-point', true],
      ['backup', true],
      ['update', true],
      ['rollback', true],
      ['restore-backup', true],
    ]);
    // The backup is recorded as taken for the update, and a restore took its own before putting it back.
    const kinds = (await bed.t.call('GET', `/api/sites/${bed.siteId}/backups`)).json.items.map(
      (backup: { kind: string }) => backup.kind,
    );
    expect(kinds).toEqual(expect.arrayContaining(['pre_update', 'pre_restore']));
    expect(kinds).not.toContain('manual');
    expect(await bed.site.option('blogname')).toBe(title);
    expect((await wordpressPlugins(bed.site))['sitewarden-migrate/sitewarden-migrate.php']?.Version).toBe('1.0.0');
    expect((await home()).body).toContain(title);
  });

  it('updates a theme through the same path', async () => {
    const fixtures = resolve(import.meta.dirname, '../support/fixtures/directory/themes/sitewarden-demo-theme/1.0.0');
    cpSync(join(fixtures, 'sitewarden-demo-theme'), join(bed.site.root, 'wp-content/themes/sitewarden-demo-theme'), {
      recursive: true,
    });
    const report = await safeUpdate('themes', 'sitewarden-demo-theme');
    expect(report).toMatchObject({ status: 'kept', type: 'theme', fromVersion: '1.0.0', toVersion: '1.1.0' });
    expect(await themeVersionOnDisk(bed.site, 'sitewarden-demo-theme')).toBe('1.1.0');
    expect(existsSync(join(bed.site.root, 'wp-content/sitewarden-rollback'))).toBe(true);
  });

  it('answers problems for unknown sites, reports and bad input', async () => {
    const unknown = await bed.t.call('GET', `/api/sites/${bed.siteId}/safe-updates/sup_nothing`);
    expect(unknown.status).toBe(404);
    expect(unknown.json.type).toBe('/problems/safe-update-not-found');
    const badPolicy = await bed.t.call('POST', `/api/sites/${bed.siteId}/plugins/sitewarden-demo/safe-update`, {
      json: { policy: { urls: ['https://elsewhere.example/'] } },
    });
    expect(badPolicy.status).toBe(400);
    const list = await bed.t.call('GET', `/api/sites/${bed.siteId}/safe-updates`);
    expect(list.json.items.length).toBeGreaterThanOrEqual(5);
  });

  it('removes the screenshots with the site', async () => {
    const root = join(tmpdir(), `sitewarden-test-${process.pid}`, 'safe-updates');
    const ids = (await bed.t.call('GET', `/api/sites/${bed.siteId}/safe-updates`)).json.items.map(
      (item: { id: string }) => item.id,
    );
    const kept = ids.filter((id: string) => existsSync(join(root, id)));
    expect(kept.length).toBeGreaterThan(0);
    expect((await bed.t.call('DELETE', `/api/sites/${bed.siteId}`)).status).toBe(204);
    await expect.poll(() => kept.filter((id: string) => existsSync(join(root, id))), { timeout: 10_000 }).toEqual([]);
  });
});
