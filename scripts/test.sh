#!/usr/bin/env bash
# The README's test line (and CI's): set up everything the tests need, then lint, type-check,
# build and run every test, including the integration tests against real WordPress.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test

# Three lanes side by side, each mostly one core's work, so the machine's cores are not left idle
# by one-threaded tools (issue 36): the linters; the type check, then the build (the daemon tests
# run dist/); the memory tests. The memory tests read V8's own counts (bytes promoted, ArrayBuffers
# held) in worker processes, one file at a time: beside WordPress and browser tests V8's
# timing-driven GC heuristics shift those counts (a reuse check promoted 22–24 MB there, 2–3 MB
# alone), beside the linters they do not (they passed under a load average of 7).
lanes_dir="$(mktemp -d)"
trap 'rm -rf "$lanes_dir"' EXIT
declare -A lanes=()
lane() {
  local name="$1"
  shift
  ("$@") > "$lanes_dir/$name.log" 2>&1 &
  lanes[$name]=$!
}
# The linters and the type check yield to the memory tests (nice 10), the lane that takes longest: 136 s for
# the three lanes against 144-154 s without (the lanes alone, one run with nice and two without).
lane lint nice -n 10 npm run --silent lint
# The build emits without checking types again: the type check just before covers src/ with the same options
# (tsconfig.build.json extends tsconfig.json), and checking them twice cost this lane 15 s.
lane typecheck-build nice -n 10 bash -c 'npm run --silent typecheck && npm run --silent build:unchecked'
lane memory-tests npx vitest run --no-file-parallelism test/backups/*-memory.test.ts test/backups/offsite/*-memory.test.ts
failed=()
for name in lint typecheck-build memory-tests; do
  status=0
  wait "${lanes[$name]}" || status=$?
  echo "=== $name (exit $status) ==="
  cat "$lanes_dir/$name.log"
  if ((status != 0)); then failed+=("$name"); fi
done
if ((${#failed[@]} > 0)); then
  echo "test: failed: ${failed[*]}" >&2
  exit 1
fi

# Every other test file, and the version matrix in the same run: SITEWARDEN_TEST_MATRIX=1 adds a second
# vitest project (vitest.config.ts) that runs the WordPress-facing files again on the newest real
# release (6.5.5 from @wp-playground/wordpress-builds), interleaved with the rest on the same workers.
SITEWARDEN_TEST_MATRIX=1 npx vitest run --exclude 'test/**/*-memory.test.ts'
