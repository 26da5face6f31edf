import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { activePlugins, useConnectedSite, wordpressPlugins } from '../support/wordpress-state.js';

/**
 * WordPress 6.5+ plugin dependencies (`Requires Plugins`), on the newest real release:
 * sitewarden-addon (from the local mirror) requires sitewarden-demo and sitewarden-extra.
 */
const bed = useConnectedSite({ wordpress: 'newest' });

const plugins = (path = '') => `/api/sites/${bed.siteId}/plugins${path}`;
const ADDON = 'sitewarden-addon/sitewarden-addon.php';
const DEMO = 'sitewarden-demo/sitewarden-demo.php';

describe('plugin dependencies on WordPress 6.5', () => {
  it('refuses to activate a plugin whose required plugins are missing or inactive, naming them', async () => {
    const installed = await bed.t.call('POST', plugins('/install'), { json: { slug: 'sitewarden-addon' } });
    expect(installed.status, installed.text).toBe(201);

    const refused = await bed.t.call('POST', plugins('/sitewarden-addon/activate'));
    expect(refused.status, refused.text).toBe(409);
    expect(refused.json).toMatchObject({
      type: '/problems/plugin-dependencies-unmet',
      slug: 'sitewarden-addon',
      missing: ['sitewarden-demo', 'sitewarden-extra'],
    });
    expect(await activePlugins(bed.site)).not.toContain(ADDON);

    // Installed but inactive still counts as unmet.
    await bed.t.call('POST', plugins('/install'), { json: { slug: 'sitewarden-demo', activate: true } });
    await bed.t.call('POST', plugins('/install'), { json: { slug: 'sitewarden-extra' } });
    const stillRefused = await bed.t.call('POST', plugins('/sitewarden-addon/activate'));
    expect(stillRefused.status).toBe(409);
    expect(stillRefused.json.missing).toEqual(['sitewarden-extra']);

    await bed.t.call('POST', plugins('/sitewarden-extra/activate'));
    const activated = await bed.t.call('POST', plugins('/sitewarden-addon/activate'));
    expect(activated.status, activated.text).toBe(200);
    expect(activated.json.status).toBe('active');
    expect(await activePlugins(bed.site)).toContain(ADDON);
  });

  it('refuses to deactivate or delete a plugin an active plugin requires, unless forced', async () => {
    const refused = await bed.t.call('POST', plugins('/sitewarden-demo/deactivate'));
    expect(refused.status, refused.text).toBe(409);
    expect(refused.json).toMatchObject({
      type: '/problems/plugin-required-by',
      slug: 'sitewarden-demo',
      requiredBy: ['sitewarden-addon'],
    });
    expect(await activePlugins(bed.site)).toContain(DEMO);

    const forced = await bed.t.call('POST', plugins('/sitewarden-demo/deactivate?force=true'));
    expect(forced.status, forced.text).toBe(200);
    expect(forced.json.status).toBe('inactive');
    expect(await activePlugins(bed.site)).not.toContain(DEMO);

    const deleteRefused = await bed.t.call('DELETE', plugins('/sitewarden-demo'));
    expect(deleteRefused.status, deleteRefused.text).toBe(409);
    expect(deleteRefused.json).toMatchObject({
      type: '/problems/plugin-required-by',
      requiredBy: ['sitewarden-addon'],
    });
    expect(existsSync(join(bed.site.root, 'wp-content/plugins/sitewarden-demo'))).toBe(true);

    const deleted = await bed.t.call('DELETE', plugins('/sitewarden-demo?force=1'));
    expect(deleted.status, deleted.text).toBe(204);
    expect(existsSync(join(bed.site.root, 'wp-content/plugins/sitewarden-demo'))).toBe(false);
  });

  it('lets a plugin no active plugin requires go, as before', async () => {
    await bed.t.call('POST', plugins('/sitewarden-addon/deactivate'));
    const deactivated = await bed.t.call('POST', plugins('/sitewarden-extra/deactivate'));
    expect(deactivated.status, deactivated.text).toBe(200);
    const deleted = await bed.t.call('DELETE', plugins('/sitewarden-extra'));
    expect(deleted.status, deleted.text).toBe(204);
    expect(Object.keys(await wordpressPlugins(bed.site))).not.toContain('sitewarden-extra/sitewarden-extra.php');
  });

  it('keeps a plugin installed but inactive when installing with activate and its requirements are unmet', async () => {
    await bed.t.call('DELETE', plugins('/sitewarden-addon'));
    const refused = await bed.t.call('POST', plugins('/install'), {
      json: { slug: 'sitewarden-addon', activate: true },
    });
    expect(refused.status, refused.text).toBe(409);
    expect(refused.json).toMatchObject({
      type: '/problems/plugin-dependencies-unmet',
      missing: ['sitewarden-demo', 'sitewarden-extra'],
      installed: true,
    });
    expect(await wordpressPlugins(bed.site)).toHaveProperty([ADDON]);
    expect(await activePlugins(bed.site)).not.toContain(ADDON);
  });

  it('answers an install with the update the site knows of right after it', async () => {
    // A directory whose stable release lags its newest one: the install brings 1.0.0, 1.1.0 is on offer.
    writeFileSync(
      join(bed.site.root, 'wp-content/mu-plugins/stable-lags.php'),
      `<?php add_filter( 'plugins_api_result', static function ( $result, $action, $args ) {
        if ( 'plugin_information' === $action && 'sitewarden-demo' === $args->slug && is_object( $result ) ) {
          $result->version = '1.0.0';
          $result->download_link = $result->versions['1.0.0'];
        }
        return $result;
      }, 10, 3 );`,
    );
    const installed = await bed.t.call('POST', plugins('/install'), { json: { slug: 'sitewarden-demo' } });
    expect(installed.status, installed.text).toBe(201);
    expect(installed.json).toMatchObject({ slug: 'sitewarden-demo', version: '1.0.0', update: { version: '1.1.0' } });
  });
});
