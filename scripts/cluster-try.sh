#!/usr/bin/env bash
# Cluster mode to try on this machine (docs/cluster.md, "Trying it"): a throwaway PostgreSQL cluster made
# with Debian's binaries (initdb, pg_ctl), then one `--role api` process and two `--role worker` processes,
# each with its own data directory, all on 127.0.0.1 and free ports. It prints the dashboard's address and
# login, and runs until Ctrl-C, which stops the processes, then PostgreSQL, and removes the directory.
#   scripts/cluster-try.sh [--dir D]   start in D (absent or empty; default a new directory under /tmp)
#   scripts/cluster-try.sh --stop D    stop the try-out running in D, from another terminal
# WORKER_KINDS (default uptime,audits,backups,updates) is both workers' --kinds; any other SITEWARDEN_* variable
# in the environment is given to every process. As root, PostgreSQL runs as Debian's `postgres` user
# (initdb refuses root); missing, the postgresql package is installed (scripts/setup-system.sh --cluster).
set -euo pipefail
cd "$(dirname "$0")/.."

PROCESSES=(api worker-1 worker-2)
STOP_WAIT_SECONDS=40

dir=""
stop_only=false
case "${1:-}" in
  "") ;;
  --dir) dir="${2:?--dir needs a directory}" ;;
  --stop) dir="${2:?--stop needs the directory of the try-out}" stop_only=true ;;
  *)
    echo "cluster-try: unknown option $1 (--dir D, --stop D)" >&2
    exit 2
    ;;
esac

# Runs a PostgreSQL program, as Debian's `postgres` user when this is root, from the cluster's directory.
as_postgres() {
  if [[ $(id -u) -eq 0 ]]; then
    (cd "$dir/postgres" && setpriv --reuid=postgres --regid=postgres --init-groups -- "$@")
  else
    (cd "$dir/postgres" && "$@")
  fi
}

# The pid of a process of the try-out, if it still runs as that process (its data directory in its environment).
running_pid() {
  local pid
  pid="$(cat "$dir/$1.pid" 2> /dev/null)" || return 1
  { tr '\0' '\n' < "/proc/$pid/environ"; } 2> /dev/null | grep -qxF "SITEWARDEN_DATA_DIR=$dir/$1" || return 1
  echo "$pid"
}

# Stops what runs in $dir, the processes first (each is given its shutdown), then PostgreSQL, and removes $dir.
stop_all() {
  local name pid waited
  trap '' INT TERM # a second Ctrl-C does not cut the stop short (the processes take it as theirs: stop at once)
  for name in "${PROCESSES[@]}"; do
    if pid="$(running_pid "$name")"; then kill -TERM "$pid" 2> /dev/null || true; fi
  done
  for name in "${PROCESSES[@]}"; do
    waited=0
    while pid="$(running_pid "$name")"; do
      if ((waited >= STOP_WAIT_SECONDS * 10)); then
        echo "cluster-try: the $name process did not stop in ${STOP_WAIT_SECONDS} s; killed" >&2
        kill -KILL "$pid" 2> /dev/null || true
      fi
      sleep 0.1
      waited=$((waited + 1))
    done
  done
  if [[ -f "$dir/postgres/data/postmaster.pid" ]]; then
    as_postgres "$pg_bin/pg_ctl" stop -D "$dir/postgres/data" -m fast -w -s || true
  fi
  rm -rf "$dir"
  echo "cluster-try: stopped; $dir removed" >&2
}

# The newest PostgreSQL major Debian installed (/usr/lib/postgresql/<major>/bin), empty if none.
postgres_bin() {
  local found
  found="$(ls -d /usr/lib/postgresql/*/bin/initdb 2> /dev/null | sort -V | tail -n1)"
  [[ -n "$found" ]] && dirname "$found"
}

pg_bin="$(postgres_bin || true)"

