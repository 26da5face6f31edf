import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { activePlugins, installFixturePlugin, useConnectedSite, wordpressPlugins } from '../support/wordpress-state.js';
import { signIn } from '../dashboard/signed-in.js';
import { createSafeUpdatesRepository } from '../../src/safe-updates/safe-updates.repository.js';

/**
 * A plain (unchecked) plugin update that breaks the site can be undone through Sitewarden: it
 * takes a restore point first, and its history entry's rollback puts it back through the
 * standalone rollback path, which works while every WordPress request ends in a fatal error.
 */
const bed = useConnectedSite();

const FATAL_FILE = 'sitewarden-fatal/sitewarden-fatal.php';

/** Read from the plugin's header on disk: WordPress itself cannot answer while the plugin fatals. */
const versionOnDisk = () =>
  /Version:\s*(\S+)/.exec(readFileSync(join(bed.site.root, 'wp-content/plugins', FATAL_FILE), 'utf8'))?.[1];

async function home(): Promise<number> {
  const response = await fetch(`${bed.site.url}/`, { signal: AbortSignal.timeout(30_000) });
  await response.arrayBuffer();
  return response.status;
}

/** The plugin as the stored inventory (GET /api/sites/{id}, never the site) has it. */
async function inventoryPlugin(slug: string) {
  const details = await bed.t.call('GET', `/api/sites/${bed.siteId}`);
  expect(details.status, details.text).toBe(200);
  return details.json.plugins.find((plugin: { slug: string }) => plugin.slug === slug);
}

/** Runs `work` while every update's own request ends in a fatal error once the upgrader has put the new files in place. */
async function withUpdateRequestsDying<T>(work: () => Promise<T>): Promise<T> {
  const muPlugins = join(bed.site.root, 'wp-content/mu-plugins');
  const breaker = join(muPlugins, 'sitewarden-break-updates.php');
  mkdirSync(muPlugins, { recursive: true });
  writeFileSync(
    breaker,
    "<?php\nadd_action( 'upgrader_process_complete', static function () { sitewarden_update_request_dies(); } );\n",
  );
  try {
    return await work();
  } finally {
    rmSync(breaker);
  }
}

async function latestEntry(slug: string) {
  const page = await bed.t.call('GET', `/api/sites/${bed.siteId}/updates/history?slug=${slug}&limit=10`);
  expect(page.status, page.text).toBe(200);
  return page.json.items.find((row: { rollbackOf: string | null }) => row.rollbackOf === null);
}

