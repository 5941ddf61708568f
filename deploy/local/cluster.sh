#!/usr/bin/env bash
# A multi-node Gesso on one machine (docs/operations.md#a-local-cluster): PostgreSQL, N gesso-server
# processes behind HAProxy, M gesso-worker processes, one shared media directory.
#
#   deploy/local/cluster.sh start                  # build, start everything, print the address
#   deploy/local/cluster.sh start-db               # only PostgreSQL, migrated (then: start)
#   deploy/local/cluster.sh stop                   # drain and stop everything
#   deploy/local/cluster.sh status                 # what runs, and /readyz of each server
#   deploy/local/cluster.sh env                    # export lines for the gesso CLI and clients
#   deploy/local/cluster.sh restart server 2       # graceful: drained in HAProxy, stopped, started, back in
#   deploy/local/cluster.sh kill server|worker 2   # SIGKILL, no restart
#   deploy/local/cluster.sh start-one server|worker 2
#   deploy/local/cluster.sh restart postgres fast|immediate
#
# Settings (environment): CLUSTER_DIR (.gesso-local/cluster), CLUSTER_PORT (8080; servers use the
# next ports, HAProxy's runtime API the one after them), CLUSTER_SERVERS (3), CLUSTER_WORKERS (3),
# CLUSTER_BIN (a build's server/ folder; when unset the release preset is built). GESSO_* variables
# are passed to every server and worker.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
dir="${CLUSTER_DIR:-$root/.gesso-local/cluster}"
port="${CLUSTER_PORT:-8080}"
servers="${CLUSTER_SERVERS:-3}"
workers="${CLUSTER_WORKERS:-3}"
bin="${CLUSTER_BIN:-}"
unset CLUSTER_DIR CLUSTER_PORT CLUSTER_SERVERS CLUSTER_WORKERS CLUSTER_BIN
db_url="host=$dir port=5432 user=gesso dbname=postgres"
admin_port=$((port + servers + 1))

source deploy/postgres.sh
say() { echo "cluster: $*"; }
die() {
  echo "cluster: $*" >&2
  exit 1
}

ensure_binaries() {
  if [[ -z "$bin" ]]; then
    deploy/install-deps.sh
    cmake --preset release >/dev/null
    cmake --build --preset release -j"$(nproc)" --target gesso-server gesso-worker gesso
    bin="$root/build/release/server"
  fi
  [[ -x "$bin/gesso-server" && -x "$bin/gesso-worker" && -x "$bin/gesso" ]] || die "no binaries in $bin"
}