if [[ "$stop_only" == true ]]; then
  # Only a try-out's directory (its try.pid), as it is removed.
  [[ -f "$dir/try.pid" ]] || { echo "cluster-try: no try-out in $dir (no try.pid there)" >&2; exit 1; }
  dir="$(cd "$dir" && pwd)"
  # The script that started it stops it (its Ctrl-C); without it (killed), this does.
  owner="$(cat "$dir/try.pid" 2> /dev/null)" || owner=""
  if [[ -n "$owner" ]] && grep -qF cluster-try.sh "/proc/$owner/cmdline" 2> /dev/null && kill -TERM "$owner"; then
    while kill -0 "$owner" 2> /dev/null; do sleep 0.1; done
    echo "cluster-try: stopped; $dir removed" >&2
  else
    stop_all
  fi
  exit 0
fi

fail() {
  echo "cluster-try: $1" >&2
  if [[ -n "${2:-}" && -f "$2" ]]; then
    echo "--- the last lines of $2 ---" >&2
    tail -n 20 "$2" >&2
  fi
  exit 1
}

if [[ -z "$pg_bin" ]]; then
  [[ $(id -u) -eq 0 ]] || fail "no PostgreSQL under /usr/lib/postgresql: as root, run bash scripts/setup-system.sh --cluster"
  bash scripts/setup-system.sh --cluster
  pg_bin="$(postgres_bin)"
fi
if [[ $(id -u) -eq 0 ]] && ! id postgres > /dev/null 2>&1; then
  fail "no postgres user to run PostgreSQL as (initdb refuses root): reinstall Debian's postgresql package"
fi
if [[ ! -f dist/src/cli.js ]]; then
  bash scripts/setup.sh
  npm run --silent build
fi

# Everything made from here on is its owner's only (the settings file holds the database's password and the
# secret key); after the build, whose files the systemd units' users must read.
umask 0077
if [[ -z "$dir" ]]; then
  dir="$(mktemp -d /tmp/sitewarden-cluster-XXXXXX)"
else
  mkdir -p "$dir"
  [[ -z "$(ls -A "$dir")" ]] || fail "$dir is not empty: give a new or empty directory"
  dir="$(cd "$dir" && pwd)"
fi
chmod 0700 "$dir"
echo $$ > "$dir/try.pid"
# From here on, however the script ends (Ctrl-C, --stop, a failure), it leaves nothing running.
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# PostgreSQL: password authentication on 127.0.0.1, trust on its socket, which only its owner reaches.
mkdir -m 0700 "$dir/postgres"
if [[ $(id -u) -eq 0 ]]; then
  chmod 0711 "$dir" # the postgres user reaches its own directory, and nothing else here
  chown postgres:postgres "$dir/postgres"
  as_postgres test -w . 2> /dev/null || fail "the postgres user cannot reach $dir: give a directory under /tmp"
fi
password="$(head -c 18 /dev/urandom | base64 | tr '+/' '-_')"
echo "$password" > "$dir/postgres/password"
[[ $(id -u) -ne 0 ]] || chown postgres:postgres "$dir/postgres/password"
as_postgres "$pg_bin/initdb" --pgdata="$dir/postgres/data" --username=postgres --pwfile="$dir/postgres/password" \
  --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --no-sync --no-instructions > "$dir/postgres/initdb.log" 2>&1 ||
  fail "initdb failed" "$dir/postgres/initdb.log"