describe('rolling back a plain update', { timeout: 300_000 }, () => {
  it('puts back a plain update that fatals every request, once', async () => {
    installFixturePlugin(bed.site, 'sitewarden-fatal', '1.0.0');
    const activated = await bed.t.call('POST', `/api/sites/${bed.siteId}/plugins/sitewarden-fatal/activate`);
    expect(activated.status, activated.text).toBe(200);
    await bed.t.services.sync.syncNow(bed.siteId);

    const updated = await bed.t.call('POST', `/api/sites/${bed.siteId}/plugins/sitewarden-fatal/update`);
    // The new version fatals on every request: WordPress answers 500, so does Sitewarden's way through it.
    expect(await home()).toBe(500);
    expect(versionOnDisk()).toBe('1.1.0');
    // The update is done all the same: the answer says so, and which history entry rolls it back.
    expect(updated.status, updated.text).toBe(502);
    expect(updated.json).toMatchObject({
      type: '/problems/update-applied-site-unhealthy',
      slug: 'sitewarden-fatal',
      fromVersion: '1.0.0',
      version: '1.1.0',
      siteProblem: 'site-error',
      updateId: expect.any(String),
    });

    const entry = await latestEntry('sitewarden-fatal');
    expect(entry).toMatchObject({
      id: updated.json.updateId,
      type: 'plugin',
      slug: 'sitewarden-fatal',
      fromVersion: '1.0.0',
      toVersion: '1.1.0',
      restorePoint: { id: expect.any(String), target: 'plugins/sitewarden-fatal' },
      rollbackOf: null,
      // Applied, the site unhealthy after it.
      result: 'succeeded',
      reason: 'update-applied-site-unhealthy',
      error: expect.stringContaining('critical error'),
    });
    // The inventory shows what is on disk, though WordPress can no longer say.
    expect(await inventoryPlugin('sitewarden-fatal')).toMatchObject({ version: '1.1.0', update: null });

    const rolledBack = await bed.t.call('POST', `/api/sites/${bed.siteId}/updates/history/${entry.id}/rollback`);
    expect(rolledBack.status, rolledBack.text).toBe(200);
    expect(rolledBack.json).toMatchObject({
      entry: { id: entry.id },
      rollback: {
        rollbackOf: entry.id,
        result: 'succeeded',
        fromVersion: entry.toVersion,
        toVersion: '1.0.0',
        trigger: { kind: 'request' },
      },
    });
    expect(versionOnDisk()).toBe('1.0.0');
    expect((await wordpressPlugins(bed.site))[FATAL_FILE]?.Version).toBe('1.0.0');
    expect(await activePlugins(bed.site)).toContain(FATAL_FILE);
    expect(await home()).toBe(200);
    // Read again once WordPress answers: the version put back, the update on offer again.
    expect(await inventoryPlugin('sitewarden-fatal')).toMatchObject({ version: '1.0.0', update: { version: '1.1.0' } });
    expect(bed.t.logs.events('update.rolled-back')).toContainEqual(
      expect.objectContaining({
        siteId: bed.siteId,
        type: 'plugin',
        slug: 'sitewarden-fatal',
        fromVersion: '1.0.0',
        toVersion: entry.toVersion,
        reason: 'rolled-back-on-request',
      }),
    );

    const again = await bed.t.call('POST', `/api/sites/${bed.siteId}/updates/history/${entry.id}/rollback`);
    expect(again.status, again.text).toBe(409);
    expect(again.json).toMatchObject({ type: expect.stringContaining('already-rolled-back') });
  });

  it('answers 404 for an unknown entry and 409 no-restore-point for an entry without one', async () => {
    const unknown = await bed.t.call('POST', `/api/sites/${bed.siteId}/updates/history/upd_unknown/rollback`);
    expect(unknown.status).toBe(404);
    expect(unknown.json.type).toContain('update-history-entry-not-found');

    // The rollback's own entry has no restore point of its own.
    const page = await bed.t.call('GET', `/api/sites/${bed.siteId}/updates/history?limit=10`);
    const rollback = page.json.items.find((row: { rollbackOf: string | null }) => row.rollbackOf !== null);
    const none = await bed.t.call('POST', `/api/sites/${bed.siteId}/updates/history/${rollback.id}/rollback`);
    expect(none.status).toBe(409);
    expect(none.json.type).toContain('no-restore-point');
  });

  it('offers Roll back on the site page for a plain update made from the dashboard, and does it', async () => {
    // The first test left sitewarden-fatal 1.0.0 active, with 1.1.0 on offer.
    const alice = await signIn(bed.t);
    const updated = await alice.post(`/sites/${bed.siteId}/plugins/sitewarden-fatal/update`, {});
    expect(updated.status).toBe(303);
    expect(await home()).toBe(500);

    const entry = await latestEntry('sitewarden-fatal');
    expect(entry).toMatchObject({
      trigger: { kind: 'user' },
      restorePoint: expect.any(Object),
      result: 'succeeded',
      reason: 'update-applied-site-unhealthy',
    });
    const sitePage = await (await alice.get(`/sites/${bed.siteId}`)).text();
    const link = `/sites/${bed.siteId}/updates/history/${entry.id}/rollback`;
    expect(sitePage).toContain(`href="${link}"`);
    // At the top of the page: the update broke the site, and the button that rolls it back.
    const notice = /<section class="notice" id="broken-by-update"[\s\S]*?<\/section>/.exec(sitePage)?.[0] ?? '';
    expect(notice).toContain('The update of sitewarden-fatal from 1.0.0 to 1.1.0 broke the site');
    expect(notice).toContain(`href="${link}"`);
    expect(notice).toContain('Roll back sitewarden-fatal to 1.0.0');
    expect(sitePage.indexOf('id="broken-by-update"')).toBeLessThan(sitePage.indexOf('id="plugins"'));
    // The history says applied, the site unhealthy.
    expect(sitePage).toContain('site unhealthy');

    const confirm = await (await alice.get(link)).text();
    expect(confirm).toContain(`action="${link}"`);
    expect(confirm).toContain('name="confirm"');
    // Not confirmed: nothing happens.
    await alice.post(link, {});
    expect(await home()).toBe(500);

    const done = await alice.post(link, { confirm: 'yes' });
    expect(done.status).toBe(303);
    expect(await alice.follow(done)).toContain('Rolled back sitewarden-fatal to 1.0.0');
    expect(versionOnDisk()).toBe('1.0.0');
    expect(await home()).toBe(200);
    // Rolled back: the button is gone, the rollback is listed.
    const after = await (await alice.get(`/sites/${bed.siteId}`)).text();
    expect(after).not.toContain(`href="${link}"`);
    expect(after).not.toContain('id="broken-by-update"');
    expect(after).toContain(`rollback of ${entry.id}`);
    const again = await alice.follow(await alice.post(link, { confirm: 'yes' }));
    expect(again).toContain('was rolled back by');
  });

  it('takes a restore point in a plain bulk update too, and its entry rolls back', async () => {
    await bed.t.services.sync.syncNow(bed.siteId);
    const queued = await bed.t.call('POST', '/api/fleet/updates/apply', {
      json: { sites: [bed.siteId], items: [{ type: 'plugin', slug: 'sitewarden-fatal' }], safe: false },
    });
    expect(queued.status, queued.text).toBe(202);
    await bed.t.services.bulkUpdates.idle();
    expect(await home()).toBe(500);

    const entry = await latestEntry('sitewarden-fatal');
    expect(entry).toMatchObject({ jobId: queued.json.job.id, restorePoint: { target: 'plugins/sitewarden-fatal' } });
    const rolledBack = await bed.t.call('POST', `/api/sites/${bed.siteId}/updates/history/${entry.id}/rollback`);
    expect(rolledBack.status, rolledBack.text).toBe(200);
    expect(versionOnDisk()).toBe('1.0.0');
    expect(await home()).toBe(200);
  });

  it('records an update applied though its own request failed, from the version the standalone path reads on disk', async () => {
    installFixturePlugin(bed.site, 'sitewarden-demo', '1.0.0');
    await bed.t.services.sync.syncNow(bed.siteId);
    const updated = await withUpdateRequestsDying(() =>
      bed.t.call('POST', `/api/sites/${bed.siteId}/plugins/sitewarden-demo/update`),
    );
    expect(updated.status, updated.text).toBe(502);
    expect(updated.json).toMatchObject({
      type: '/problems/update-applied-site-unhealthy',
      fromVersion: '1.0.0',
      version: '1.1.0',
      siteProblem: 'site-error',
    });
    expect((await wordpressPlugins(bed.site))['sitewarden-demo/sitewarden-demo.php']?.Version).toBe('1.1.0');
    const entry = await latestEntry('sitewarden-demo');
    expect(entry).toMatchObject({
      id: updated.json.updateId,
      fromVersion: '1.0.0',
      toVersion: '1.1.0',
      result: 'succeeded',
      reason: 'update-applied-site-unhealthy',
      restorePoint: { target: 'plugins/sitewarden-demo' },
    });
    expect(await inventoryPlugin('sitewarden-demo')).toMatchObject({ version: '1.1.0' });

    const rolledBack = await bed.t.call('POST', `/api/sites/${bed.siteId}/updates/history/${entry.id}/rollback`);
    expect(rolledBack.status, rolledBack.text).toBe(200);
    expect((await wordpressPlugins(bed.site))['sitewarden-demo/sitewarden-demo.php']?.Version).toBe('1.0.0');
    expect(await inventoryPlugin('sitewarden-demo')).toMatchObject({ version: '1.0.0' });
  });

  it('records a plain bulk update applied though its request failed, and the inventory shows it', async () => {
    await bed.t.services.sync.syncNow(bed.siteId);
    expect(await inventoryPlugin('sitewarden-demo')).toMatchObject({ version: '1.0.0', update: { version: '1.1.0' } });
    const queued = await withUpdateRequestsDying(async () => {
      const queued = await bed.t.call('POST', '/api/fleet/updates/apply', {
        json: { sites: [bed.siteId], items: [{ type: 'plugin', slug: 'sitewarden-demo' }], safe: false },
      });
      expect(queued.status, queued.text).toBe(202);
      await bed.t.services.bulkUpdates.idle();
      return queued;
    });
    expect((await wordpressPlugins(bed.site))['sitewarden-demo/sitewarden-demo.php']?.Version).toBe('1.1.0');
    const entry = await latestEntry('sitewarden-demo');
    expect(entry).toMatchObject({
      jobId: queued.json.job.id,
      fromVersion: '1.0.0',
      toVersion: '1.1.0',
      result: 'succeeded',
      reason: 'update-applied-site-unhealthy',
      restorePoint: { target: 'plugins/sitewarden-demo' },
    });
    expect(await inventoryPlugin('sitewarden-demo')).toMatchObject({ version: '1.1.0', update: null });

    const rolledBack = await bed.t.call('POST', `/api/sites/${bed.siteId}/updates/history/${entry.id}/rollback`);
    expect(rolledBack.status, rolledBack.text).toBe(200);
    expect((await wordpressPlugins(bed.site))['sitewarden-demo/sitewarden-demo.php']?.Version).toBe('1.0.0');
  });

  it('the standalone path reads versions on disk only from plugin main files and theme headers, with the secret', async () => {
    // A fresh rate window (30 requests a minute): the tests before used part of it.
    rmSync(join(bed.site.root, 'wp-content/sitewarden-rollback/rate.json'), { force: true });
    const sealed = await createSafeUpdatesRepository(bed.t.state).readSecret(bed.siteId);
    const secret = bed.t.services.secrets.open(sealed!);
    const version = async (target: unknown, withSecret = secret) => {
      const response = await fetch(`${bed.site.url}/wp-content/plugins/sitewarden-connector/sitewarden-rollback.php`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-sitewarden-rollback-secret': withSecret },
        body: JSON.stringify({ action: 'version', target }),
        signal: AbortSignal.timeout(30_000),
      });
      return { status: response.status, json: (await response.json()) as Record<string, unknown> };
    };
    expect(await version(`plugins/${FATAL_FILE}`)).toEqual({
      status: 200,
      json: { target: `plugins/${FATAL_FILE}`, version: versionOnDisk() },
    });
    const themes = join(bed.site.root, 'wp-content/themes');
    const theme = readdirSync(themes).find((name) => existsSync(join(themes, name, 'style.css')))!;
    const themeVersion = /Version:\s*(\S+)/.exec(readFileSync(join(themes, theme, 'style.css'), 'utf8'))?.[1];
    expect((await version(`themes/${theme}`)).json).toEqual({ target: `themes/${theme}`, version: themeVersion });
    expect((await version('plugins/missing/missing.php')).json).toMatchObject({ version: null });
    expect((await version(`plugins/${FATAL_FILE}`, 'wrong')).status).toBe(401);
    for (const target of [
      '../wp-config.php',
      'plugins/../../wp-config.php',
      'plugins/sitewarden-fatal/../../../wp-config.php',
      'plugins/sitewarden-fatal/readme.txt',
      'uploads/x.php',
      '/etc/passwd',
      'themes/../../wp-config.php',
      42,
    ])
      expect((await version(target)).status, String(target)).toBe(400);
  });
});
