#!/usr/bin/env bash
# The README's run line: set up, build, and start the daemon in the foreground.
# Configuration comes from SITEWARDEN_* environment variables (see systemd/sitewarden.env.example).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
npm run --silent build
exec node dist/src/cli.js start
