import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { TestSite } from './wordpress/index.js';

/** Browser-only assets: what a browser loads from core, never what PHP reads (.php, .json, .crt, .xml stay). */
const BROWSER_ASSET = /\.(?:css|js|map|scss|png|gif|jpe?g|svg|ico|woff2?|ttf|eot)$/;

/** The default theme of either release tests run on (6.1: Twenty Twenty-Three; 6.5: Twenty Twenty-Four). */
const KEPT_THEMES = new Set(['twentytwentythree', 'twentytwentyfour', 'index.php']);

/**
 * Makes a test site's file tree about half as large, as WordPress Playground's build of the newest
 * release does (releases.ts): core's stylesheets, scripts, images and fonts (which PHP never
 * reads) and the bundled themes other than the default go. Every PHP file stays, so the site
 * answers its REST API and runs wp-admin's code as before. For tests that back up and restore a
 * whole site, where each file costs a connector request's share, a hash, a stored object and,
 * offsite, an upload: what they check (every file back by hash, every row) holds for any tree.
 */
export function trimBrowserAssets(site: TestSite): void {
  for (const top of ['wp-admin', 'wp-includes']) {
    for (const entry of readdirSync(join(site.root, top), { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && BROWSER_ASSET.test(entry.name)) rmSync(join(entry.parentPath, entry.name));
    }
  }
  const themes = join(site.root, 'wp-content/themes');
  for (const theme of readdirSync(themes)) {
    if (!KEPT_THEMES.has(theme)) rmSync(join(themes, theme), { recursive: true, force: true });
  }
}
