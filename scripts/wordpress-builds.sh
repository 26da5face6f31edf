#!/usr/bin/env bash
# The tests' newest WordPress release and the core packages the loopback mirror offers come from WordPress
# Playground's release builds (@wp-playground/wordpress-builds, pinned with its integrity in
# scripts/wordpress-builds.json; test/support/wordpress/releases.ts reads them). Only the package's release
# zips are kept (26 MB of its 383 MB and 12,000 files), once per machine, outside the checkout: as a dev
# dependency, npm ci unpacked the whole package into every clean checkout (npm ci 63–66 s with it, 43–47 s
# without). Run by scripts/setup.sh --test; idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

spec() { node -p "require('./scripts/wordpress-builds.json').$1"; }
name="$(spec package)"
version="$(spec version)"
integrity="$(spec integrity)"
dir="${SITEWARDEN_WORDPRESS_BUILDS:-${XDG_CACHE_HOME:-$HOME/.cache}/sitewarden/wordpress-builds-$version}"
[[ -f "$dir/wp-versions.json" ]] && exit 0

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
# npm's own cache first; the registry only when it holds no copy.
npm pack "$name@$version" --prefer-offline --silent --pack-destination "$scratch" > /dev/null
tarball=("$scratch"/*.tgz)
actual="sha512-$(node -e "
  const hash = require('node:crypto').createHash('sha512');
  require('node:fs').createReadStream(process.argv[1]).on('data', (chunk) => hash.update(chunk)).on('end', () => process.stdout.write(hash.digest('base64')));
" "${tarball[0]}")"
if [[ "$actual" != "$integrity" ]]; then
  echo "setup: $name@$version does not match the integrity in scripts/wordpress-builds.json (got $actual)" >&2
  exit 1
fi
tar -xzf "${tarball[0]}" -C "$scratch" package/src/wordpress
mkdir -p "$(dirname "$dir")"
rm -rf "$dir"
mv "$scratch/package/src/wordpress" "$dir"
echo "setup: WordPress release builds $version in $dir"
