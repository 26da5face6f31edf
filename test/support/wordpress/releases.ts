import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { runCommand } from '../processes.js';
import { WORDPRESS_SOURCE } from './paths.js';

/**
 * The WordPress releases a test site can run: Debian's package (6.1.9, what most tests use)
 * and the newest real release in WordPress Playground's builds (PLAYGROUND_BUILDS).
 */
export type WordPressRelease = 'debian' | 'newest';

const BUILDS_SPEC = resolve(import.meta.dirname, '../../../scripts/wordpress-builds.json');

/** The release a test site runs when the test names none: SITEWARDEN_TEST_WORDPRESS, else Debian's. */
export function defaultRelease(): WordPressRelease {
  const named = process.env.SITEWARDEN_TEST_WORDPRESS;
  if (named === undefined || named === '') return 'debian';
  if (named === 'debian' || named === 'newest') return named;
  throw new Error(`SITEWARDEN_TEST_WORDPRESS must be debian or newest, not ${named}`);
}

/**
 * WordPress Playground's release builds (@wp-playground/wordpress-builds, pinned in scripts/wordpress-builds.json):
 * the release zips and their wp-versions.json, kept once per machine by scripts/wordpress-builds.sh (which
 * `scripts/setup.sh --test` runs), in the same place it computes.
 */
export const PLAYGROUND_BUILDS =
  process.env.SITEWARDEN_WORDPRESS_BUILDS ||
  join(
    process.env.XDG_CACHE_HOME || join(homedir(), '.cache'),
    'sitewarden',
    `wordpress-builds-${(JSON.parse(readFileSync(BUILDS_SPEC, 'utf8')) as { version: string }).version}`,
  );

/** PLAYGROUND_BUILDS's `file`, or a clear error when the machine has not been set up for the tests. */
export function playgroundBuild(file: string): string {
  const path = join(PLAYGROUND_BUILDS, file);
  if (!existsSync(path))
    throw new Error(`${path} is missing: run \`bash scripts/setup.sh --test\` (scripts/wordpress-builds.sh keeps it)`);
  return path;
}

/**
 * WordPress Playground's build of 6.5.5 (see build/Dockerfile in the package): the release zip
 * with every theme but the default one and Akismet removed, static assets (CSS, JS, images,
 * fonts) that PHP does not read deleted, PHP files outside wp-content whitespace-stripped with
 * `php -w`, set_time_limit() calls removed, an empty SQLite database in wp-content/database/ and
 * a wp-config.php of its own. The PHP is the release's, so everything a REST client sees works;
 * wp-admin pages render without their styles and scripts.
 */
export const NEWEST_RELEASE = { version: '6.5.5', file: 'wp-6.5.zip' } as const;

/**
 * What a test site's wp-content starts with, whatever else this machine's Debian packages put
 * into /usr/share/wordpress/wp-content: `wordpress-l10n` (a Recommends of `wordpress`) adds every
 * language, plugin packages add plugins. Tests add what they need on top of this known state.
 */
const BASELINE_CONTENT = [
  'plugins/index.php',
  'plugins/akismet',
  'themes/twentytwentyone',
  'themes/twentytwentytwo',
  'themes/twentytwentythree',
] as const;

/** Copies a release into `root`, which must not exist: every site owns its files, so core updates touch only that copy. */
export async function copyWordPressRelease(release: WordPressRelease, root: string): Promise<void> {
  if (release === 'debian') {
    mkdirSync(root);
    const core = readdirSync(WORDPRESS_SOURCE).filter((entry) => entry !== 'wp-content' && entry !== '.htaccess');
    // -L: Debian symlinks parts of core into /usr/share/javascript etc.; a site must own its files.
    // Debian's .htaccess (a link into /etc) is left out, and its host-based wp-config.php is replaced by ours.
    await runCommand('cp', ['-aL', ...core.map((entry) => join(WORDPRESS_SOURCE, entry)), root]);
    await copyBaselineContent(root, []);
    return;
  }
  await runCommand('unzip', ['-q', playgroundBuild(NEWEST_RELEASE.file), '-d', root]);
  // Playground's config and its SQLite database: the test bed's sites use MariaDB and our wp-config.php
  // (there is no db.php drop-in in the build, so nothing would read the SQLite file anyway).
  rmSync(join(root, 'wp-config.php'));
  rmSync(join(root, 'wp-content/database'), { recursive: true, force: true });
  // Playground's build keeps only the default theme and drops Akismet; the release ships more. The
  // themes and plugin Debian packages put them back, so the same tests run on both releases.
  await copyBaselineContent(root, ['-n']);
}

async function copyBaselineContent(root: string, cpFlags: string[]): Promise<void> {
  for (const entry of BASELINE_CONTENT) {
    const source = join(WORDPRESS_SOURCE, 'wp-content', entry);
    if (!existsSync(source)) throw new Error(`${source} is missing: run bash scripts/setup.sh --test`);
    const target = join(root, 'wp-content', entry);
    mkdirSync(dirname(target), { recursive: true });
    await runCommand('cp', ['-aL', ...cpFlags, source, dirname(target)]);
  }
}
