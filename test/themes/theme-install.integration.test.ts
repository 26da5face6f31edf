import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONNECTOR_VERSION } from '../support/connector-version.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { createTestSite, type TestSite, type TestUser } from '../support/wordpress/index.js';
import { connectSite, installConnector } from '../support/wordpress-state.js';

/**
 * Installing a theme by slug on a real WordPress site whose theme directory is the test mirror:
 * the connector's route (1.8.0, `themes/install`) called as the daemon calls it, then
 * `POST /api/sites/{siteId}/themes/install`; each checked in what WordPress holds.
 */
const THEME = 'sitewarden-demo-theme';
const bed = {} as { site: TestSite; t: TestApp; siteId: string };
beforeAll(async () => {
  bed.site = await createTestSite();
  await installConnector(bed.site);
});
afterAll(async () => {
  await bed.t?.close();
  await bed.site?.stop();
});

const install = (json: Record<string, unknown>) =>
  bed.t.call('POST', `/api/sites/${bed.siteId}/themes/install`, { json });

/** What WordPress itself lists (wp_get_themes), stylesheet => version. */
async function wordpressThemes(site: TestSite): Promise<Record<string, string>> {
  return JSON.parse(
    await site.php(
      `wp_clean_themes_cache(); $out = array(); foreach ( wp_get_themes() as $stylesheet => $theme ) { $out[ $stylesheet ] = $theme->get( 'Version' ); } echo wp_json_encode( $out );`,
    ),
  ) as Record<string, string>;
}

