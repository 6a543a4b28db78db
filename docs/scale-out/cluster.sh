#!/usr/bin/env bash
# A gridkeeper cluster on one machine, for trying it out: a PostgreSQL server of its own and three gridkeeper nodes
# on one database, with one sealing key. Everything lives under one directory (default ./gk-cluster).
#
#   docs/scale-out/cluster.sh start [dir]   initdb + PostgreSQL on port $PG_PORT, then nodes on $PORTS
#   docs/scale-out/cluster.sh status [dir]  /healthz of every node
#   docs/scale-out/cluster.sh stop [dir]    SIGTERM to the nodes, stop PostgreSQL (the data stays for the next start)
#
# Settings: GRIDKEEPER (the executable, default dist/gridkeeper), PG_PORT (default 55432), PORTS (default
# "8081 8082 8083"), GRIDKEEPER_ADMIN_PASSWORD (first start; default: generated and written to <dir>/admin-password).
# Needs PostgreSQL's server programs (initdb, pg_ctl: Debian's postgresql package) — or set GRIDKEEPER_DATABASE_URL
# to a server you have, and only the nodes are started. Put any HTTP load balancer in front of the node ports.
set -euo pipefail

cmd=${1:-}
dir=$(realpath -m "${2:-gk-cluster}")
exe=$(realpath -m "${GRIDKEEPER:-$(dirname "$0")/../../dist/gridkeeper}")
pg_port=${PG_PORT:-55432}
ports=${PORTS:-8081 8082 8083}

pgbin() {
  local p
  p=$(command -v "$1" 2>/dev/null || ls /usr/lib/postgresql/*/bin/"$1" 2>/dev/null | sort -V | tail -1)
  [ -n "$p" ] || { echo "cluster.sh: $1 not found (install PostgreSQL's server, or set GRIDKEEPER_DATABASE_URL)" >&2; exit 2; }
  echo "$p"
}

# PostgreSQL refuses to run as root: as root, run its programs as the postgres user
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

database_url() { echo "${GRIDKEEPER_DATABASE_URL:-postgres://postgres@127.0.0.1:$pg_port/postgres}"; }

start() {
  [ -x "$exe" ] || { echo "cluster.sh: $exe missing (node build.mjs)" >&2; exit 2; }
  mkdir -p "$dir"
  if [ -z "${GRIDKEEPER_DATABASE_URL:-}" ]; then
    if [ ! -d "$dir/pg" ]; then
      mkdir -p "$dir/pg"
      [ "$(id -u)" = 0 ] && chown postgres "$dir/pg"
      as_pg "$(pgbin initdb)" -D "$dir/pg" -U postgres --auth=trust >/dev/null
    fi
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    as_pg "$(pgbin pg_ctl)" -D "$dir/pg" -l "$dir/pg.log" -w \
      -o "-p $pg_port -k $dir -c listen_addresses=127.0.0.1" start >/dev/null
  fi
  # one sealing key for every node of the installation, kept beside it
  [ -f "$dir/secret-key" ] || { head -c 32 /dev/urandom | base64 > "$dir/secret-key"; chmod 600 "$dir/secret-key"; }
  [ -f "$dir/admin-password" ] || { echo "${GRIDKEEPER_ADMIN_PASSWORD:-$(head -c 15 /dev/urandom | base64 | tr '+/' 'xy')}" > "$dir/admin-password"; chmod 600 "$dir/admin-password"; }
  local n=0
  for port in $ports; do
    n=$((n + 1))
    GRIDKEEPER_DATABASE_URL=$(database_url) GRIDKEEPER_SECRET_KEY=$(cat "$dir/secret-key") \
      GRIDKEEPER_ADMIN_PASSWORD=$(cat "$dir/admin-password") GRIDKEEPER_PORT=$port \
      nohup "$exe" --data-dir "$dir/node$n" >"$dir/node$n.log" 2>&1 &
    echo $! > "$dir/node$n.pid"
  done
  # every node up (they start together: migrations and the first-start bootstrap run once)
  for port in $ports; do
    for _ in $(seq 100); do
      curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
      sleep 0.1
    done
  done
  status
  echo "admin: admin@localhost, password in $dir/admin-password"
}

status() {
  local bad=0
  for port in $ports; do
    if out=$(curl -sS "http://127.0.0.1:$port/healthz" 2>&1); then echo "node :$port $out"; else echo "node :$port down"; bad=1; fi
  done
  return $bad
}

stop() {
  for f in "$dir"/node*.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    kill "$pid" 2>/dev/null || true
    # a node finishes the requests in flight (at most 10 s), then exits
    for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    rm -f "$f"
  done
  if [ -z "${GRIDKEEPER_DATABASE_URL:-}" ] && [ -f "$dir/pg/postmaster.pid" ]; then
    as_pg "$(pgbin pg_ctl)" -D "$dir/pg" -m fast -w stop >/dev/null
  fi
}

case "$cmd" in
  start) start ;;
  status) status ;;
  stop) stop ;;
  *) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