rm "$dir/postgres/password"
# A free port, as the kernel sees it now; another program may take it before PostgreSQL does: then another.
free_port() { node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'; }
for attempt in 1 2 3; do
  pg_port="$(free_port)"
  if as_postgres "$pg_bin/pg_ctl" start -D "$dir/postgres/data" -l "$dir/postgres/postgres.log" -w -t 60 -s \
    -o "-c listen_addresses=127.0.0.1 -c port=$pg_port -c unix_socket_directories=$dir/postgres"; then
    break
  fi
  [[ $attempt -lt 3 ]] || fail "PostgreSQL did not start" "$dir/postgres/postgres.log"
done
# The C collation: lists sort as on one machine (docs/cluster.md, "Starting a cluster").
as_postgres "$pg_bin/createdb" --host="$dir/postgres" --port="$pg_port" --username=postgres \
  --locale=C --template=template0 sitewarden || fail "createdb failed" "$dir/postgres/postgres.log"

# The cluster's settings, the same in every process; kept for operator commands (`set -a; . cluster.env`).
{
  echo "SITEWARDEN_DATABASE_URL=postgres://postgres:$password@127.0.0.1:$pg_port/sitewarden"
  echo "SITEWARDEN_SECRET_KEY=$(head -c 32 /dev/urandom | base64)"
  # The blob store every process reads (docs/cluster.md, "Blobs"): on one machine, a directory they share.
  echo "SITEWARDEN_BLOB_TYPE=directory"
  echo "SITEWARDEN_BLOB_PATH=$dir/blobs"
} > "$dir/cluster.env"
mkdir -p "$dir/blobs"
set -a
# shellcheck source=/dev/null
. "$dir/cluster.env"
set +a
# The memory settings the systemd units give the daemon, as scripts/start.sh reads them.
while IFS='=' read -r name value; do export "$name=${value}"; done < <(sed -n 's/^Environment=\(\(MALLOC_[A-Z_]*\|NODE_OPTIONS\)=.*\)$/\1/p' systemd/sitewarden.service)

kinds="${WORKER_KINDS:-uptime,audits,backups,updates}"
start_process() {
  mkdir -m 0700 "$dir/$1"
  SITEWARDEN_DATA_DIR="$dir/$1" SITEWARDEN_HOST=127.0.0.1 SITEWARDEN_PORT=0 \
    node dist/src/cli.js start "${@:2}" > "$dir/$1.log" 2>&1 &
  echo $! > "$dir/$1.pid"
}
start_process api --role api
start_process worker-1 --role worker --kinds "$kinds"
start_process worker-2 --role worker --kinds "$kinds"

# Whether the process on port $1 answers 200 on /readyz (no curl needed: bash's /dev/tcp, in a subshell of its own).
ready() (
  exec 3<> "/dev/tcp/127.0.0.1/$1"
  printf 'GET /readyz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
  read -r -t 5 status <&3
  [[ "$status" == *" 200 "* ]]
)
declare -A ports
for name in "${PROCESSES[@]}"; do
  for ((tries = 0; ; tries++)); do
    running_pid "$name" > /dev/null || fail "the $name process stopped" "$dir/$name.log"
    ((tries < 1200)) || fail "the $name process was not ready after 2 minutes" "$dir/$name.log"
    port="$(sed -n 's/.*"event":"daemon.started".*"listen":"[^"]*:\([0-9]*\)".*/\1/p' "$dir/$name.log")"
    if [[ -n "$port" ]] && ready "$port" 2> /dev/null; then break; fi
    sleep 0.1
  done
  ports[$name]="$port"
done

cat << EOF
Sitewarden in cluster mode, in $dir:
  dashboard and API  http://127.0.0.1:${ports[api]}/   user admin, password: cat $dir/api/admin-password
  API token          TOKEN=\$(cat $dir/api/admin-token)
  workers ($kinds)   http://127.0.0.1:${ports[worker-1]}/readyz  http://127.0.0.1:${ports[worker-2]}/readyz
  PostgreSQL         127.0.0.1:$pg_port, database sitewarden
  logs               $dir/api.log $dir/worker-1.log $dir/worker-2.log $dir/postgres/postgres.log
  operator commands  (set -a; . $dir/cluster.env; node dist/src/cli.js users list)
Ctrl-C stops it all and removes $dir; from another terminal: bash scripts/cluster-try.sh --stop $dir
EOF

# Until Ctrl-C or --stop (the traps above), or until a process stops on its own.
while true; do
  for name in "${PROCESSES[@]}"; do
    running_pid "$name" > /dev/null || fail "the $name process stopped" "$dir/$name.log"
  done
  sleep 1
done
