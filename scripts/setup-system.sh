#!/usr/bin/env bash
# Installs the Debian packages Sitewarden needs. Idempotent: safe to run again.
#   scripts/setup-system.sh          runtime packages (Chromium for Lighthouse audits)
#   scripts/setup-system.sh --test   plus what the tests need (WordPress, PHP, MariaDB; systemd for
#                                    systemd-analyze, which checks the unit; nothing is started with it;
#                                    Firefox ESR for the dashboard's Firefox test)
set -euo pipefail

runtime_packages=(ca-certificates chromium)
test_packages=(
  wordpress php-cli php-mysql php-curl php-zip php-xml php-mbstring mariadb-server
  wordpress-theme-twentytwentyone wordpress-theme-twentytwentytwo wordpress-theme-twentytwentythree
  zip unzip
  systemd
  firefox-esr
)

packages=("${runtime_packages[@]}")
if [[ "${1:-}" == "--test" ]]; then
  packages+=("${test_packages[@]}")
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
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "setup-system: ${#packages[@]} packages present"
