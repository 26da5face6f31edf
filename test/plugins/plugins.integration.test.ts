import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestSite, type TestSite } from '../support/wordpress/index.js';
import { createTestApp } from '../support/test-app.js';
import {
  activePlugins,
  connectSite,
  installFixturePlugin,
  installSingleFilePlugin,
  useConnectedSite,
  wordpressPlugins,
} from '../support/wordpress-state.js';
import { CONNECTOR_VERSION } from '../support/connector-version.js';

const bed = useConnectedSite();

const plugins = (path = '') => `/api/sites/${bed.siteId}/plugins${path}`;

describe('plugins on a real site', () => {
  it('lists what WordPress has, with documented slugs for folder and single-file plugins', async () => {
    installSingleFilePlugin(bed.site, 'hello-sitewarden.php', 'Hello Sitewarden');
    const response = await bed.t.call('GET', plugins(), { token: bed.t.readToken });
    expect(response.status).toBe(200);
    const onDisk = Object.keys(await wordpressPlugins(bed.site)).sort();
    expect(response.json.items.map((plugin: { file: string }) => plugin.file).sort()).toEqual(onDisk);
    expect(response.json.items).toContainEqual(
      expect.objectContaining({
        slug: 'hello-sitewarden',
        file: 'hello-sitewarden.php',
        name: 'Hello Sitewarden',
        version: '0.1.0',
        status: 'inactive',
        update: null,
      }),
    );
    expect(response.json.items).toContainEqual(
      expect.objectContaining({ slug: 'sitewarden-connector', status: 'active' }),
    );
    const details = await bed.t.call('GET', `/api/sites/${bed.siteId}`);
    expect(details.json.versions.connector).toBe(CONNECTOR_VERSION);
    expect(details.json.versions.wordpress).toMatch(/^6\./);
  });

  it('installs from the plugin directory, and refuses a second install or an unknown slug', async () => {
    const installed = await bed.t.call('POST', plugins('/install'), { json: { slug: 'sitewarden-demo' } });
    expect(installed.status, installed.text).toBe(201);
    expect(installed.json).toMatchObject({ slug: 'sitewarden-demo', version: '1.1.0', status: 'inactive' });
    expect((await wordpressPlugins(bed.site))['sitewarden-demo/sitewarden-demo.php']?.Version).toBe('1.1.0');

    const again = await bed.t.call('POST', plugins('/install'), { form: { slug: 'sitewarden-demo' } });
    expect(again.status).toBe(409);
    expect(again.json.type).toBe('/problems/plugin-already-installed');

    const unknown = await bed.t.call('POST', plugins('/install?slug=no-such-plugin-anywhere'));
    expect(unknown.status).toBe(422);
    expect(unknown.json.type).toBe('/problems/plugin-not-in-directory');
    expect(existsSync(join(bed.site.root, 'wp-content/plugins/no-such-plugin-anywhere'))).toBe(false);

    const inventory = await bed.t.call('GET', `/api/sites/${bed.siteId}`);
    expect(inventory.json.plugins).toContainEqual(
      expect.objectContaining({ slug: 'sitewarden-demo', version: '1.1.0' }),
    );
  });

  it('activates and deactivates, as WordPress records it', async () => {
    const activated = await bed.t.call('POST', plugins('/sitewarden-demo/activate'));
    expect(activated.status, activated.text).toBe(200);
    expect(activated.json.status).toBe('active');
    expect(await activePlugins(bed.site)).toContain('sitewarden-demo/sitewarden-demo.php');
    expect((await bed.t.call('POST', plugins('/sitewarden-demo/activate'))).json.status).toBe('active');

    const deactivated = await bed.t.call('POST', plugins('/sitewarden-demo/deactivate'));
    expect(deactivated.json.status).toBe('inactive');
    expect(await activePlugins(bed.site)).not.toContain('sitewarden-demo/sitewarden-demo.php');
  });

  it('logs plugin.update_failed when the site cannot write its files, and keeps the old release', async () => {
    await bed.t.call('DELETE', plugins('/sitewarden-demo'));
    installFixturePlugin(bed.site, 'sitewarden-demo', '1.0.0');
    await bed.t.services.sync.syncNow(bed.siteId);
    const config = join(bed.site.root, 'wp-config.php');
    const original = readFileSync(config, 'utf8');
    writeFileSync(config, original.replace("define( 'FS_METHOD', 'direct' );", "define( 'FS_METHOD', 'ftpext' );"));
    try {
      const response = await bed.t.call('POST', plugins('/sitewarden-demo/update'));
      expect(response.status).toBe(422);
      expect(response.json.type).toBe('/problems/site-refused');
    } finally {
      writeFileSync(config, original);
    }
    expect((await wordpressPlugins(bed.site))['sitewarden-demo/sitewarden-demo.php']?.Version).toBe('1.0.0');
    expect(bed.t.logs.events('plugin.update_failed')).toEqual([
      expect.objectContaining({
        level: 'warn',
        siteId: bed.siteId,
        url: bed.site.url,
        slug: 'sitewarden-demo',
        fromVersion: '1.0.0',
        toVersion: '1.1.0',
        reason: 'site-refused',
        message: expect.stringContaining('cannot write its files'),
      }),
    ]);
    // WordPress would otherwise trust its recent update check for the next test's reinstall.
    await bed.site.php("delete_site_transient('update_plugins');");
  });

  it('updates an old release to the newest the directory offers, keeping it active', async () => {
    await bed.t.call('DELETE', plugins('/sitewarden-demo'));
    installFixturePlugin(bed.site, 'sitewarden-demo', '1.0.0');
    await bed.t.call('POST', plugins('/sitewarden-demo/activate'));
    await bed.t.services.sync.syncNow(bed.siteId);

    const listed = await bed.t.call('GET', plugins());
    expect(listed.json.items).toContainEqual(
      expect.objectContaining({ slug: 'sitewarden-demo', version: '1.0.0', update: { version: '1.1.0' } }),
    );

    const updated = await bed.t.call('POST', plugins('/sitewarden-demo/update'));
    expect(updated.status, updated.text).toBe(200);
    expect(updated.json).toMatchObject({ slug: 'sitewarden-demo', version: '1.1.0', status: 'active', update: null });
    expect((await wordpressPlugins(bed.site))['sitewarden-demo/sitewarden-demo.php']?.Version).toBe('1.1.0');
    expect(await activePlugins(bed.site)).toContain('sitewarden-demo/sitewarden-demo.php');

    const noUpdate = await bed.t.call('POST', plugins('/sitewarden-demo/update'));
    expect(noUpdate.status).toBe(409);
    expect(noUpdate.json.type).toBe('/problems/no-update-available');
    // Nothing to update is not a failed update.
    expect(bed.t.logs.events('plugin.update_failed')).toHaveLength(1);
  });

  it('deletes an inactive plugin, and refuses to delete an active one', async () => {
    const refused = await bed.t.call('DELETE', plugins('/sitewarden-demo'));
    expect(refused.status).toBe(409);
    expect(refused.json.type).toBe('/problems/plugin-active');
    expect(existsSync(join(bed.site.root, 'wp-content/plugins/sitewarden-demo'))).toBe(true);

    await bed.t.call('POST', plugins('/sitewarden-demo/deactivate'));
    expect((await bed.t.call('DELETE', plugins('/sitewarden-demo'))).status).toBe(204);
    expect(existsSync(join(bed.site.root, 'wp-content/plugins/sitewarden-demo'))).toBe(false);
    expect(await wordpressPlugins(bed.site)).not.toHaveProperty('sitewarden-demo/sitewarden-demo.php');
    const details = await bed.t.call('GET', `/api/sites/${bed.siteId}`);
    expect(details.json.plugins.map((plugin: { slug: string }) => plugin.slug)).not.toContain('sitewarden-demo');
  });

  it('answers distinct problems for unknown plugins, unknown sites and bad slugs', async () => {
    for (const path of ['/nothing-here/activate', '/nothing-here/update']) {
      const response = await bed.t.call('POST', plugins(path));
      expect(response.status, path).toBe(404);
      expect(response.json.type).toBe('/problems/plugin-not-found');
    }
    expect((await bed.t.call('DELETE', plugins('/nothing-here'))).json.type).toBe('/problems/plugin-not-found');
    const unknownSite = await bed.t.call('GET', '/api/sites/site_00000000000000000000000000/plugins');
    expect(unknownSite.status).toBe(404);
    expect(unknownSite.json.type).toBe('/problems/site-not-found');
    const badSlug = await bed.t.call('POST', plugins('/install'), { json: { slug: '../../wp-config' } });
    expect(badSlug.status).toBe(400);
    expect(badSlug.json.errors[0].field).toBe('slug');
  });

  it('reports the site refusing when the user has lost its capabilities', async () => {
    const { username, applicationPassword } = await bed.site.createUser('administrator');
    const other = createTestApp();
    try {
      const connected = await other.call('POST', '/api/sites', {
        json: { url: bed.site.url, username, applicationPassword },
      });
      await bed.site.php(`$user = get_user_by('login', ${JSON.stringify(username)}); $user->set_role('editor');`);
      const response = await other.call('POST', `/api/sites/${connected.json.id}/plugins/akismet/activate`);
      expect(response.status).toBe(422);
      expect(response.json.type).toBe('/problems/site-refused');
      expect(await activePlugins(bed.site)).not.toContain('akismet/akismet.php');
    } finally {
      await other.close();
    }
  });
});

