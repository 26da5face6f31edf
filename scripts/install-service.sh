#!/usr/bin/env bash
# Installs the systemd unit for this checkout and an example configuration.
#   scripts/install-service.sh            into / (then: systemctl daemon-reload; systemctl enable --now sitewarden)
#   scripts/install-service.sh --root D   into D instead (for packaging and tests)
# Installs D/etc/systemd/system/sitewarden.service (0644; /opt/sitewarden replaced by this
# checkout, /usr/bin/node by the node on PATH) and D/etc/sitewarden/sitewarden.env (0640, from
# systemd/sitewarden.env.example). An existing sitewarden.env is never overwritten.
set -euo pipefail
cd "$(dirname "$0")/.."
checkout="$(pwd)"
root="/"
if [[ "${1:-}" == "--root" ]]; then
  root="${2:?--root needs a directory}"
fi
node="$(command -v node)" || { echo "install-service: node is not on PATH" >&2; exit 1; }
if [[ ! -f dist/src/cli.js ]]; then
  echo "install-service: note: dist/src/cli.js does not exist yet; run npm run build before starting the service" >&2
fi

unit_dir="${root%/}/etc/systemd/system"
config_dir="${root%/}/etc/sitewarden"
mkdir -p "$unit_dir" "$config_dir"
sed "s#/opt/sitewarden#${checkout}#g; s#/usr/bin/node#${node}#" systemd/sitewarden.service > "$unit_dir/sitewarden.service.tmp"
chmod 0644 "$unit_dir/sitewarden.service.tmp"
mv "$unit_dir/sitewarden.service.tmp" "$unit_dir/sitewarden.service"
echo "installed $unit_dir/sitewarden.service"
if [[ -f "$config_dir/sitewarden.env" ]]; then
  echo "kept $config_dir/sitewarden.env as it is"
else
  install -m 0640 systemd/sitewarden.env.example "$config_dir/sitewarden.env"
  echo "installed $config_dir/sitewarden.env"
fi
