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
