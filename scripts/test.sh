#!/usr/bin/env bash
# The README's test line (and CI's): set up everything the tests need, then lint, type-check,
# build and run every test, including the integration tests against real WordPress.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
npm run --silent lint
npm run --silent typecheck
npm run --silent build
npx vitest run --exclude 'test/**/*-memory.test.ts'

# The memory tests read V8's own counts (bytes promoted, ArrayBuffers held) in worker processes:
# one file at a time, alone, since beside WordPress and browser tests V8's timing-driven GC
# heuristics shift those counts (a reuse check promoted 22–24 MB there, 2–3 MB alone).
npx vitest run --no-file-parallelism test/backups/*-memory.test.ts test/backups/offsite/*-memory.test.ts

# The version matrix: the WordPress-facing tests again on the newest real release (6.5.5 from
# @wp-playground/wordpress-builds); the rest of the suite does not depend on the WordPress version.
SITEWARDEN_TEST_WORDPRESS=newest npx vitest run \
  test/sites/sites.integration.test.ts \
  test/connector/connector.integration.test.ts \
  test/plugins/plugins.integration.test.ts \
  test/themes/themes.integration.test.ts \
  test/wordpress-updates/translations.integration.test.ts \
  test/backups/backups.integration.test.ts \
  test/backups/backup-table-names.integration.test.ts \
  test/backups/restore-connection.integration.test.ts
