#!/usr/bin/env bash
# The README's run line: set up, build, and start the daemon in the foreground.
# Configuration comes from SITEWARDEN_* environment variables (see systemd/sitewarden.env.example).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
npm run --silent build
# The memory settings the systemd unit gives the daemon (its Environment=MALLOC_* and NODE_OPTIONS lines).
while IFS='=' read -r name value; do export "$name=${value}"; done < <(sed -n 's/^Environment=\(\(MALLOC_[A-Z_]*\|NODE_OPTIONS\)=.*\)$/\1/p' systemd/sitewarden.service)
exec node dist/src/cli.js start