# Whether the process in pid file $1 runs (a zombie whose parent has not reaped it yet does not).
alive() {
  [[ -f "$1" ]] || return 1
  local stat
  stat=$(cat "/proc/$(cat "$1")/stat" 2>/dev/null) || return 1
  [[ "$(awk '{print $3}' <<<"${stat##*)}")" != Z ]]
}

# Sends SIGTERM to the process in pid file $1 and waits up to $2 seconds for it to exit.
stop_pid() {
  local pidfile=$1 wait_s=${2:-60}
  alive "$pidfile" || return 0
  kill -TERM "$(cat "$pidfile")" 2>/dev/null || true
  for _ in $(seq $((wait_s * 10))); do
    alive "$pidfile" || return 0
    sleep 0.1
  done
  say "$(basename "$pidfile" .pid) did not stop in ${wait_s}s; killing it"
  kill -KILL "$(cat "$pidfile")" 2>/dev/null || true
}

start_postgres() { pg_start "$dir" "$dir/pg" "-c max_connections=300"; }
stop_postgres() { pg_stop "$dir/pg" "${1:-fast}"; }

shared_env() {
  export GESSO_DATABASE_URL="$db_url"
  export GESSO_MEDIA_DIR="$dir/media"
  export GESSO_PUBLIC_URL="http://127.0.0.1:$port"  # media links go through the load balancer
  export GESSO_MEDIA_SIGNING_KEY
  GESSO_MEDIA_SIGNING_KEY="$(cat "$dir/signing-key")"
  export GESSO_DRAIN_GRACE_MS="${GESSO_DRAIN_GRACE_MS:-1000}"
}

start_one() {
  local kind=$1 n=$2
  ensure_binaries
  shared_env
  if [[ "$kind" == server ]]; then
    alive "$dir/server-$n.pid" && die "server $n is running"
    GESSO_LISTEN="127.0.0.1:$((port + n))" setsid "$bin/gesso-server" \
      >"$dir/server-$n.out" 2>>"$dir/server-$n.log" </dev/null &
    echo $! >"$dir/server-$n.pid"
    wait_ready "$n"
  elif [[ "$kind" == worker ]]; then
    alive "$dir/worker-$n.pid" && die "worker $n is running"
    GESSO_WORKER_ID="worker-$n" setsid "$bin/gesso-worker" \
      >"$dir/worker-$n.out" 2>>"$dir/worker-$n.log" </dev/null &
    echo $! >"$dir/worker-$n.pid"
  else
    die "start-one: server or worker, not '$kind'"
  fi
}

ready() { [[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$((port + $1))/readyz")" == 200 ]]; }

wait_ready() {
  for _ in $(seq 100); do
    ready "$1" && return 0
    alive "$dir/server-$1.pid" || die "server $1 exited: $(tail -n 3 "$dir/server-$1.log")"
    sleep 0.1
  done
  die "server $1 is not ready after 10 s"
}

# Renders haproxy.cfg with every server.
render_haproxy() {
  local lines=""
  for n in $(seq "$servers"); do
    lines+="  server s$n 127.0.0.1:$((port + n))"$'\n'
  done
  sed -e "s|@DIR@|$dir|g" -e "s|@PORT@|$port|g" -e "s|@ADMIN_PORT@|$admin_port|g" deploy/local/haproxy.cfg.in |
    awk -v up="$lines" '{ if ($0 == "@SERVERS@") printf "%s", up; else print }' >"$dir/haproxy.cfg"
  haproxy -c -q -f "$dir/haproxy.cfg"
}

# One command to HAProxy's runtime API (a TCP socket on loopback); prints the answer.
haproxy_api() {
  local answer
  exec 3<>"/dev/tcp/127.0.0.1/$admin_port" || die "HAProxy's runtime API does not answer on port $admin_port"
  printf '%s\n' "$1" >&3
  answer=$(cat <&3)
  exec 3<&-
  printf '%s' "$answer"
}

# A field of server N's line in `show stat` (CSV: 5 = scur, current sessions; 18 = status).
server_stat() {
  haproxy_api "show stat" | awk -F, -v s="s$1" -v f="$2" '$1 == "gesso" && $2 == s { print $f }'
}

# Takes server N out of rotation and waits (up to 30 s) until it holds no request.
drain_server() {
  haproxy_api "set server gesso/s$1 state drain" >/dev/null
  for _ in $(seq 300); do
    [[ "$(server_stat "$1" 5)" == 0 ]] && return 0
    sleep 0.1
  done
  say "server $1 still holds requests after 30 s of draining; stopping it anyway"
}

# Puts server N back in rotation and waits (up to 10 s) until HAProxy's checks see it up.
admit_server() {
  haproxy_api "set server gesso/s$1 state ready" >/dev/null
  for _ in $(seq 100); do
    [[ "$(server_stat "$1" 18)" == UP ]] && return 0
    sleep 0.1
  done
  die "HAProxy does not see server $1 up after 10 s"
}

# PostgreSQL, migrated, and the shared signing key: what accounts and keys can be made in before
# the servers start.
cmd_start_db() {
  ensure_binaries
  start_postgres
  if [[ ! -s "$dir/signing-key" ]]; then
    head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$dir/signing-key"
    chmod 600 "$dir/signing-key"
  fi
  shared_env
  "$bin/gesso" migrate >/dev/null
}

cmd_start() {
  cmd_start_db
  for n in $(seq "$servers"); do alive "$dir/server-$n.pid" || start_one server "$n"; done
  for n in $(seq "$workers"); do alive "$dir/worker-$n.pid" || start_one worker "$n"; done
  render_haproxy
  if ! alive "$dir/haproxy.pid"; then
    setsid haproxy -db -f "$dir/haproxy.cfg" </dev/null >>"$dir/haproxy.log" 2>&1 &
    echo $! >"$dir/haproxy.pid"
  fi
  for n in $(seq "$servers"); do
    for _ in $(seq 100); do
      [[ "$(server_stat "$n" 18 2>/dev/null)" == UP ]] && break
      alive "$dir/haproxy.pid" || die "haproxy exited: $(tail -n 3 "$dir/haproxy.log")"
      sleep 0.1
    done
  done
  say "running: http://127.0.0.1:$port (HAProxy) → $servers servers on ports $((port + 1))-$((port + servers)), $workers workers"
  say "state, logs and media in $dir; 'deploy/local/cluster.sh env' prints the database URL"
}

cmd_stop() {
  for n in $(seq "$workers"); do stop_pid "$dir/worker-$n.pid" & done
  wait
  for n in $(seq "$servers"); do stop_pid "$dir/server-$n.pid" & done
  wait
  stop_pid "$dir/haproxy.pid" 10
  stop_postgres fast
  say "stopped"
}

cmd_status() {
  for n in $(seq "$servers"); do
    local state="stopped"
    if alive "$dir/server-$n.pid"; then
      state="running, $(ready "$n" && echo ready || echo 'not ready')"
    fi
    echo "server $n (127.0.0.1:$((port + n))): $state"
  done
  for n in $(seq "$workers"); do
    echo "worker $n: $(alive "$dir/worker-$n.pid" && echo running || echo stopped)"
  done
  echo "haproxy (127.0.0.1:$port): $(alive "$dir/haproxy.pid" && echo running || echo stopped)"
  echo "postgres: $(pg_running "$dir/pg" && echo running || echo stopped)"
}

cmd_restart() {
  local what=$1 arg=${2:-}
  case "$what" in
    server)
      [[ -n "$arg" ]] || die "restart server N"
      # Out of the load balancer first, so no new request reaches it; then stop, start, re-admit.
      drain_server "$arg"
      stop_pid "$dir/server-$arg.pid"
      start_one server "$arg"
      admit_server "$arg"
      ;;
    worker)
      stop_pid "$dir/worker-$arg.pid"
      start_one worker "$arg"
      ;;
    postgres)
      stop_postgres "${arg:-fast}"
      start_postgres
      ;;
    *) die "restart server N | worker N | postgres fast|immediate" ;;
  esac
}

cmd_kill() {
  local kind=$1 n=$2
  [[ -f "$dir/$kind-$n.pid" ]] || die "no $kind $n"
  kill -KILL "$(cat "$dir/$kind-$n.pid")" 2>/dev/null || true
  for _ in $(seq 50); do alive "$dir/$kind-$n.pid" || break; sleep 0.1; done
}

case "${1:-}" in
  start) cmd_start ;;
  start-db) cmd_start_db ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  env)
    echo "export GESSO_DATABASE_URL='$db_url'"
    echo "export CLUSTER_URL='http://127.0.0.1:$port'"
    ;;
  restart) cmd_restart "${2:-}" "${3:-}" ;;
  kill) cmd_kill "${2:-}" "${3:-}" ;;
  start-one) start_one "${2:-}" "${3:-}" ;;
  *)
    sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
