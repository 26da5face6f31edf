import { cpSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { TestSite } from '../support/wordpress/index.js';

export const PROJECT_ROOT = resolve(import.meta.dirname, '../..');
export const DIRECTORY_FIXTURES = join(PROJECT_ROOT, 'test/fixtures/directory');

/** What WordPress itself holds, read inside the site rather than through Sitewarden. */
export async function wordpressPlugins(site: TestSite): Promise<Record<string, { Version: string; Name: string }>> {
  return JSON.parse(await site.php(`require_once ABSPATH . 'wp-admin/includes/plugin.php'; wp_clean_plugins_cache(false); echo wp_json_encode(get_plugins());`)) as Record<string, { Version: string; Name: string }>;
}

export async function activePlugins(site: TestSite): Promise<string[]> {
  return ((await site.option('active_plugins')) as string[] | false) || [];
}

export async function themeVersionOnDisk(site: TestSite, stylesheet: string): Promise<string | null> {
  return JSON.parse(await site.php(`$theme = wp_get_theme(${JSON.stringify(stylesheet)}); echo wp_json_encode($theme->exists() ? $theme->get('Version') : null);`)) as string | null;
}

/** Puts the connector into the site and activates it, as an operator would after uploading it. */
export async function installConnector(site: TestSite): Promise<void> {
  cpSync(join(PROJECT_ROOT, 'connector'), join(site.root, 'wp-content/plugins/sitewarden-connector'), { recursive: true });
  await site.php(`require_once ABSPATH . 'wp-admin/includes/plugin.php'; $result = activate_plugin('sitewarden-connector/sitewarden-connector.php'); if (is_wp_error($result)) { fwrite(STDERR, $result->get_error_message()); exit(1); }`);
}

/** An older release from the mirror's fixtures, put on disk as if installed long ago. */
export function installFixturePlugin(site: TestSite, slug: string, version: string): void {
  cpSync(join(DIRECTORY_FIXTURES, 'plugins', slug, version, slug), join(site.root, 'wp-content/plugins', slug), { recursive: true });
}

export function installSingleFilePlugin(site: TestSite, file: string, name: string): void {
  writeFileSync(join(site.root, 'wp-content/plugins', file), `<?php\n/**\n * Plugin Name: ${name}\n * Version: 0.1.0\n */\n`);
}
