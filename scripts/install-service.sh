#!/usr/bin/env bash
# Installs the systemd unit for this checkout and an example configuration.
#   scripts/install-service.sh             into / (then: systemctl daemon-reload; systemctl enable --now sitewarden)
#   scripts/install-service.sh --cluster   the units of a cluster's processes instead (docs/cluster.md)
#   scripts/install-service.sh --root D    into D instead (for packaging and tests); with or after --cluster too
# Installs D/etc/systemd/system/sitewarden.service (0644; /opt/sitewarden replaced by this
# checkout, /usr/bin/node by the node on PATH) and D/etc/sitewarden/sitewarden.env (0640, from
# systemd/sitewarden.env.example). With --cluster: sitewarden-api.service and the template
# sitewarden-worker@.service, and D/etc/sitewarden/cluster.env (0640, from the same example), the
# settings every process of the cluster reads. An existing configuration file is never overwritten.
set -euo pipefail
cd "$(dirname "$0")/.."
checkout="$(pwd)"
root="/"
cluster=false
while (($# > 0)); do
  case "$1" in
    --root)
      root="${2:?--root needs a directory}"
      shift 2
      ;;
    --cluster)
      cluster=true
      shift
      ;;
    *)
      echo "install-service: unknown option $1 (--cluster, --root DIR)" >&2
      exit 2
      ;;
  esac
done
node="$(command -v node)" || { echo "install-service: node is not on PATH" >&2; exit 1; }
if [[ ! -f dist/src/cli.js ]]; then
  echo "install-service: note: dist/src/cli.js does not exist yet; run npm run build before starting the service" >&2
fi

unit_dir="${root%/}/etc/systemd/system"
config_dir="${root%/}/etc/sitewarden"
mkdir -p "$unit_dir" "$config_dir"

# A unit of systemd/, for this checkout and this node; replaced at once (a rename), so never half written.
install_unit() {
  sed "s#/opt/sitewarden#${checkout}#g; s#/usr/bin/node#${node}#" "systemd/$1" > "$unit_dir/$1.tmp"
  chmod 0644 "$unit_dir/$1.tmp"
  mv "$unit_dir/$1.tmp" "$unit_dir/$1"
  echo "installed $unit_dir/$1"
}

# A configuration file made from the example: $1 its name, $2 its header (the example's own if empty); an
# existing one is kept as it is.
install_config() {
  if [[ -f "$config_dir/$1" ]]; then
    echo "kept $config_dir/$1 as it is"
    return
  fi
  if [[ -n "$2" ]]; then
    # The example without its header (the lines before the first empty one).
    { printf '%s\n' "$2"; sed '1,/^$/d' systemd/sitewarden.env.example; } > "$config_dir/$1.tmp"
  else
    cp systemd/sitewarden.env.example "$config_dir/$1.tmp"
  fi
  chmod 0640 "$config_dir/$1.tmp"
  mv "$config_dir/$1.tmp" "$config_dir/$1"
  echo "installed $config_dir/$1"
}

cluster_header="# Sitewarden cluster configuration, read by systemd from /etc/sitewarden/cluster.env for each process of
# the cluster on this machine (sitewarden-api.service, sitewarden-worker@.service; docs/cluster.md).
# SITEWARDEN_DATABASE_URL and SITEWARDEN_SECRET_KEY must be set, the same in every process of the cluster;
# SITEWARDEN_DATA_DIR must not be (each unit sets its own), nor a port two processes here would share: a
# process's own settings go in /etc/sitewarden/api.env or /etc/sitewarden/worker-KINDS.env. The rest is
# optional; the values shown are the defaults (an example where there is none).
"

if [[ "$cluster" == true ]]; then
  install_unit sitewarden-api.service
  install_unit sitewarden-worker@.service
  install_config cluster.env "$cluster_header"
else
  install_unit sitewarden.service
  install_config sitewarden.env ""
fi
