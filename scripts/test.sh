#!/usr/bin/env bash
# The README's test line (and CI's): set up everything the tests need, then lint, type-check,
# build and run every test, including the integration tests against real WordPress.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
npm run --silent lint
npm run --silent typecheck
npm run --silent build
npx vitest run

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
