#!/usr/bin/env bash
# The README's test line (and CI's): set up everything the tests need, then lint, type-check,
# build and run every test, including the integration tests against real WordPress.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
npm run --silent lint
npm run --silent typecheck
npm run --silent build
# Every test file, and the version matrix in the same run: SITEWARDEN_TEST_MATRIX=1 adds a second
# vitest project (vitest.config.ts) that runs the WordPress-facing files again on the newest real
# release (6.5.5 from @wp-playground/wordpress-builds), interleaved with the rest on the same workers.
SITEWARDEN_TEST_MATRIX=1 npx vitest run --exclude 'test/**/*-memory.test.ts'

# The memory tests read V8's own counts (bytes promoted, ArrayBuffers held) in worker processes:
# one file at a time, alone, since beside WordPress and browser tests V8's timing-driven GC
# heuristics shift those counts (a reuse check promoted 22–24 MB there, 2–3 MB alone).
npx vitest run --no-file-parallelism test/backups/*-memory.test.ts test/backups/offsite/*-memory.test.ts
