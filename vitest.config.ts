import { defineConfig } from 'vitest/config';

/**
 * The WordPress-facing test files, which the version matrix runs a second time on the newest real
 * release (6.5.5 from @wp-playground/wordpress-builds); the rest of the suite does not depend on
 * the WordPress version.
 */
const WORDPRESS_FACING = [
  'test/sites/sites.integration.test.ts',
  'test/connector/connector.integration.test.ts',
  'test/plugins/plugins.integration.test.ts',
  'test/themes/themes.integration.test.ts',
  'test/wordpress-updates/translations.integration.test.ts',
  'test/backups/backups.integration.test.ts',
  'test/backups/backup-table-names.integration.test.ts',
  'test/backups/restore-connection.integration.test.ts',
];

/** What every test file runs with. */
const perFile: { setupFiles: string[]; pool: 'forks'; testTimeout: number; hookTimeout: number } = {
  setupFiles: ['test/support/event-checks.ts'],
  pool: 'forks',
  testTimeout: 60_000,
  hookTimeout: 120_000,
};

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Once per run whatever the projects: a child project inherits what these provide.
    globalSetup: ['test/support/global-setup.ts', 'test/support/event-coverage-setup.ts'],
    ...perFile,
    maxWorkers: 2,
    reporters: ['default'],
    // SITEWARDEN_TEST_MATRIX=1 (scripts/test.sh): the version matrix in the same run, as a second
    // project whose files interleave with the main suite's on the same workers, MariaDB and mirror.
    ...(process.env.SITEWARDEN_TEST_MATRIX === '1'
      ? {
          projects: [
            { test: { ...perFile, name: 'wordpress-6.1', include: ['test/**/*.test.ts'] } },
            {
              test: {
                ...perFile,
                name: 'wordpress-newest',
                include: WORDPRESS_FACING,
                env: { SITEWARDEN_TEST_WORDPRESS: 'newest' },
              },
            },
          ],
        }
      : {}),
  },
});
