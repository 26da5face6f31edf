#!/usr/bin/env bash
# Sets up a checkout: Debian packages (scripts/setup-system.sh), then npm dependencies.
# Idempotent and quick when nothing changed.
#   scripts/setup.sh          what the daemon needs
#   scripts/setup.sh --test   plus what the test suite needs
set -euo pipefail
cd "$(dirname "$0")/.."

required_node="20.19.0"
node_version="$(node --version 2>/dev/null | sed 's/^v//' || true)"
if [[ -z "$node_version" ]]; then
  echo "setup: Node.js ${required_node} or newer is required and was not found on PATH" >&2
  exit 1
fi
if [[ "$(printf '%s\n%s\n' "$required_node" "$node_version" | sort -V | head -n1)" != "$required_node" ]]; then
  echo "setup: Node.js ${required_node} or newer is required; this is ${node_version}" >&2
  exit 1
fi

bash scripts/setup-system.sh "$@"

# better-sqlite3's native module: prebuild-install fetches a prebuilt one from GitHub, and without
# that (no network, or no release for this Node) node-gyp compiles SQLite, about 2 minutes of CPU.
# What was compiled once is kept as a local prebuild (a machine-wide cache outside the checkout,
# named by package version, Node ABI, platform and architecture, as prebuild-install names its
# downloads), so the next clean checkout on this machine unpacks it instead of compiling again.
prebuilds="${SITEWARDEN_PREBUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sitewarden/prebuilds}"
export npm_config_better_sqlite3_local_prebuilds="$prebuilds"

# npm ci only when the lock file changed since the last install (or nothing is installed).
# --prefer-offline: the lock file pins every tarball, so npm's cache is used without asking the registry first.
stamp="node_modules/.sitewarden-installed"
lock_hash="$(sha256sum package-lock.json | cut -d' ' -f1)-$(node --version)"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$lock_hash" ]]; then
  npm ci --prefer-offline --no-audit --no-fund --loglevel=error
  echo "$lock_hash" > "$stamp"
fi

sqlite_binary="node_modules/better-sqlite3/build/Release/better_sqlite3.node"
sqlite_prebuild="$prebuilds/better-sqlite3-v$(node -p 'require("better-sqlite3/package.json").version')-node-v$(node -p process.versions.modules)-$(node -p 'process.platform + "-" + process.arch').tar.gz"
# Only on glibc (a musl build is named the same); getconf, not `ldd --version | grep -q`, whose early
# exit can SIGPIPE ldd and, under pipefail, make the test fail at random.
if [[ -f "$sqlite_binary" && ! -f "$sqlite_prebuild" ]] && getconf GNU_LIBC_VERSION > /dev/null 2>&1; then
  mkdir -p "$prebuilds"
  tar -czf "$sqlite_prebuild.tmp.$$" -C node_modules/better-sqlite3 build/Release/better_sqlite3.node
  mv "$sqlite_prebuild.tmp.$$" "$sqlite_prebuild"
fi
echo "setup: npm dependencies installed"

if [[ "${1:-}" == "--test" ]]; then
  bash scripts/wordpress-builds.sh
fi
