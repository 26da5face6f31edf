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

/** The integration and journey files: real WordPress, browsers, PostgreSQL, daemon and worker processes. */
const INTEGRATION = ['test/**/*.integration.test.ts'];

/**
 * The files that each get a fresh worker process (vitest's default isolation): the memory tests (they
 * read V8's own counts, which another file's garbage in the same process would shift) and the few unit
 * files that replace or read something process-wide while they run (vi.spyOn on Date or a prototype,
 * process.env, a process listener, the threads' nice values).
 */
const OWN_PROCESS = [
  'test/**/*-memory.test.ts',
  'test/backups/offsite/s3-target.test.ts',
  'test/backups/read-ahead.test.ts',
  'test/dashboard/dashboard-connection.test.ts',
  'test/fleet/fleet-actions-runner-writes.test.ts',
  'test/shared/network-policy.test.ts',
  // A hash makes the process's one hashing thread, at a nice value the test reads back.
  'test/users/password-thread.test.ts',
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
    // Three workers on two cores (issue 36): a file waiting on WordPress, a browser or a timer leaves a core idle.
    // Over a clean test line's main run (vmstat, 5 s samples), two workers left the machine idle 13 % of the time
    // and three 6 %; the run took 752 s with two and 636 s with three, an hour apart.
    maxWorkers: 3,
    reporters: ['default'],
    projects: [
      // Every other file (unit tests, most of them on the whole app in memory) runs in a worker that
      // the next such file reuses, with the modules it loaded (isolate: false): loading the app
      // costs a file about 2 s of CPU, a fresh worker process another 0.8 s. The setup file still
      // runs before each file.
      {
        test: {
          ...perFile,
          name: 'shared-workers',
          include: ['test/**/*.test.ts'],
          exclude: [...OWN_PROCESS, ...INTEGRATION],
          isolate: false,
        },
      },
      // The integration files reuse their workers too (issue 36: loading the app and its libraries again cost
      // each file 2–3 s of CPU): each one stops what it started (sites, servers, processes, apps) in its own hooks,
      // and none replaces anything process-wide.
      { test: { ...perFile, name: 'integration', include: INTEGRATION, isolate: false } },
      { test: { ...perFile, name: 'own-process', include: OWN_PROCESS } },
      // SITEWARDEN_TEST_MATRIX=1 (scripts/test.sh): the version matrix in the same run, a project
      // whose files interleave with the main suite's on the same workers, MariaDB and mirror.
      ...(process.env.SITEWARDEN_TEST_MATRIX === '1'
        ? [
            {
              test: {
                ...perFile,
                name: 'wordpress-newest',
                include: WORDPRESS_FACING,
                isolate: false,
                env: { SITEWARDEN_TEST_WORDPRESS: 'newest' },
              },
            },
          ]
        : []),
    ],
  },
});
