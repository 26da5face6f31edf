import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { signIn } from '../dashboard/signed-in.js';
import { useConnectedSite } from '../support/wordpress-state.js';

/**
 * A plain core update first takes the restore point a safe core update takes (wp-admin, wp-includes
 * and the root PHP files, through the connector); when the new core breaks the site, its history
 * entry puts the previous core back through the standalone rollback path, without WordPress.
 */
const bed = useConnectedSite({ wordpress: 'debian' });

/** WordPress's own version file on disk: readable whatever WordPress does. */
const versionOnDisk = () =>
  /\$wp_version = '([^']+)';/.exec(readFileSync(join(bed.site.root, 'wp-includes/version.php'), 'utf8'))?.[1];

async function home(): Promise<number> {
  const response = await fetch(`${bed.site.url}/`, { signal: AbortSignal.timeout(30_000) });
  await response.arrayBuffer();
  return response.status;
}

describe('rolling back a plain core update', { timeout: 300_000 }, () => {
  it('takes a restore point first, and its history entry puts the old core back while WordPress fatals', async () => {
    await bed.site.php(`update_site_option( 'sitewarden_test_offer_core', 1 );`);
    const updated = await bed.t.call('POST', `/api/sites/${bed.siteId}/core/update`, { json: { version: '6.2.6' } });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.json).toMatchObject({
      previousVersion: '6.1.9',
      version: '6.2.6',
      rollback: { available: true, updateId: expect.any(String), restorePoint: { target: 'core' } },
    });
    expect(versionOnDisk()).toBe('6.2.6');

    // The new core breaks the site: every WordPress request ends in a fatal error.
    appendFileSync(join(bed.site.root, 'wp-settings.php'), "\nthrow new Error( 'broken by the new core' );\n");
    expect(await home()).toBe(500);
    await expect(bed.site.php('echo 1;')).rejects.toThrow();

    const entryId = updated.json.rollback.updateId as string;
    // The site page's update history offers Roll back for it, and its confirmation page names core.
    const alice = await signIn(bed.t);
    const link = `/sites/${bed.siteId}/updates/history/${entryId}/rollback`;
    expect(await (await alice.get(`/sites/${bed.siteId}`)).text()).toContain(`href="${link}"`);
    expect(await (await alice.get(link)).text()).toContain('Puts back the copy of WordPress core');
    const rolledBack = await bed.t.call('POST', `/api/sites/${bed.siteId}/updates/history/${entryId}/rollback`);
    expect(rolledBack.status, rolledBack.text).toBe(200);
    expect(rolledBack.json).toMatchObject({
      entry: { id: entryId, type: 'core', fromVersion: '6.1.9', toVersion: '6.2.6' },
      rollback: { rollbackOf: entryId, result: 'succeeded', fromVersion: '6.2.6', toVersion: '6.1.9' },
    });
    // What WordPress holds: the old core's files, and WordPress itself says so.
    expect(versionOnDisk()).toBe('6.1.9');
    expect(readFileSync(join(bed.site.root, 'wp-settings.php'), 'utf8')).not.toContain('broken by the new core');
    expect(await bed.site.php('global $wp_version; echo $wp_version;')).toBe('6.1.9');
    expect(await home()).toBe(200);
    // The inventory is read again once WordPress answers.
    expect((await bed.t.services.sitesRepository.findById(bed.siteId))?.wordpressVersion).toBe('6.1.9');
    // As after a safe core update's rollback, update policies hold the version rolled back from.
    expect(bed.t.logs.events('update.rolled-back')).toContainEqual(
      expect.objectContaining({
        type: 'core',
        slug: 'wordpress',
        toVersion: '6.2.6',
        reason: 'rolled-back-on-request',
      }),
    );
    const holds = await bed.t.call('GET', '/api/update-policies/holds');
    expect(holds.status, holds.text).toBe(200);
    expect(JSON.stringify(holds.json)).toContain('"version":"6.2.6"');

    const again = await bed.t.call('POST', `/api/sites/${bed.siteId}/updates/history/${entryId}/rollback`);
    expect(again.status).toBe(409);
    expect(again.json.type).toContain('already-rolled-back');
  });

  it('goes on without a restore point when none can be taken, and says why', async () => {
    // A connector older than restore points: its rollback/save route is missing.
    const muPlugin = join(bed.site.root, 'wp-content/mu-plugins/no-restore-points.php');
    mkdirSync(dirname(muPlugin), { recursive: true });
    writeFileSync(
      muPlugin,
      `<?php add_filter( 'rest_pre_dispatch', static function ( $result, $server, $request ) {
        return '/sitewarden/v1/rollback/save' === $request->get_route()
          ? new WP_Error( 'rest_no_route', 'No route was found matching the URL and request method.', array( 'status' => 404 ) )
          : $result;
      }, 10, 3 );`,
    );
    try {
      const updated = await bed.t.call('POST', `/api/sites/${bed.siteId}/core/update`, { json: { version: '6.2.6' } });
      expect(updated.status, updated.text).toBe(200);
      expect(updated.json.rollback).toEqual({
        available: false,
        reason: expect.stringContaining('rollback-path-unavailable'),
      });
    } finally {
      rmSync(muPlugin);
    }
    expect(versionOnDisk()).toBe('6.2.6');
    const history = await bed.t.call('GET', `/api/sites/${bed.siteId}/updates/history?type=core&limit=1`);
    expect(history.json.items[0]).toMatchObject({ toVersion: '6.2.6', result: 'succeeded', restorePoint: null });
    const refused = await bed.t.call(
      'POST',
      `/api/sites/${bed.siteId}/updates/history/${history.json.items[0].id}/rollback`,
    );
    expect(refused.status).toBe(409);
    expect(refused.json.type).toContain('no-restore-point');
  });
});