async function connectorCall(site: TestSite, user: TestUser | null, json: unknown) {
  const response = await fetch(`${site.url}/wp-json/sitewarden/v1/themes/install`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(user
        ? {
            authorization: `Basic ${Buffer.from(`${user.username}:${user.applicationPassword}`).toString('base64')}`,
          }
        : {}),
    },
    body: JSON.stringify(json),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const themeDir = (slug: string) => join(bed.site.root, 'wp-content/themes', slug);

describe('the connector’s themes/install', () => {
  it('refuses callers without install_themes and slugs that could leave the themes folder', async () => {
    const editor = await bed.site.createUser('editor');
    for (const [user, status] of [
      [editor, 403],
      [null, 401],
    ] as const) {
      const refused = await connectorCall(bed.site, user, { slug: THEME });
      expect([refused.status, refused.body['code']]).toEqual([status, 'rest_forbidden']);
    }
    for (const slug of ['../../etc', '..', 'a/b', 'Twenty', '.hidden', 'x'.repeat(201)]) {
      const invalid = await connectorCall(bed.site, bed.site.admin, { slug });
      expect([slug, invalid.status, invalid.body['code']]).toEqual([slug, 400, 'rest_invalid_param']);
    }
    expect(existsSync(themeDir(THEME))).toBe(false);
  });

  it('installs from the directory, then answers sitewarden_theme_installed; an unknown slug is not in the directory', async () => {
    const installed = await connectorCall(bed.site, bed.site.admin, { slug: THEME });
    expect(installed).toEqual({
      status: 200,
      body: { stylesheet: THEME, name: 'Sitewarden Demo Theme', version: '1.1.0', active: false },
    });
    expect((await wordpressThemes(bed.site))[THEME]).toBe('1.1.0');

    const again = await connectorCall(bed.site, bed.site.admin, { slug: THEME });
    expect([again.status, again.body['code']]).toEqual([409, 'sitewarden_theme_installed']);
    const unknown = await connectorCall(bed.site, bed.site.admin, { slug: 'no-such-theme-anywhere' });
    expect([unknown.status, unknown.body['code']]).toEqual([404, 'sitewarden_theme_not_in_directory']);
    expect(existsSync(themeDir('no-such-theme-anywhere'))).toBe(false);

    // As the site was: the daemon's tests install it again.
    rmSync(themeDir(THEME), { recursive: true });
    expect(await wordpressThemes(bed.site)).not.toHaveProperty(THEME);
  });
});

describe('POST /api/sites/{siteId}/themes/install', () => {
  beforeAll(async () => {
    bed.t = createTestApp();
    bed.siteId = await connectSite(bed.t, bed.site);
  });

  it('installs the directory’s newest version, answers 201 with the theme, and logs who asked', async () => {
    expect(await wordpressThemes(bed.site)).not.toHaveProperty(THEME);
    const response = await install({ slug: THEME });
    expect(response.status, response.text).toBe(201);
    expect(response.json).toEqual({
      slug: THEME,
      name: 'Sitewarden Demo Theme',
      version: '1.1.0',
      status: 'inactive',
      parent: null,
      update: null,
    });
    // What WordPress holds: the folder, and wp_get_themes() lists it at the directory's version.
    expect(existsSync(join(themeDir(THEME), 'style.css'))).toBe(true);
    expect((await wordpressThemes(bed.site))[THEME]).toBe('1.1.0');
    expect(await bed.site.option('stylesheet')).not.toBe(THEME);
    expect(bed.t.logs.events('theme.installed')).toEqual([
      expect.objectContaining({
        level: 'info',
        siteId: bed.siteId,
        url: bed.site.url,
        slug: THEME,
        version: '1.1.0',
        active: false,
        requestedByKind: 'token',
        requestedById: expect.any(String),
      }),
    ]);
    // The stored inventory was read again after the change.
    const details = await bed.t.call('GET', `/api/sites/${bed.siteId}`);
    expect(details.json.themes).toContainEqual(expect.objectContaining({ slug: THEME, version: '1.1.0' }));
  });

  it('answers theme-already-installed for a theme (or folder) the site has, and changes nothing', async () => {
    const before = readFileSync(join(themeDir(THEME), 'style.css'), 'utf8');
    const again = await install({ slug: THEME });
    expect([again.status, again.json.type]).toEqual([409, '/problems/theme-already-installed']);
    expect(again.json.detail).toContain('1.1.0');
    expect(readFileSync(join(themeDir(THEME), 'style.css'), 'utf8')).toBe(before);
    // A bundled theme is installed too.
    expect((await install({ slug: 'twentytwentythree' })).json.type).toBe('/problems/theme-already-installed');
    expect(bed.t.logs.events('theme.installed')).toHaveLength(1);
  });

  it('answers theme-not-in-directory for a slug the directory does not know, and a 400 for a malformed one', async () => {
    const unknown = await install({ slug: 'no-such-theme-anywhere' });
    expect([unknown.status, unknown.json.type]).toEqual([422, '/problems/theme-not-in-directory']);
    expect(existsSync(themeDir('no-such-theme-anywhere'))).toBe(false);
    for (const slug of ['../etc', 'a..b', 'Twenty']) {
      const invalid = await install({ slug });
      expect([slug, invalid.status, invalid.json.type]).toEqual([slug, 400, '/problems/validation-failed']);
    }
    const missing = await install({});
    expect(missing.status).toBe(400);
  });

  it('reports a site that cannot write its files as refusing, and installs nothing', async () => {
    rmSync(themeDir(THEME), { recursive: true, force: true });
    const config = join(bed.site.root, 'wp-config.php');
    const original = readFileSync(config, 'utf8');
    writeFileSync(config, original.replace("define( 'FS_METHOD', 'direct' );", "define( 'FS_METHOD', 'ftpext' );"));
    try {
      const response = await install({ slug: THEME });
      expect([response.status, response.json.type]).toEqual([422, '/problems/site-refused']);
      expect(response.json.detail).toContain('cannot write its files');
    } finally {
      writeFileSync(config, original);
    }
    expect(existsSync(themeDir(THEME))).toBe(false);
    expect(await wordpressThemes(bed.site)).not.toHaveProperty(THEME);
  });

  it('installs and activates in one request, as WordPress records it', async () => {
    const response = await install({ slug: THEME, activate: true });
    expect(response.status, response.text).toBe(201);
    expect(response.json).toMatchObject({ slug: THEME, version: '1.1.0', status: 'active' });
    expect(await bed.site.option('stylesheet')).toBe(THEME);
    expect(await bed.site.option('template')).toBe(THEME);
    expect((await wordpressThemes(bed.site))[THEME]).toBe('1.1.0');
    expect(bed.t.logs.events('theme.installed').at(-1)).toMatchObject({ slug: THEME, active: true });
    // Back to a bundled theme for the next test.
    expect((await bed.t.call('POST', `/api/sites/${bed.siteId}/themes/twentytwentythree/activate`)).status).toBe(200);
  });

  it('refuses a connector older than 1.8.0 with connector-outdated naming the version and where to get it', async () => {
    const main = join(bed.site.root, 'wp-content/plugins/sitewarden-connector/sitewarden-connector.php');
    const current = readFileSync(main, 'utf8');
    writeFileSync(
      main,
      current.replace(
        `define( 'SITEWARDEN_CONNECTOR_VERSION', '${CONNECTOR_VERSION}' );`,
        "define( 'SITEWARDEN_CONNECTOR_VERSION', '1.7.0' );",
      ),
    );
    try {
      await bed.t.services.sync.syncNow(bed.siteId);
      const response = await install({ slug: 'sitewarden-another' });
      expect(response.status, response.text).toBe(422);
      expect(response.json).toMatchObject({
        type: '/problems/connector-outdated',
        feature: 'themes/install',
        connectorVersion: '1.7.0',
        requiredVersion: '1.8.0',
      });
      expect(response.json.detail).toContain('1.8.0');
      expect(response.json.detail).toContain('/connector.zip');
    } finally {
      writeFileSync(main, current);
      await bed.t.services.sync.syncNow(bed.siteId);
    }
  });
});
