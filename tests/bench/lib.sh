# Shared by the benchmark scripts: build, a private PostgreSQL, accounts, servers and workers.
# Source it from tests/bench/*.sh; everything started here is stopped on exit.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
"$root/deploy/install-deps.sh"
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)" --target gesso-server gesso-worker gesso >/dev/null
pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
bin="$root/build/release/server"
work=$(mktemp -d /tmp/gesso-bench-XXXXXX)
pids=()

as_owner() { if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }
bench_cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  as_owner "$pgbin/pg_ctl" -D "$work/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap bench_cleanup EXIT

[[ $(id -u) -eq 0 ]] && chown postgres "$work"
as_owner "$pgbin/initdb" -D "$work/data" -U gesso --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync >/dev/null
as_owner "$pgbin/pg_ctl" -D "$work/data" -l "$work/pg.log" -w \
  -o "-k $work -c listen_addresses='' -c max_connections=200 -c shared_buffers=512MB" start >/dev/null
export GESSO_DATABASE_URL="host=$work port=5432 user=gesso dbname=postgres"
export GESSO_MEDIA_DIR="$work/media"
export GESSO_MEDIA_SIGNING_KEY="bench-signing-key-0123456789abcdef0123456789"
export GESSO_LOG_LEVEL=warn
psql_() { "$pgbin/psql" -X -q -At -h "$work" -U gesso -d postgres "$@"; }
pgbench_() { "$pgbin/pgbench" -n -M prepared -h "$work" -U gesso "$@" postgres 2>/dev/null; }
"$bin/gesso" migrate >/dev/null

# make_accounts N: N accounts with ample credits; their keys in $work/keys, one per line.
make_accounts() {
  for _ in $(seq "$1"); do
    "$bin/gesso" account create --name bench --credits 1000000000000 --json |
      sed -E 's/.*"api_key":"([^"]+)".*/\1/' >>"$work/keys"
  done
}

source "$root/tests/bench/statements.sh"

# start_server: starts gesso-server on a free port and sets $base.
start_server() {
  local out="$work/server-${#pids[@]}.out"
  GESSO_LISTEN=127.0.0.1:0 "$bin/gesso-server" >"$out" 2>>"$work/server.log" &
  pids+=($!)
  for _ in $(seq 100); do grep -q listening "$out" 2>/dev/null && break; sleep 0.05; done
  base="http://127.0.0.1:$(grep -o ':[0-9]*$' "$out" | tr -d :)"
}

# start_worker [ENV=VALUE…]: starts a gesso-worker with extra settings.
start_worker() {
  env "$@" "$bin/gesso-worker" >/dev/null 2>>"$work/worker.log" &
  pids+=($!)
}
