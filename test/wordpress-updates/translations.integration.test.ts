import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderMo } from '../support/plugin-directory/language-packs.js';
import { installFixturePlugin, useConnectedSite } from '../support/wordpress-state.js';

/**
 * Language packs through WordPress's Language_Pack_Upgrader: the loopback mirror offers a
 * German pack (real .po and .mo files) for the sitewarden-demo fixture plugin to sites with
 * German installed, as translate.wordpress.org would.
 */
const bed = useConnectedSite();

const updateTranslations = () => bed.t.call('POST', `/api/sites/${bed.siteId}/translations/update`);
const languages = () => join(bed.site.root, 'wp-content/languages');

describe('translation updates on a real site', () => {
  it('answers no-update-available while the site has no language a pack exists for', async () => {
    installFixturePlugin(bed.site, 'sitewarden-demo', '1.1.0');
    const none = await updateTranslations();
    expect(none.status, none.text).toBe(409);
    expect(none.json.type).toBe('/problems/no-update-available');
    expect(bed.t.logs.events('translations.update_failed')).toEqual([]);
  });

  it('reports a site that cannot write its files as site-refused, and logs translations.update_failed', async () => {
    // German installed for core: WordPress now asks for German packs.
    mkdirSync(languages(), { recursive: true });
    writeFileSync(
      join(languages(), 'de_DE.mo'),
      renderMo({ updated: '2024-01-01 00:00:00', language: 'de_DE', strings: {} }),
    );
    const config = join(bed.site.root, 'wp-config.php');
    const original = readFileSync(config, 'utf8');
    writeFileSync(config, original.replace("define( 'FS_METHOD', 'direct' );", "define( 'FS_METHOD', 'ftpext' );"));
    try {
      const refused = await updateTranslations();
      expect(refused.status, refused.text).toBe(422);
      expect(refused.json.type).toBe('/problems/site-refused');
    } finally {
      writeFileSync(config, original);
    }
    expect(existsSync(join(languages(), 'plugins/sitewarden-demo-de_DE.mo'))).toBe(false);
    expect(bed.t.logs.events('translations.update_failed')).toEqual([
      expect.objectContaining({ siteId: bed.siteId, reason: 'site-refused' }),
    ]);
  });

  it('installs the offered pack, which WordPress then lists and translates with', async () => {
    const updated = await updateTranslations();
    expect(updated.status, updated.text).toBe(200);
    expect(updated.json).toEqual({
      updated: [{ type: 'plugin', slug: 'sitewarden-demo', language: 'de_DE', version: '1.1.0' }],
      failed: [],
    });

    const held = JSON.parse(
      await bed.site.php(`
        $installed = wp_get_installed_translations( 'plugins' );
        load_textdomain( 'sitewarden-demo', WP_LANG_DIR . '/plugins/sitewarden-demo-de_DE.mo' );
        echo wp_json_encode( array(
          'revision'   => $installed['sitewarden-demo']['de_DE']['PO-Revision-Date'] ?? null,
          'translated' => __( 'Hello from Sitewarden Demo', 'sitewarden-demo' ),
        ) );`),
    ) as { revision: string | null; translated: string };
    expect(held).toEqual({ revision: '2024-05-01 12:00:00+0000', translated: 'Hallo von Sitewarden Demo' });
    expect(existsSync(join(languages(), 'plugins/sitewarden-demo-de_DE.po'))).toBe(true);
    expect(bed.t.logs.events('translations.updated')).toEqual([
      expect.objectContaining({ siteId: bed.siteId, updated: 1, failed: 0 }),
    ]);

    const again = await updateTranslations();
    expect(again.status, again.text).toBe(409);
    expect(again.json.type).toBe('/problems/no-update-available');
  });
});
