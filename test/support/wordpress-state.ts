import { cpSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { createTestSite, type CreateTestSiteOptions, type TestSite } from './wordpress/index.js';
import { createTestApp, type TestApp } from './test-app.js';

const PROJECT_ROOT = resolve(import.meta.dirname, '../..');
const DIRECTORY_FIXTURES = join(PROJECT_ROOT, 'test/support/fixtures/directory');

/** What WordPress itself holds, read inside the site rather than through Sitewarden. */
export async function wordpressPlugins(site: TestSite): Promise<Record<string, { Version: string; Name: string }>> {
  return JSON.parse(
    await site.php(
      `require_once ABSPATH . 'wp-admin/includes/plugin.php'; wp_clean_plugins_cache(false); echo wp_json_encode(get_plugins());`,
    ),
  ) as Record<string, { Version: string; Name: string }>;
}

export async function activePlugins(site: TestSite): Promise<string[]> {
  return ((await site.option('active_plugins')) as string[] | false) || [];
}

export async function themeVersionOnDisk(site: TestSite, stylesheet: string): Promise<string | null> {
  return JSON.parse(
    await site.php(
      `$theme = wp_get_theme(${JSON.stringify(stylesheet)}); echo wp_json_encode($theme->exists() ? $theme->get('Version') : null);`,
    ),
  ) as string | null;
}

/** Puts the connector into the site and activates it, as an operator would after uploading it. */
export async function installConnector(site: TestSite): Promise<void> {
  cpSync(join(PROJECT_ROOT, 'connector'), join(site.root, 'wp-content/plugins/sitewarden-connector'), {
    recursive: true,
  });
  await site.php(
    `require_once ABSPATH . 'wp-admin/includes/plugin.php'; $result = activate_plugin('sitewarden-connector/sitewarden-connector.php'); if (is_wp_error($result)) { fwrite(STDERR, $result->get_error_message()); exit(1); }`,
  );
}

/** An older release from the mirror's fixtures, put on disk as if installed long ago. */
export function installFixturePlugin(site: TestSite, slug: string, version: string): void {
  cpSync(join(DIRECTORY_FIXTURES, 'plugins', slug, version, slug), join(site.root, 'wp-content/plugins', slug), {
    recursive: true,
  });
}

export function installSingleFilePlugin(site: TestSite, file: string, name: string): void {
  writeFileSync(
    join(site.root, 'wp-content/plugins', file),
    `<?php\n/**\n * Plugin Name: ${name}\n * Version: 0.1.0\n */\n`,
  );
}

/** Connects a test site to a test app with its admin's application password, and returns the site's id. */
export async function connectSite(t: TestApp, site: TestSite): Promise<string> {
  const { username, applicationPassword } = site.admin;
  const connected = await t.call('POST', '/api/sites', { json: { url: site.url, username, applicationPassword } });
  if (connected.status !== 201)
    throw new Error(`connecting ${site.url} answered ${connected.status}: ${connected.text}`);
  return connected.json.id as string;
}

/**
 * A real site with the connector active, connected to a fresh test app: the setting of
 * every plugin and theme test. Call from a test file's top level.
 */
export function useConnectedSite(options: CreateTestSiteOptions = {}): { site: TestSite; t: TestApp; siteId: string } {
  const context = {} as { site: TestSite; t: TestApp; siteId: string };
  beforeAll(async () => {
    context.site = await createTestSite(options);
    await installConnector(context.site);
    context.t = createTestApp();
    context.siteId = await connectSite(context.t, context.site);
  });
  afterAll(async () => {
    await context.t?.close();
    await context.site?.stop();
  });
  return context;
}
