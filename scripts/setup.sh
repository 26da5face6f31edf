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

# npm ci only when the lock file changed since the last install (or nothing is installed).
stamp="node_modules/.sitewarden-installed"
lock_hash="$(sha256sum package-lock.json | cut -d' ' -f1)-$(node --version)"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$lock_hash" ]]; then
  npm ci --no-audit --no-fund --loglevel=error
  echo "$lock_hash" > "$stamp"
fi
echo "setup: npm dependencies installed"
