#!/usr/bin/env bash
# Installs the systemd unit for this checkout and an example configuration.
#   scripts/install-service.sh            into / (then: systemctl daemon-reload; systemctl enable --now sitewarden)
#   scripts/install-service.sh --root D   into D instead (for packaging and tests)
# An existing /etc/sitewarden/sitewarden.env is never overwritten.
set -euo pipefail
cd "$(dirname "$0")/.."
checkout="$(pwd)"
root="/"
if [[ "${1:-}" == "--root" ]]; then
  root="${2:?--root needs a directory}"
fi

unit_dir="${root%/}/etc/systemd/system"
config_dir="${root%/}/etc/sitewarden"
mkdir -p "$unit_dir" "$config_dir"
sed "s#/opt/sitewarden#${checkout}#g; s#/usr/bin/node#$(command -v node)#" systemd/sitewarden.service > "$unit_dir/sitewarden.service.tmp"
mv "$unit_dir/sitewarden.service.tmp" "$unit_dir/sitewarden.service"
if [[ ! -f "$config_dir/sitewarden.env" ]]; then
  install -m 0640 systemd/sitewarden.env.example "$config_dir/sitewarden.env"
fi
echo "installed $unit_dir/sitewarden.service and $config_dir/sitewarden.env"