describe('plugins on a site without the connector', () => {
  let bare: TestSite;
  let bareId: string;
  beforeAll(async () => {
    bare = await createTestSite();
    bareId = await connectSite(bed.t, bare);
  });
  afterAll(async () => {
    await bare?.stop();
  });

  it('still lists, installs and activates through core REST', async () => {
    const details = await bed.t.call('GET', `/api/sites/${bareId}`);
    expect(details.json.versions.connector).toBeNull();
    const installed = await bed.t.call('POST', `/api/sites/${bareId}/plugins/install`, {
      json: { slug: 'sitewarden-extra', activate: true },
    });
    expect(installed.status, installed.text).toBe(201);
    expect(installed.json.status).toBe('active');
    expect(await activePlugins(bare)).toContain('sitewarden-extra/sitewarden-extra.php');
  });

  it('says how to install the connector when an update needs it', async () => {
    const response = await bed.t.call('POST', `/api/sites/${bareId}/plugins/akismet/update`);
    expect(response.status).toBe(422);
    expect(response.json.type).toBe('/problems/connector-missing');
    expect(response.json.detail).toContain('/api/connector.zip');
  });

  it('reports a site that went away', async () => {
    await bare.stop();
    const response = await bed.t.call('GET', `/api/sites/${bareId}/plugins`);
    expect(response.status).toBe(502);
    expect(response.json.type).toBe('/problems/site-unreachable');

    // Disconnecting still works; the application password left on the site is reported.
    expect((await bed.t.call('DELETE', `/api/sites/${bareId}`)).status).toBe(204);
    expect(bed.t.logs.events('site.credential_revoke_failed')).toEqual([
      expect.objectContaining({ siteId: bareId, reason: expect.stringContaining('refused') }),
    ]);
    expect(bed.t.logs.events('site.disconnected')).toContainEqual(
      expect.objectContaining({ siteId: bareId, credentialRevoked: false }),
    );
  });
});
