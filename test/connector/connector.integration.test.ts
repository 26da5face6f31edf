import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { logInIfAsked, withBrowserPage } from '../support/browser.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestSite, type TestSite, type TestUser } from '../support/wordpress/index.js';
import { createTestApp } from '../support/test-app.js';
import { CONNECTOR_VERSION } from '../support/connector-version.js';

/**
 * The Sitewarden connector (connector/) on real WordPress 6.1 sites: installed the
 * way an operator installs it, then every sitewarden/v1 route called as the daemon
 * calls it, with an application password, and the outcome checked in WordPress itself.
 */

const PROJECT_ROOT = join(import.meta.dirname, '../..');
const FIXTURES = join(import.meta.dirname, '../support/fixtures/directory');
const CONNECTOR = 'sitewarden-connector/sitewarden-connector.php';
const DEMO = 'sitewarden-demo/sitewarden-demo.php';
const EXTRA = 'sitewarden-extra/sitewarden-extra.php';

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function call(
  site: TestSite,
  user: TestUser | null,
  method: 'GET' | 'POST',
  route: string,
  json?: unknown,
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (user)
    headers['authorization'] =
      `Basic ${Buffer.from(`${user.username}:${user.applicationPassword}`).toString('base64')}`;
  if (json !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${site.url}/wp-json/sitewarden/v1/${route}`, {
    method,
    headers,
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) as Record<string, unknown> };
  } catch {
    throw new Error(
      `${method} ${route} answered ${response.status} with something other than JSON:\n${text.slice(0, 2000)}`,
    );
  }
}

/** What WordPress itself says is installed and active. */
async function pluginState(site: TestSite, file: string): Promise<{ version: string | null; active: boolean }> {
  return JSON.parse(
    await site.php(`require_once ABSPATH . 'wp-admin/includes/plugin.php';
     $plugins = get_plugins();
     echo wp_json_encode( array(
       'version' => isset( $plugins['${file}'] ) ? $plugins['${file}']['Version'] : null,
       'active'  => is_plugin_active( '${file}' ),
     ) );`),
  ) as { version: string | null; active: boolean };
}

const themeVersionOnDisk = (site: TestSite, stylesheet: string) =>
  /^\s*Version:\s*(\S+)/m.exec(
    readFileSync(join(site.root, 'wp-content/themes', stylesheet, 'style.css'), 'utf8'),
  )?.[1];

function copyPlugin(site: TestSite, from: string, slug: string) {
  cpSync(from, join(site.root, 'wp-content/plugins', slug), { recursive: true });
}

async function activatePlugin(site: TestSite, file: string) {
  await site.php(`
    require_once ABSPATH . 'wp-admin/includes/plugin.php';
    $result = activate_plugin( '${file}' );
    if ( is_wp_error( $result ) ) { fwrite( STDERR, $result->get_error_message() ); exit( 1 ); }`);
}

function packConnector(): string {
  const zip = join(mkdtempSync(join(tmpdir(), 'sitewarden-connector-zip-')), 'sitewarden-connector.zip');
  execFileSync(process.execPath, [join(PROJECT_ROOT, 'scripts/pack-connector.mjs'), zip], { stdio: 'pipe' });
  return zip;
}

/** An operator's way in: log in to wp-admin, Plugins → Add New → Upload Plugin, then "Activate Plugin". */
function uploadThroughWpAdmin(site: TestSite, zipPath: string): Promise<string> {
  return withBrowserPage(async (page) => {
    await page.goto(`${site.url}/wp-admin/plugin-install.php?tab=upload`);
    await logInIfAsked(page, site);
    await page.setInputFiles('#pluginzip', zipPath);
    await Promise.all([page.waitForURL(/update\.php\?action=upload-plugin/), page.click('#install-plugin-submit')]);
    const installed = await page.locator('.wrap').innerText();

    await Promise.all([page.waitForURL(/plugins\.php/), page.getByRole('link', { name: 'Activate Plugin' }).click()]);
    return `${installed}\n${await page.locator('.wrap').innerText()}`;
  });
}

describe('Sitewarden connector', () => {
  let uploaded: TestSite;
  let site: TestSite;
  let editor: TestUser;
  let subscriber: TestUser;

  beforeAll(async () => {
    [uploaded, site] = await Promise.all([createTestSite(), createTestSite()]);

    // The quick way in for the route tests; the upload test covers the operator's way.
    cpSync(join(PROJECT_ROOT, 'connector'), join(site.root, 'wp-content/plugins/sitewarden-connector'), {
      recursive: true,
    });
    await activatePlugin(site, CONNECTOR);

    // Old releases, as if installed long ago: demo 1.0.0 active, "extra" inactive and made to look old.
    copyPlugin(site, join(FIXTURES, 'plugins/sitewarden-demo/1.0.0/sitewarden-demo'), 'sitewarden-demo');
    await activatePlugin(site, DEMO);
    copyPlugin(site, join(FIXTURES, 'plugins/sitewarden-extra/2.0.0/sitewarden-extra'), 'sitewarden-extra');
    const extraMain = join(site.root, 'wp-content/plugins', EXTRA);
    writeFileSync(extraMain, readFileSync(extraMain, 'utf8').replace('Version: 2.0.0', 'Version: 1.5.0'));
    cpSync(
      join(FIXTURES, 'themes/sitewarden-demo-theme/1.0.0/sitewarden-demo-theme'),
      join(site.root, 'wp-content/themes/sitewarden-demo-theme'),
      {
        recursive: true,
      },
    );

    [editor, subscriber] = await Promise.all([site.createUser('editor'), site.createUser('subscriber')]);
  });

  afterAll(async () => {
    await Promise.all([uploaded?.stop(), site?.stop()]);
  });

  it('installs from the packed zip through wp-admin’s Upload Plugin form', async () => {
    const zip = packConnector();
    expect(
      execFileSync('unzip', ['-Z1', zip], { encoding: 'utf8' })
        .trim()
        .split('\n')
        .every((name) => name.startsWith('sitewarden-connector/')),
    ).toBe(true);

    const pages = await uploadThroughWpAdmin(uploaded, zip);

    expect(pages).toContain('Plugin installed successfully.');
    expect(await uploaded.option('active_plugins')).toContain(CONNECTOR);
    const info = await call(uploaded, uploaded.admin, 'GET', 'info');
    expect(info.body).toMatchObject({ connector: CONNECTOR_VERSION });
    // The daemon sees it too: the site's details show the connector's version.
    const daemon = createTestApp();
    try {
      const { username, applicationPassword } = uploaded.admin;
      const connected = await daemon.call('POST', '/api/sites', {
        json: { url: uploaded.url, username, applicationPassword },
      });
      expect(connected.status, connected.text).toBe(201);
      expect(connected.json.versions).toMatchObject({
        connector: CONNECTOR_VERSION,
        wordpress: expect.stringMatching(/^6\./),
        php: expect.stringMatching(/^\d+\.\d+/),
      });
    } finally {
      await daemon.close();
    }
    // Nothing to update gives JSON objects, not arrays.
    const updates = await call(uploaded, uploaded.admin, 'GET', 'updates?refresh=1');
    expect(updates.body['plugins']).toEqual({});
  });

  it('lets WordPress check again when it has no answer yet, as a wp-admin page load would', async () => {
    await uploaded.php(`delete_site_transient( 'update_plugins' ); delete_site_transient( 'update_themes' );`);
    const before = Date.now();

    const { status, body } = await call(uploaded, uploaded.admin, 'GET', 'updates');

    expect(status).toBe(200);
    expect(Date.parse(body['checkedAt'] as string)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(body['themes']).toHaveProperty('twentytwentyone');
  });

  it('explains that it cannot write files when WordPress would need FTP credentials, and changes nothing', async () => {
    const config = join(uploaded.root, 'wp-config.php');
    writeFileSync(
      config,
      readFileSync(config, 'utf8').replace("define( 'FS_METHOD', 'direct' );", "define( 'FS_METHOD', 'ftpext' );"),
    );
    const offered = await call(uploaded, uploaded.admin, 'GET', 'updates?refresh=1');
    expect(offered.body['themes']).toHaveProperty('twentytwentyone');
    const version = themeVersionOnDisk(uploaded, 'twentytwentyone');

    expect((await call(uploaded, uploaded.admin, 'GET', 'info')).body['filesystem']).toBe('ftpext');
    for (const route of ['themes/update', 'themes/delete']) {
      const { status, body } = await call(uploaded, uploaded.admin, 'POST', route, { stylesheet: 'twentytwentyone' });
      expect([route, status, body['code']]).toEqual([route, 500, 'sitewarden_filesystem_unavailable']);
      expect(body['message']).toContain('FTP');
    }
    expect(themeVersionOnDisk(uploaded, 'twentytwentyone')).toBe(version);
  });

  it('describes the site and what the caller may do', async () => {
    const { status, body } = await call(site, site.admin, 'GET', 'info');

    expect(status).toBe(200);
    expect(body).toEqual({
      connector: CONNECTOR_VERSION,
      wordpress: await site.php(`echo get_bloginfo( 'version' );`),
      php: await site.php('echo PHP_VERSION;'),
      multisite: false,
      filesystem: 'direct',
      capabilities: {
        update_plugins: true,
        update_themes: true,
        switch_themes: true,
        delete_themes: true,
        install_themes: true,
        install_plugins: true,
        activate_plugins: true,
        delete_plugins: true,
      },
      features: [
        'updates',
        'plugins/update',
        'themes',
        'backups',
        'restore',
        'plugins/status',
        'core',
        'translations',
        'inventory',
        'rollback',
        'updates/expected-version',
        'admin-login',
        'themes/install',
      ],
      timezone: { string: await site.php(`echo get_option( 'timezone_string' );`), gmtOffset: expect.any(Number) },
      database: { type: 'mariadb', version: expect.stringMatching(/^\d+\.\d+\.\d+$/) },
    });
    expect(body['wordpress']).toMatch(/^6\.\d+\.\d+$/);
  });

  it('lists the updates the plugin directory offers, checking afresh on refresh=1', async () => {
    const { status, body } = await call(site, site.admin, 'GET', 'updates?refresh=1');

    expect(status).toBe(200);
    expect(body['plugins']).toEqual({
      [DEMO]: { slug: 'sitewarden-demo', version: '1.0.0', newVersion: '1.1.0' },
      [EXTRA]: { slug: 'sitewarden-extra', version: '1.5.0', newVersion: '2.0.0' },
    });
    expect(body['themes']).toEqual({
      twentytwentyone: { version: themeVersionOnDisk(site, 'twentytwentyone'), newVersion: '99.0.0' },
      'sitewarden-demo-theme': { version: '1.0.0', newVersion: '1.1.0' },
    });
    expect(Math.abs(Date.parse(String(body['checkedAt'])) - Date.now())).toBeLessThan(60_000);
    // Since 1.4.0: no plugin requirements (WordPress before 6.5 does not read `Requires Plugins`),
    // and the WordPress releases the mirror offers this 6.1 site once the test bed offers core.
    expect(body['requires']).toEqual({});
    expect(body['translations']).toEqual(expect.any(Array));
    expect(body['core']).toEqual([]);

    // Without refresh, nothing forces a check: the offers are the last check's. WordPress records which plugin
    // versions a check covered only when it checks again within its interval, so the first read after a forced check
    // lets it check once more (in the next second, `checkedAt` moves with it); from then on the check stands.
    const plain = (await call(site, site.admin, 'GET', 'updates')).body;
    expect(plain).toEqual({ ...body, checkedAt: expect.any(String) });
    expect(Date.parse(String(plain['checkedAt']))).toBeGreaterThanOrEqual(Date.parse(String(body['checkedAt'])));
    // A second later, so that a check made again would show in the time WordPress stamps on it.
    const pluginsCheckedAt = () => site.php(`echo get_site_transient( 'update_plugins' )->last_checked;`);
    const checked = await pluginsCheckedAt();
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await call(site, site.admin, 'GET', 'updates')).body).toEqual(plain);
    expect(await pluginsCheckedAt()).toBe(checked);

    await site.php(`update_site_option( 'sitewarden_test_offer_core', 1 );`);
    try {
      const offered = await call(site, site.admin, 'GET', 'updates?refresh=1');
      // The mirror offers 6.5.5; WordPress offers no release it already runs (the version matrix's newest).
      const running = await site.php('global $wp_version; echo $wp_version;');
      if (running === '6.5.5') expect(offered.body['core']).toEqual([]);
      else expect(offered.body['core']).toContainEqual({ version: '6.5.5' });
    } finally {
      await site.php(`delete_site_option( 'sitewarden_test_offer_core' ); delete_site_transient( 'update_core' );`);
    }
  });

  it('refuses every route to users without the capability, and changes nothing', async () => {
    const snapshot = async () => ({
      demo: await pluginState(site, DEMO),
      twentytwentyone: themeVersionOnDisk(site, 'twentytwentyone'),
      stylesheet: await site.option('stylesheet'),
      themes: readdirSync(join(site.root, 'wp-content/themes')).sort(),
    });
    const before = await snapshot();
    const routes: Array<['GET' | 'POST', string, unknown?]> = [
      ['GET', 'info'],
      ['GET', 'updates?refresh=1'],
      ['POST', 'plugins/update', { plugin: DEMO }],
      ['POST', 'themes/update', { stylesheet: 'twentytwentyone' }],
      ['POST', 'themes/activate', { stylesheet: 'twentytwentyone' }],
      ['POST', 'themes/delete', { stylesheet: 'twentytwentyone' }],
    ];
    const callers: Array<[string, TestUser | null, number]> = [
      ['editor', editor, 403],
      ['subscriber', subscriber, 403],
      ['nobody', null, 401],
    ];

    for (const [method, route, json] of routes) {
      for (const [who, user, expected] of callers) {
        const { status, body } = await call(site, user, method, route, json);
        expect({ route, who, status, code: body['code'] }).toEqual({
          route,
          who,
          status: expected,
          code: 'rest_forbidden',
        });
      }
    }

    expect(await snapshot()).toEqual(before);
  });

  it('rejects plugin files and theme names that could leave wp-content', async () => {
    const attempts: Array<[string, Record<string, string>]> = [
      ['plugins/update', { plugin: '../../etc' }],
      ['plugins/update', { plugin: '/etc/passwd' }],
      ['plugins/update', { plugin: 'a/b/c.php' }],
      ['plugins/update', { plugin: 'sitewarden-demo\\sitewarden-demo.php' }],
      ['themes/update', { stylesheet: '../../etc' }],
      ['themes/activate', { stylesheet: 'twentytwentyone/..' }],
      ['themes/delete', { stylesheet: '..' }],
      ['themes/delete', { stylesheet: 'twenty\u0000' }],
    ];
    for (const [route, json] of attempts) {
      const { status, body } = await call(site, site.admin, 'POST', route, json);
      expect({ json, status, code: body['code'] }).toEqual({ json, status: 400, code: 'rest_invalid_param' });
    }
    const missing = await call(site, site.admin, 'POST', 'themes/delete', {});
    expect([missing.status, missing.body['code']]).toEqual([400, 'rest_missing_callback_param']);
  });

  it('updates an active plugin and keeps it active', async () => {
    const { status, body } = await call(site, site.admin, 'POST', 'plugins/update', { plugin: DEMO });

    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).toEqual({ plugin: DEMO, previousVersion: '1.0.0', version: '1.1.0', active: true });
    expect(await pluginState(site, DEMO)).toEqual({ version: '1.1.0', active: true });
    expect(await site.option('active_plugins')).toContain(DEMO);
    expect(await fetch(site.url).then((page) => page.text())).toContain('sitewarden-demo 1.1.0');
  });

  it('updates only when the site offers the version expected, else refuses and changes nothing (1.5.0)', async () => {
    const update = (route: string, json: object) => call(site, site.admin, 'POST', route, json);
    const offerChanged = { status: 200, body: expect.objectContaining({ result: 'refused', code: 'sitewarden_offer_changed' }) };

    // Another version on offer than the one expected: refused, with what the site has and offers now.
    const other = await update('plugins/update', { plugin: EXTRA, expectedVersion: '9.0.0' });
    expect(other).toEqual(offerChanged);
    expect(other.body).toMatchObject({
      message: `${EXTRA} is offered at 2.0.0, not 9.0.0.`,
      version: '1.5.0',
      offer: { version: '1.5.0', newVersion: '2.0.0' },
    });
    expect(await pluginState(site, EXTRA)).toEqual({ version: '1.5.0', active: false });
    // Nothing on offer (demo was just updated), or nothing installed: refused too.
    const none = await update('plugins/update', { plugin: DEMO, expectedVersion: '' });
    expect(none).toEqual(offerChanged);
    expect(none.body).toMatchObject({ version: '1.1.0', offer: null });
    const missing = await update('plugins/update', { plugin: 'no-such-plugin/no-such-plugin.php', expectedVersion: '' });
    expect(missing.body).toMatchObject({ result: 'refused', version: null, offer: null });
    const theme = themeVersionOnDisk(site, 'twentytwentyone');
    const themeOther = await update('themes/update', { stylesheet: 'twentytwentyone', expectedVersion: '98.0.0' });
    expect(themeOther).toEqual(offerChanged);
    expect(themeOther.body).toMatchObject({ version: theme, offer: { version: theme, newVersion: '99.0.0' } });
    expect(themeVersionOnDisk(site, 'twentytwentyone')).toBe(theme);

    // The version expected: updated, with what the daemon's inventory needs (the offer left, the requirements).
    const updated = await update('plugins/update', { plugin: EXTRA, expectedVersion: '2.0.0' });
    expect(updated).toEqual({
      status: 200,
      body: {
        result: 'updated',
        plugin: EXTRA,
        previousVersion: '1.5.0',
        version: '2.0.0',
        active: false,
        offer: null,
        requires: [],
      },
    });
    expect(await pluginState(site, EXTRA)).toEqual({ version: '2.0.0', active: false });

    // Made to look old again for the tests below.
    const extraMain = join(site.root, 'wp-content/plugins', EXTRA);
    writeFileSync(extraMain, readFileSync(extraMain, 'utf8').replace('Version: 2.0.0', 'Version: 1.5.0'));
  });

  it('updates an inactive plugin and leaves it inactive', async () => {
    const { status, body } = await call(site, site.admin, 'POST', 'plugins/update', { plugin: EXTRA });

    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).toEqual({ plugin: EXTRA, previousVersion: '1.5.0', version: '2.0.0', active: false });
    expect(await pluginState(site, EXTRA)).toEqual({ version: '2.0.0', active: false });
  });

  it('answers 409 when no newer version exists, and 404 for a plugin that is not installed', async () => {
    const again = await call(site, site.admin, 'POST', 'plugins/update', { plugin: DEMO });
    expect([again.status, again.body['code']]).toEqual([409, 'sitewarden_no_update']);
    expect(again.body['data']).toMatchObject({ status: 409, version: '1.1.0' });

    const unknown = await call(site, site.admin, 'POST', 'plugins/update', {
      plugin: 'no-such-plugin/no-such-plugin.php',
    });
    expect([unknown.status, unknown.body['code']]).toEqual([404, 'sitewarden_plugin_not_found']);
  });

  it("answers 500 with the upgrader's reason when an update fails, leaving the plugin as it was", async () => {
    await site.php(`
      $updates = get_site_transient( 'update_plugins' );
      $updates->response['${EXTRA}'] = (object) array(
        'slug'        => 'sitewarden-extra',
        'plugin'      => '${EXTRA}',
        'new_version' => '9.9.9',
        'package'     => '${inject('pluginMirrorUrl')}/plugin/sitewarden-extra.9.9.9.zip',
      );
      set_site_transient( 'update_plugins', $updates );`);

    const { status, body } = await call(site, site.admin, 'POST', 'plugins/update', { plugin: EXTRA });

    expect([status, body['code']]).toEqual([500, 'sitewarden_update_failed']);
    expect(body['message']).toBe(`Updating ${EXTRA} failed: Download failed. Not Found`);
    expect(await pluginState(site, EXTRA)).toEqual({ version: '2.0.0', active: false });
  });

  it('updates an inactive theme', async () => {
    const previous = themeVersionOnDisk(site, 'twentytwentyone');
    const { status, body } = await call(site, site.admin, 'POST', 'themes/update', { stylesheet: 'twentytwentyone' });

    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).toEqual({
      stylesheet: 'twentytwentyone',
      previousVersion: previous,
      version: '99.0.0',
      active: false,
    });
    expect(themeVersionOnDisk(site, 'twentytwentyone')).toBe('99.0.0');

    const again = await call(site, site.admin, 'POST', 'themes/update', { stylesheet: 'twentytwentyone' });
    expect([again.status, again.body['code']]).toEqual([409, 'sitewarden_no_update']);
    const unknown = await call(site, site.admin, 'POST', 'themes/update', { stylesheet: 'no-such-theme' });
    expect([unknown.status, unknown.body['code']]).toEqual([404, 'sitewarden_theme_not_found']);
  });

  it('activates a theme, and treats activating the active theme as done', async () => {
    const previous = await site.option('stylesheet');
    const { status, body } = await call(site, site.admin, 'POST', 'themes/activate', {
      stylesheet: 'sitewarden-demo-theme',
    });

    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).toEqual({ stylesheet: 'sitewarden-demo-theme', active: true, previous });
    expect(await site.option('stylesheet')).toBe('sitewarden-demo-theme');
    expect(await site.option('template')).toBe('sitewarden-demo-theme');

    const again = await call(site, site.admin, 'POST', 'themes/activate', { stylesheet: 'sitewarden-demo-theme' });
    expect([again.status, again.body]).toEqual([
      200,
      { stylesheet: 'sitewarden-demo-theme', active: true, previous: 'sitewarden-demo-theme' },
    ]);
  });

  it('updates the active theme and keeps it active', async () => {
    const { status, body } = await call(site, site.admin, 'POST', 'themes/update', {
      stylesheet: 'sitewarden-demo-theme',
    });

    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).toEqual({
      stylesheet: 'sitewarden-demo-theme',
      previousVersion: '1.0.0',
      version: '1.1.0',
      active: true,
    });
    expect(themeVersionOnDisk(site, 'sitewarden-demo-theme')).toBe('1.1.0');
    expect(await site.option('stylesheet')).toBe('sitewarden-demo-theme');
    expect(existsSync(join(site.root, '.maintenance'))).toBe(false);
  });

  it('refuses to activate a theme that is missing or broken', async () => {
    const orphan = join(site.root, 'wp-content/themes/sitewarden-orphan');
    mkdirSync(orphan);
    writeFileSync(
      join(orphan, 'style.css'),
      '/*\nTheme Name: Sitewarden Orphan\nTemplate: no-such-parent\nVersion: 1.0.0\n*/\n',
    );

    const broken = await call(site, site.admin, 'POST', 'themes/activate', { stylesheet: 'sitewarden-orphan' });
    expect([broken.status, broken.body['code']]).toEqual([409, 'sitewarden_theme_broken']);
    const missing = await call(site, site.admin, 'POST', 'themes/activate', { stylesheet: 'no-such-theme' });
    expect([missing.status, missing.body['code']]).toEqual([404, 'sitewarden_theme_not_found']);
    expect(await site.option('stylesheet')).toBe('sitewarden-demo-theme');
  });

  it('deletes an inactive theme', async () => {
    const { status, body } = await call(site, site.admin, 'POST', 'themes/delete', { stylesheet: 'twentytwentyone' });

    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).toEqual({ stylesheet: 'twentytwentyone', deleted: true });
    expect(existsSync(join(site.root, 'wp-content/themes/twentytwentyone'))).toBe(false);

    const gone = await call(site, site.admin, 'POST', 'themes/delete', { stylesheet: 'twentytwentyone' });
    expect([gone.status, gone.body['code']]).toEqual([404, 'sitewarden_theme_not_found']);
  });

  it('refuses to delete the active theme or its parent', async () => {
    const active = await call(site, site.admin, 'POST', 'themes/delete', { stylesheet: 'sitewarden-demo-theme' });
    expect([active.status, active.body['code']]).toEqual([409, 'sitewarden_theme_active']);
    expect(existsSync(join(site.root, 'wp-content/themes/sitewarden-demo-theme/style.css'))).toBe(true);

    const child = join(site.root, 'wp-content/themes/sitewarden-child');
    mkdirSync(child);
    writeFileSync(
      join(child, 'style.css'),
      '/*\nTheme Name: Sitewarden Child\nTemplate: twentytwentytwo\nVersion: 1.0.0\n*/\n',
    );
    expect((await call(site, site.admin, 'POST', 'themes/activate', { stylesheet: 'sitewarden-child' })).status).toBe(
      200,
    );

    const parent = await call(site, site.admin, 'POST', 'themes/delete', { stylesheet: 'twentytwentytwo' });
    expect([parent.status, parent.body['code']]).toEqual([409, 'sitewarden_theme_active']);
    expect(existsSync(join(site.root, 'wp-content/themes/twentytwentytwo/style.css'))).toBe(true);
  });
});
