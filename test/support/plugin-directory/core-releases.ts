import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { runCommand } from '../processes.js';
import { PLAYGROUND_BUILDS, playgroundBuild } from '../wordpress/releases.js';
import { compareVersions } from './catalog.js';

/**
 * WordPress releases the mirror can offer as core updates: the real releases in
 * WordPress Playground's builds (6.2.6 … 6.5.5, scripts/wordpress-builds.sh), repackaged the way WordPress's own
 * packages are laid out (one top-level `wordpress/` folder, no wp-config.php), built on
 * first download because a run that updates no core should not pay for the zipping.
 */
export function createCoreReleases(deps: { zipDir: string }) {
  const names = JSON.parse(readFileSync(playgroundBuild('wp-versions.json'), 'utf8')) as Record<string, string>;
  const releases = new Map(
    Object.entries(names)
      .filter(([branch, version]) => /^\d+\.\d+$/.test(branch) && /^\d+(\.\d+)+$/.test(version))
      .map(([branch, version]) => [version, join(PLAYGROUND_BUILDS, `wp-${branch}.zip`)]),
  );
  const built = new Map<string, Promise<string>>();

  async function buildPackage(version: string, source: string): Promise<string> {
    const workDir = join(deps.zipDir, 'core', version);
    rmSync(workDir, { recursive: true, force: true });
    mkdirSync(join(workDir, 'wordpress'), { recursive: true });
    await runCommand('unzip', ['-q', source, '-d', join(workDir, 'wordpress')]);
    // Playground's own config and SQLite database: a real package has neither, and update_core()
    // would copy the config over the site's.
    rmSync(join(workDir, 'wordpress/wp-config.php'));
    rmSync(join(workDir, 'wordpress/wp-content/database'), { recursive: true, force: true });
    const zipPath = join(deps.zipDir, `wordpress-${version}.zip`);
    await runCommand('zip', ['-qrX', zipPath, 'wordpress'], { cwd: workDir });
    rmSync(workDir, { recursive: true, force: true });
    return zipPath;
  }

  return {
    /** Releases newer than `installed`, newest first. */
    newerThan: (installed: string): string[] =>
      [...releases.keys()]
        .filter((version) => compareVersions(version, installed) > 0)
        .sort(compareVersions)
        .reverse(),
    /** The package's path, or undefined for a version the mirror does not have. */
    packagePath(version: string): Promise<string> | undefined {
      const source = releases.get(version);
      if (!source || !existsSync(source)) return undefined;
      let path = built.get(version);
      if (!path) {
        path = buildPackage(version, source);
        // A failed build is not remembered: the next download tries again.
        path.catch(() => built.delete(version));
        built.set(version, path);
      }
      return path;
    },
  };
}

export type CoreReleases = ReturnType<typeof createCoreReleases>;
