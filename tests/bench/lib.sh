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

# observe_in_flight TASKS OBSERVE_S PORT: starts a worker with its probes on PORT, waits until every one
# of TASKS has a provider job (it was submitted upstream), then counts the worker's polls (its "waiting"
# outcomes) over OBSERVE_S seconds. Sets submit_s, polls_before, polls_after, late (the oldest due poll's
# wait), in_flight_gauge, rss_kib and peak_kib (VmRSS, VmHWM).
observe_in_flight() {
  local tasks="$1" observe="$2" port="$3"
  GESSO_WORKER_LISTEN="127.0.0.1:$port" start_worker
  local worker_pid=${pids[-1]}
  metric() { curl -s "http://127.0.0.1:$port/metrics" | awk -v m="$1" '$1 ~ "^"m { s += $2 } END { print s + 0 }'; }
  local started
  started=$(date +%s.%N)
  while [[ $(psql_ -c "SELECT count(*) FROM tasks WHERE provider_job IS NOT NULL") -lt $tasks ]]; do
    kill -0 "$worker_pid" 2>/dev/null || { echo "the worker exited:"; tail -5 "$work/worker.log"; exit 1; }
    sleep 0.2
  done
  submit_s=$(awk -v s="$started" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
  sleep 2
  polls_before=$(metric 'gesso_tasks_finished_total\{.*outcome="waiting"')
  sleep "$observe"
  polls_after=$(metric 'gesso_tasks_finished_total\{.*outcome="waiting"')
  in_flight_gauge=$(metric gesso_remote_tasks_in_flight)
  late=$(metric gesso_queue_oldest_due_seconds)
  rss_kib=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$worker_pid/status")
  peak_kib=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$worker_pid/status")
}

# print_poll_rate TASKS POLL_MS OBSERVE_S: the polls a second observe_in_flight counted, against the rate
# the interval asks for.
print_poll_rate() {
  awk -v a="$polls_before" -v b="$polls_after" -v t="$3" -v n="$1" -v p="$2" 'BEGIN {
    printf "polls: %.0f/s; the interval asks for %.0f/s (ratio %.2f)\n", (b - a) / t, n / (p / 1000), (b - a) / t / (n / (p / 1000)) }'
}
