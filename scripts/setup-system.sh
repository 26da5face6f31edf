#!/usr/bin/env bash
# Installs the Debian packages Sitewarden needs. Idempotent: safe to run again.
#   scripts/setup-system.sh          runtime packages (Chromium for Lighthouse audits)
#   scripts/setup-system.sh --test   plus what the tests need (WordPress, PHP, MariaDB; systemd for
#                                    systemd-analyze, which checks the unit; nothing is started with it;
#                                    Firefox ESR for the dashboard's Firefox test; PostgreSQL, whose
#                                    binaries the tests run as a throwaway cluster of their own)
#   scripts/setup-system.sh --cluster
#                                    plus PostgreSQL, whose binaries scripts/cluster-try.sh runs as a
#                                    throwaway cluster of its own (none of Debian's is made or started)
set -euo pipefail

runtime_packages=(ca-certificates chromium)
test_packages=(
  wordpress php-cli php-mysql php-curl php-zip php-xml php-mbstring mariadb-server
  wordpress-theme-twentytwentyone wordpress-theme-twentytwentytwo wordpress-theme-twentytwentythree
  zip unzip
  systemd
  firefox-esr
  postgresql
)

packages=("${runtime_packages[@]}")
if [[ "${1:-}" == "--test" ]]; then
  packages+=("${test_packages[@]}")
elif [[ "${1:-}" == "--cluster" ]]; then
  packages+=(postgresql)
fi

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} > 0)); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup-system: missing packages (${missing[*]}); run this script as root" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # Services installed here are started by the test bed itself, never by the package's init scripts.
  # PostgreSQL's packages would create (and, under systemd, start) a `main` cluster on port 5432: the
  # tests use only the binaries (test/support/postgres.ts makes its own cluster), so while this install
  # brings PostgreSQL in, a postgresql-common drop-in turns that off; it is removed afterwards, so a
  # later install by the machine's owner behaves as Debian's does. A machine that already has
  # PostgreSQL never gets here for it, and its clusters are left alone.
  no_main_cluster=/etc/postgresql-common/createcluster.d/sitewarden-setup-no-main-cluster.conf
  if [[ " ${missing[*]} " == *" postgresql "* ]]; then
    mkdir -p "$(dirname "$no_main_cluster")"
    echo "create_main_cluster = false  # written by sitewarden's scripts/setup-system.sh during its install" > "$no_main_cluster"
    trap 'rm -f "$no_main_cluster"' EXIT
  fi
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  rm -f "$no_main_cluster"
fi
echo "setup-system: ${#packages[@]} packages present"
