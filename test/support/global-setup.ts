import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startPrivateMariaDb } from './mariadb.js';
import { startPluginMirror } from './plugin-mirror.js';
import { FIXTURES_DIR, WORDPRESS_SOURCE } from './wordpress/paths.js';
import { createRunDir, removeRunDir } from './work-dir.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Unix socket of the run's private MariaDB server (root, no password). */
    mariadbSocket: string;
    /** Loopback stand-in for api.wordpress.org / downloads.wordpress.org, no trailing slash. */
    pluginMirrorUrl: string;
    /** Scratch directory of this run; test sites are created below it. */
    testWorkDir: string;
  }
}

/**
 * Shared, expensive services started once per `vitest run`: one MariaDB server
 * (each test site gets its own database in it) and one plugin-directory mirror.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const runDir = createRunDir();
  const [mariadb, mirror] = await Promise.allSettled([
    startPrivateMariaDb({ dir: runDir }),
    startPluginMirror({
      fixturesDir: join(FIXTURES_DIR, 'directory'),
      zipDir: join(runDir, 'mirror'),
      // A newer release of a theme WordPress ships, so tests can update a real theme.
      forks: [
        {
          type: 'theme',
          slug: 'twentytwentyone',
          from: join(WORDPRESS_SOURCE, 'wp-content/themes/twentytwentyone'),
          version: '99.0.0',
        },
      ],
    }),
  ]);

  const teardown = async () => {
    if (mirror.status === 'fulfilled') await mirror.value.close();
    if (mariadb.status === 'fulfilled') await mariadb.value.stop();
    removeRunDir(runDir);
  };

  if (mariadb.status === 'rejected' || mirror.status === 'rejected') {
    await teardown();
    throw mariadb.status === 'rejected' ? mariadb.reason : (mirror as PromiseRejectedResult).reason;
  }

  project.provide('mariadbSocket', mariadb.value.socketPath);
  project.provide('pluginMirrorUrl', mirror.value.url);
  project.provide('testWorkDir', runDir);
  return teardown;
}
