import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NEWEST_RELEASE } from '../support/wordpress/index.js';
import { useConnectedSite } from '../support/wordpress-state.js';

/**
 * Debian's WordPress 6.1.9, in the site's own copy, updated by WordPress's Core_Upgrader to
 * real releases the loopback mirror offers (the @wp-playground/wordpress-builds zips,
 * repackaged as WordPress packages are).
 */
const bed = useConnectedSite({ wordpress: 'debian' });

const coreUpdate = (json?: unknown) =>
  bed.t.call('POST', `/api/sites/${bed.siteId}/core/update`, json === undefined ? {} : { json });

/** What WordPress itself reports, from a fresh PHP process. */
const wordpressSays = async () =>
  JSON.parse(
    await bed.site.php(`global $wp_version, $wp_db_version;
      echo wp_json_encode( array( 'version' => $wp_version, 'filesDbVersion' => (int) $wp_db_version, 'dbVersion' => (int) get_option( 'db_version' ) ) );`),
  ) as { version: string; filesDbVersion: number; dbVersion: number };

/** The restore points on the site's disk (wp-content/sitewarden-rollback/<id>/). */
const savedCopies = () => {
  const store = join(bed.site.root, 'wp-content/sitewarden-rollback');
  return existsSync(store) ? readdirSync(store).filter((name) => /^[0-9]{14}-[0-9a-f]{8}$/.test(name)) : [];
};

describe('WordPress core updates on a real site', () => {
  it('refuses a version WordPress does not offer, and answers no-update-available when nothing is offered', async () => {
    const nothingOffered = await coreUpdate();
    expect(nothingOffered.status, nothingOffered.text).toBe(409);
    expect(nothingOffered.json.type).toBe('/problems/no-update-available');

    await bed.site.php(`update_site_option( 'sitewarden_test_offer_core', 1 );`);
    const notOffered = await coreUpdate({ version: '6.0.1' });
    expect(notOffered.status, notOffered.text).toBe(409);
    expect(notOffered.json.type).toBe('/problems/core-version-not-offered');
    expect(notOffered.json.detail).toContain(NEWEST_RELEASE.version);

    const badInput = await coreUpdate({ version: '../../etc' });
    expect(badInput.status).toBe(400);
    expect((await wordpressSays()).version).toBe('6.1.9');
    expect(bed.t.logs.events('core.update_failed')).toEqual([]);
    // Each refusal came after the restore point was taken (tens of megabytes): it is discarded again.
    expect(savedCopies()).toEqual([]);
  });

  it('reports a site that cannot write its files as site-refused, logs core.update_failed and leaves core as it was', async () => {
    const config = join(bed.site.root, 'wp-config.php');
    const original = readFileSync(config, 'utf8');
    writeFileSync(config, original.replace("define( 'FS_METHOD', 'direct' );", "define( 'FS_METHOD', 'ftpext' );"));
    try {
      const refused = await coreUpdate({ version: NEWEST_RELEASE.version });
      expect(refused.status, refused.text).toBe(422);
      expect(refused.json.type).toBe('/problems/site-refused');
    } finally {
      writeFileSync(config, original);
    }
    expect((await wordpressSays()).version).toBe('6.1.9');
    expect(bed.t.logs.events('core.update_failed')).toEqual([
      expect.objectContaining({
        siteId: bed.siteId,
        fromVersion: '6.1.9',
        toVersion: NEWEST_RELEASE.version,
        reason: 'site-refused',
      }),
    ]);
  });

  it('answers site-operation-failed with WordPress’s own reason when its upgrader fails', async () => {
    // WordPress's own hook before a download: the package is as unreachable as a 404 would make it.
    const muPlugin = join(bed.site.root, 'wp-content/mu-plugins/failing-download.php');
    writeFileSync(
      muPlugin,
      `<?php add_filter( 'upgrader_pre_download', static function () { return new WP_Error( 'download_failed', 'Download failed.', 'Not Found' ); } );`,
    );
    try {
      const failed = await coreUpdate({ version: '6.2.6' });
      expect(failed.status, failed.text).toBe(502);
      expect(failed.json.type).toBe('/problems/site-operation-failed');
      expect(failed.json.detail).toContain('Download failed. Not Found');
    } finally {
      rmSync(muPlugin);
    }
    expect((await wordpressSays()).version).toBe('6.1.9');
    expect(bed.t.logs.events('core.update_failed').at(-1)).toEqual(
      expect.objectContaining({ toVersion: '6.2.6', reason: 'site-operation-failed' }),
    );
  });

  it('updates to the version asked for when WordPress offers it, not further', async () => {
    const updated = await coreUpdate({ version: '6.2.6' });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.json).toEqual({
      previousVersion: '6.1.9',
      version: '6.2.6',
      databaseUpgraded: true,
      // A plain core update takes the safe one's restore point first; its history entry rolls it back
      // (test/wordpress-updates/plain-core-rollback.integration.test.ts).
      rollback: {
        available: true,
        updateId: expect.any(String),
        restorePoint: { id: expect.any(String), target: 'core' },
      },
    });
    expect((await wordpressSays()).version).toBe('6.2.6');
    const history = await bed.t.call('GET', `/api/sites/${bed.siteId}/updates/history?type=core&limit=1`);
    expect(history.json.items[0]).toMatchObject({
      id: updated.json.rollback.updateId,
      toVersion: '6.2.6',
      result: 'succeeded',
      restorePoint: updated.json.rollback.restorePoint,
    });
  });

  it('updates to the newest release offered, with its database upgrade, and the site keeps working', async () => {
    const before = await wordpressSays();
    const updated = await coreUpdate();
    expect(updated.status, updated.text).toBe(200);
    expect(updated.json).toEqual({
      previousVersion: '6.2.6',
      version: NEWEST_RELEASE.version,
      databaseUpgraded: true,
      rollback: expect.objectContaining({ available: true }),
    });

    const after = await wordpressSays();
    expect(after.version).toBe(NEWEST_RELEASE.version);
    expect(after.filesDbVersion).toBeGreaterThan(before.filesDbVersion);
    expect(after.dbVersion).toBe(after.filesDbVersion);
    expect(readFileSync(join(bed.site.root, 'wp-includes/version.php'), 'utf8')).toContain(
      `$wp_version = '${NEWEST_RELEASE.version}';`,
    );
    // A playground build has no static assets: the site keeps 6.1.9's and lacks those new since (their PHP is there).
    expect(existsSync(join(bed.site.root, 'wp-includes/js/dist/interactivity.min.js'))).toBe(false);
    expect(existsSync(join(bed.site.root, 'wp-includes/interactivity-api/class-wp-interactivity-api.php'))).toBe(true);
    expect(existsSync(join(bed.site.root, 'wp-includes/css/dashicons.min.css'))).toBe(true);
    // The new core serves the REST API the daemon uses, and knows plugin dependencies.
    const plugins = await bed.t.call('GET', `/api/sites/${bed.siteId}/plugins`);
    expect(plugins.status, plugins.text).toBe(200);
    expect(await bed.site.php(`echo class_exists( 'WP_Plugin_Dependencies' ) ? 'yes' : 'no';`)).toBe('yes');
    expect(bed.t.logs.events('core.updated').at(-1)).toEqual(
      expect.objectContaining({
        siteId: bed.siteId,
        fromVersion: '6.2.6',
        toVersion: NEWEST_RELEASE.version,
        databaseUpgraded: true,
      }),
    );

    const again = await coreUpdate();
    expect(again.status).toBe(409);
    expect(again.json.type).toBe('/problems/no-update-available');
  });
});
