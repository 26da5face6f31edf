import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { themeVersionOnDisk, useConnectedSite } from '../support/wordpress-state.js';

const bed = useConnectedSite();

const themes = (path = '') => `/api/sites/${bed.siteId}/themes${path}`;

describe('themes on a real site', () => {
  it('lists the installed themes with the active one and known updates', async () => {
    const response = await bed.t.call('GET', themes());
    expect(response.status).toBe(200);
    const slugs = response.json.items.map((theme: { slug: string }) => theme.slug);
    expect(slugs).toEqual(expect.arrayContaining(['twentytwentyone', 'twentytwentythree', 'twentytwentytwo']));
    const active = response.json.items.filter((theme: { status: string }) => theme.status === 'active');
    expect(active.map((theme: { slug: string }) => theme.slug)).toEqual([await bed.site.option('stylesheet')]);
    expect(response.json.items).toContainEqual(
      expect.objectContaining({ slug: 'twentytwentyone', update: { version: '99.0.0' } }),
    );
  });

  it('activates a theme, as WordPress records it', async () => {
    const response = await bed.t.call('POST', themes('/twentytwentyone/activate'));
    expect(response.status, response.text).toBe(200);
    expect(response.json).toMatchObject({ slug: 'twentytwentyone', status: 'active' });
    expect(await bed.site.option('stylesheet')).toBe('twentytwentyone');
    expect(await bed.site.option('template')).toBe('twentytwentyone');
    const details = await bed.t.call('GET', `/api/sites/${bed.siteId}`);
    expect(details.json.themes.find((theme: { status: string }) => theme.status === 'active').slug).toBe(
      'twentytwentyone',
    );
  });

  it('logs theme.update_failed when the site cannot write its files, and leaves the theme as it was', async () => {
    const before = await themeVersionOnDisk(bed.site, 'twentytwentyone');
    const config = join(bed.site.root, 'wp-config.php');
    const original = readFileSync(config, 'utf8');
    writeFileSync(config, original.replace("define( 'FS_METHOD', 'direct' );", "define( 'FS_METHOD', 'ftpext' );"));
    try {
      const response = await bed.t.call('POST', themes('/twentytwentyone/update'));
      expect(response.status).toBe(422);
      expect(response.json.type).toBe('/problems/site-refused');
    } finally {
      writeFileSync(config, original);
    }
    expect(await themeVersionOnDisk(bed.site, 'twentytwentyone')).toBe(before);
    expect(bed.t.logs.events('theme.update_failed')).toEqual([
      expect.objectContaining({
        level: 'warn',
        siteId: bed.siteId,
        url: bed.site.url,
        slug: 'twentytwentyone',
        fromVersion: before,
        toVersion: '99.0.0',
        reason: 'site-refused',
        message: expect.stringContaining('cannot write its files'),
      }),
    ]);
  });

  it('updates a theme the directory offers a newer version of', async () => {
    const before = await themeVersionOnDisk(bed.site, 'twentytwentyone');
    const response = await bed.t.call('POST', themes('/twentytwentyone/update'));
    expect(response.status, response.text).toBe(200);
    expect(response.json).toMatchObject({ slug: 'twentytwentyone', version: '99.0.0', status: 'active', update: null });
    expect(await themeVersionOnDisk(bed.site, 'twentytwentyone')).toBe('99.0.0');
    expect(before).not.toBe('99.0.0');
    const again = await bed.t.call('POST', themes('/twentytwentyone/update'));
    expect(again.status).toBe(409);
    expect(again.json.type).toBe('/problems/no-update-available');
    // Nothing to update is not a failed update.
    expect(bed.t.logs.events('theme.update_failed')).toHaveLength(1);
  });

  it('deletes an inactive theme and refuses to delete the active one', async () => {
    const refused = await bed.t.call('DELETE', themes('/twentytwentyone'));
    expect(refused.status).toBe(409);
    expect(refused.json.type).toBe('/problems/theme-active');
    expect(existsSync(join(bed.site.root, 'wp-content/themes/twentytwentyone'))).toBe(true);

    expect((await bed.t.call('DELETE', themes('/twentytwentytwo'))).status).toBe(204);
    expect(existsSync(join(bed.site.root, 'wp-content/themes/twentytwentytwo'))).toBe(false);
    expect(await themeVersionOnDisk(bed.site, 'twentytwentytwo')).toBeNull();
  });

  it('answers problems for unknown themes and routes that do not exist', async () => {
    const unknown = await bed.t.call('POST', themes('/no-such-theme/activate'));
    expect(unknown.status).toBe(404);
    expect(unknown.json.type).toBe('/problems/theme-not-found');
    expect((await bed.t.call('DELETE', themes('/no-such-theme'))).json.type).toBe('/problems/theme-not-found');
    // There is no theme deactivate or create (install is theme-install.integration.test.ts's).
    expect((await bed.t.call('POST', themes('/twentytwentythree/deactivate'))).status).toBe(404);
    expect((await bed.t.call('POST', themes())).status).toBe(405);
  });

  it('reports a site that cannot write its files as refusing, and changes nothing', async () => {
    const config = join(bed.site.root, 'wp-config.php');
    const original = readFileSync(config, 'utf8');
    writeFileSync(config, original.replace("define( 'FS_METHOD', 'direct' );", "define( 'FS_METHOD', 'ftpext' );"));
    try {
      const response = await bed.t.call('DELETE', themes('/twentytwentythree'));
      expect(response.status).toBe(422);
      expect(response.json.type).toBe('/problems/site-refused');
      expect(response.json.detail).toContain('cannot write its files');
      expect(existsSync(join(bed.site.root, 'wp-content/themes/twentytwentythree'))).toBe(true);
    } finally {
      writeFileSync(config, original);
    }
  });

  it('records a theme update applied though its own request failed, as the standalone path reads it on disk', async () => {
    const theme = 'sitewarden-demo-theme';
    cpSync(
      join(import.meta.dirname, '../support/fixtures/directory/themes', theme, '1.0.0', theme),
      join(bed.site.root, 'wp-content/themes', theme),
      { recursive: true },
    );
    await bed.t.services.sync.syncNow(bed.siteId);
    // Once the upgrader has put the new files in place, the update's own request ends in a fatal error.
    const muPlugins = join(bed.site.root, 'wp-content/mu-plugins');
    const breaker = join(muPlugins, 'sitewarden-break-updates.php');
    mkdirSync(muPlugins, { recursive: true });
    writeFileSync(
      breaker,
      "<?php\nadd_action( 'upgrader_process_complete', static function () { sitewarden_update_request_dies(); } );\n",
    );
    let updated;
    try {
      updated = await bed.t.call('POST', themes(`/${theme}/update`));
    } finally {
      rmSync(breaker);
    }
    expect(updated.status, updated.text).toBe(502);
    expect(updated.json).toMatchObject({
      type: '/problems/update-applied-site-unhealthy',
      slug: theme,
      fromVersion: '1.0.0',
      version: '1.1.0',
    });
    expect(await themeVersionOnDisk(bed.site, theme)).toBe('1.1.0');
    const history = await bed.t.call('GET', `/api/sites/${bed.siteId}/updates/history?slug=${theme}&limit=1`);
    expect(history.json.items[0]).toMatchObject({
      id: updated.json.updateId,
      type: 'theme',
      toVersion: '1.1.0',
      result: 'succeeded',
      reason: 'update-applied-site-unhealthy',
      restorePoint: { target: `themes/${theme}` },
    });
    const stored = async () =>
      (await bed.t.call('GET', `/api/sites/${bed.siteId}`)).json.themes.find(
        (item: { slug: string }) => item.slug === theme,
      );
    expect(await stored()).toMatchObject({ version: '1.1.0' });

    const rolledBack = await bed.t.call(
      'POST',
      `/api/sites/${bed.siteId}/updates/history/${updated.json.updateId}/rollback`,
    );
    expect(rolledBack.status, rolledBack.text).toBe(200);
    expect(await themeVersionOnDisk(bed.site, theme)).toBe('1.0.0');
    expect(await stored()).toMatchObject({ version: '1.0.0' });
  });

  it('says when the connector on the site is too old', async () => {
    const main = join(bed.site.root, 'wp-content/plugins/sitewarden-connector/sitewarden-connector.php');
    const original = readFileSync(main, 'utf8');
    writeFileSync(
      main,
      original.replace(
        /define\(\s*'SITEWARDEN_CONNECTOR_VERSION',\s*'[^']+'\s*\)/,
        "define( 'SITEWARDEN_CONNECTOR_VERSION', '0.9.0' )",
      ),
    );
    try {
      // The daemon goes by the version its last sync read (a connector gone or without the route is read afresh).
      await bed.t.services.sync.syncNow(bed.siteId);
      const response = await bed.t.call('POST', themes('/twentytwentythree/activate'));
      expect(response.status).toBe(422);
      expect(response.json.type).toBe('/problems/connector-outdated');
      expect(response.json.detail).toContain('/api/connector.zip');
      expect(await bed.site.option('stylesheet')).toBe('twentytwentyone');
    } finally {
      writeFileSync(main, original);
    }
  });
});
