import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { activePlugins, installFixturePlugin, useConnectedSite, wordpressPlugins } from '../support/wordpress-state.js';
import { signIn } from '../dashboard/signed-in.js';

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

    await bed.t.call('POST', `/api/sites/${bed.siteId}/plugins/sitewarden-fatal/update`);
    // The new version fatals on every request: WordPress answers 500, so does Sitewarden's way through it.
    expect(await home()).toBe(500);
    expect(versionOnDisk()).toBe('1.1.0');

    const entry = await latestEntry('sitewarden-fatal');
    expect(entry).toMatchObject({
      type: 'plugin',
      slug: 'sitewarden-fatal',
      fromVersion: '1.0.0',
      restorePoint: { id: expect.any(String), target: 'plugins/sitewarden-fatal' },
      rollbackOf: null,
    });

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
    expect(entry).toMatchObject({ trigger: { kind: 'user' }, restorePoint: expect.any(Object) });
    const sitePage = await (await alice.get(`/sites/${bed.siteId}`)).text();
    const link = `/sites/${bed.siteId}/updates/history/${entry.id}/rollback`;
    expect(sitePage).toContain(`href="${link}"`);

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
});
