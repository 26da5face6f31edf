import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startPrivateMariaDb } from './mariadb.js';
import { startPluginMirror } from './plugin-mirror.js';
import { startPrivatePostgres } from './postgres.js';
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
    /** The run's throwaway PostgreSQL cluster (superuser URL); a test file takes its own database with createTestDatabase. */
    postgresUrl: string;
  }
}

/**
 * Shared, expensive services started once per `vitest run`: one MariaDB server
 * (each test site gets its own database in it), one plugin-directory mirror and one
 * PostgreSQL cluster (each test file that uses it gets its own database).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const runDir = createRunDir();
  const [mariadb, mirror, postgres] = await Promise.allSettled([
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
    startPrivatePostgres(),
  ]);

  const teardown = async () => {
    if (mirror.status === 'fulfilled') await mirror.value.close();
    if (mariadb.status === 'fulfilled') await mariadb.value.stop();
    if (postgres.status === 'fulfilled') await postgres.value.stop();
    removeRunDir(runDir);
  };

  if (mariadb.status === 'rejected' || mirror.status === 'rejected' || postgres.status === 'rejected') {
    await teardown();
    throw ([mariadb, mirror, postgres].find((started) => started.status === 'rejected') as PromiseRejectedResult)
      .reason;
  }

  project.provide('mariadbSocket', mariadb.value.socketPath);
  project.provide('pluginMirrorUrl', mirror.value.url);
  project.provide('testWorkDir', runDir);
  project.provide('postgresUrl', postgres.value.url);
  return teardown;
}
