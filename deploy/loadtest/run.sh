#!/usr/bin/env bash
# Standard load profiles against a local Gesso, single-node or multi-node, with plots
# (docs/benchmarks.md#load-profiles).
#
#   deploy/loadtest/run.sh single|multi journey|create|query|sweep [OUT_DIR]
#
# single: PostgreSQL, one gesso-server (addressed directly) and one gesso-worker.
# multi:  PostgreSQL, three gesso-servers behind HAProxy and three gesso-workers (deploy/local/cluster.sh).
#
# journey: open loop, LOADTEST_RATE (20) journeys a second for LOADTEST_SECONDS (60): create, poll every
#          500 ms until final, download; a mix of image and video models.
# create:  open loop, creates only, LOADTEST_RATE (1000) a second; workers run meanwhile.
# query:   open loop, queries of 64 tasks, LOADTEST_RATE (5000) a second.
# sweep:   the capacity curve: same-run ceilings, then creates at rising offered rates (workers stopped,
#          so the curve is the API's), the knee (highest rate whose p99 stays under LOADTEST_P99_MS, 50,
#          with at least 97% of the offered rate answered 200), then the ledger check.
#
# Results (JSON reports, timelines, summaries, PNG plots) go to OUT_DIR (default
# .gesso-local/loadtest/TOPOLOGY-PROFILE). Needs only a Debian 12 machine: it installs and builds what
# it uses.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
topology="${1:-}"
profile="${2:-}"
[[ "$topology" == single || "$topology" == multi ]] || { sed -n 2,20p "$0"; exit 2; }
[[ "$profile" =~ ^(journey|create|query|sweep)$ ]] || { sed -n 2,20p "$0"; exit 2; }
out="${3:-$root/.gesso-local/loadtest/$topology-$profile}"
seconds="${LOADTEST_SECONDS:-60}"
p99_limit_ms="${LOADTEST_P99_MS:-50}"
mkdir -p "$out"
out=$(cd "$out" && pwd)

deploy/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)" --target gesso-server gesso-worker gesso gesso-load gesso-bare-server >/dev/null
bin="$root/build/release/server"
load="$bin/gesso-load"

export CLUSTER_DIR
CLUSTER_DIR=$(mktemp -d /tmp/gesso-loadtest-XXXXXX)
export CLUSTER_PORT="${LOADTEST_PORT:-18480}" CLUSTER_BIN="$bin"
if [[ "$topology" == single ]]; then
  export CLUSTER_SERVERS=1 CLUSTER_WORKERS=1
  target="http://127.0.0.1:$((CLUSTER_PORT + 1))"  # the server itself, no proxy in between
else
  export CLUSTER_SERVERS=3 CLUSTER_WORKERS=3
  target="http://127.0.0.1:$CLUSTER_PORT"
fi
export GESSO_LOG_LEVEL=warn
bare_pid=""
cleanup() {
  [[ -n "$bare_pid" ]] && kill -TERM "$bare_pid" 2>/dev/null
  deploy/local/cluster.sh stop >/dev/null 2>&1 || true
  rm -rf "$CLUSTER_DIR"
}
trap cleanup EXIT
deploy/local/cluster.sh start >/dev/null
db_url="host=$CLUSTER_DIR port=5432 user=gesso dbname=postgres"
pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)

accounts=64
for _ in $(seq "$accounts"); do
  GESSO_DATABASE_URL="$db_url" "$bin/gesso" account create --name loadtest --credits 1000000000000 --json |
    sed -E 's/.*"api_key":"([^"]+)".*/\1/'
done >"$out/keys"

# run_load NAME ARGS…: one gesso-load run, its report, timeline and summary kept under NAME.
run_load() {
  local name=$1
  shift
  "$load" --target "$target" --keys "$out/keys" --database-url "$db_url" --json "$out/$name.json" \
    --timeline "$out/$name.tsv" "$@" | tee "$out/$name.txt"
}

# json_number FILE PATH: a number from a report (PATH like requests.create.p99_ms); 0 when absent.
json_number() {
  node -e 'let v = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
           for (const k of process.argv[2].split(".")) v = v === undefined ? undefined : v[k];
           console.log(v === undefined ? 0 : v)' "$1" "$2"
}

describe() {
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)," \
    "topology $topology ($CLUSTER_SERVERS server(s), $CLUSTER_WORKERS worker(s)), $(date -u +%Y-%m-%dT%H:%MZ)"
}

case "$profile" in
  journey)
    describe | tee "$out/about.txt"
    run_load journey --rate "${LOADTEST_RATE:-20}" --duration "$seconds" --poll-interval 500 \
      --models vendor4-2:6,vendor3-image-2:3,vendor1-flash:1 --connections 512 --settle 300
    deploy/loadtest/plot.sh timeline "$out/journey.tsv" "$out/journey" "journey, ${LOADTEST_RATE:-20}/s offered ($topology)"
    ;;
  create)
    describe | tee "$out/about.txt"
    run_load create --scenario create --rate "${LOADTEST_RATE:-1000}" --duration "$seconds" --connections 512 \
      --settle 600
    deploy/loadtest/plot.sh timeline "$out/create.tsv" "$out/create" "creates, ${LOADTEST_RATE:-1000}/s offered ($topology)"
    ;;
  query)
    describe | tee "$out/about.txt"
    run_load query --scenario query --rate "${LOADTEST_RATE:-5000}" --duration "$seconds" --connections 256 \
      --settle 600
    deploy/loadtest/plot.sh timeline "$out/query.tsv" "$out/query" "queries, ${LOADTEST_RATE:-5000}/s offered ($topology)"
    ;;
  sweep)
    step_seconds="${LOADTEST_STEP_SECONDS:-10}"
    for n in $(seq "$CLUSTER_WORKERS"); do deploy/local/cluster.sh kill worker "$n" >/dev/null; done
    # Same-run ceilings. The create transaction: pgbench running the server's create statement on the
    # same 64 accounts. A bare Beast server: gesso-bare-server (same threading as gesso-server) driven
    # by the same generator, closed loop, 64 connections. Gesso's own closed-loop figures beside them.
    source tests/bench/statements.sh
    create_script "$out/create.sql" "$accounts" vendor4-2 6
    create_ceiling=$("$pgbin/pgbench" -n -M prepared -h "$CLUSTER_DIR" -U gesso -c 32 -j 2 -T "$step_seconds" \
      -f "$out/create.sql" postgres 2>/dev/null | sed -nE 's/^tps = ([0-9.]+) .*/\1/p' | head -n 1)
    "$root/build/release/tests/gesso-bare-server" >"$out/bare.out" &
    bare_pid=$!
    for _ in $(seq 50); do grep -q listening "$out/bare.out" && break; sleep 0.1; done
    bare_target="http://127.0.0.1:$(sed -E 's/.*://' "$out/bare.out")"
    "$load" --target "$bare_target" --keys "$out/keys" --mode closed --connections 64 --scenario query \
      --duration "$step_seconds" --json "$out/ceiling-bare.json" --quiet >/dev/null
    kill -TERM "$bare_pid"; wait "$bare_pid" 2>/dev/null || true; bare_pid=""
    run_load closed-query --mode closed --connections 64 --scenario query --duration "$step_seconds" \
      --settle 0 --quiet >/dev/null
    run_load closed-create --mode closed --connections 64 --scenario create --duration "$step_seconds" \
      --settle 0 --quiet >/dev/null
    bare_rps=$(json_number "$out/ceiling-bare.json" requests.query.per_second)
    query_rps=$(json_number "$out/closed-query.json" requests.query.per_second)
    create_rps=$(json_number "$out/closed-create.json" requests.create.per_second)
    {
      describe
      printf 'ceiling: bare Beast server (gesso-bare-server, closed loop, 64 connections)   %8.0f req/s\n' "$bare_rps"
      printf 'ceiling: create transaction (pgbench, 32 clients, server statement)          %8.0f tx/s\n' "$create_ceiling"
      printf 'gesso query, closed loop, 64 connections                                  %8.0f req/s  ratio to bare server %.2f\n' \
        "$query_rps" "$(awk -v a="$query_rps" -v b="$bare_rps" 'BEGIN { print a / b }')"
      printf 'gesso create, closed loop, 64 connections                                 %8.0f req/s  ratio to create ceiling %.2f\n' \
        "$create_rps" "$(awk -v a="$create_rps" -v b="$create_ceiling" 'BEGIN { print a / b }')"
    } | tee "$out/ceilings.txt"

    # The sweep: offered rates from 10% to 130% of the create ceiling.
    printf '# offered\tachieved_200\tok_share\tp50_ms\tp90_ms\tp99_ms\tp99_9_ms\tmax_ms\n' >"$out/sweep.tsv"
    knee=0
    for pct in 10 20 30 40 50 60 70 80 90 100 110 120 130; do
      rate=$(awk -v c="$create_ceiling" -v p="$pct" 'BEGIN { printf "%.0f", c * p / 100 }')
      run_load "sweep-$rate" --scenario create --rate "$rate" --duration "$step_seconds" --connections 1024 \
        --settle 0 --quiet >/dev/null
      f="$out/sweep-$rate.json"
      ok=$(json_number "$f" requests.create.ok)
      # Answered 200 a second, over the whole step: from the first arrival to the last answer, which
      # under overload comes long after the arrivals stop.
      achieved=$(awk -v ok="$ok" -v s="$(json_number "$f" elapsed_s)" 'BEGIN { printf "%.0f", ok / s }')
      count=$(json_number "$f" requests.create.count)
      p99=$(json_number "$f" requests.create.p99_ms)
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rate" "$achieved" "$(awk -v a="$ok" -v b="$count" 'BEGIN { print a / b }')" \
        "$(json_number "$f" requests.create.p50_ms)" "$(json_number "$f" requests.create.p90_ms)" "$p99" \
        "$(json_number "$f" requests.create.p99_9_ms)" "$(json_number "$f" requests.create.max_ms)" >>"$out/sweep.tsv"
      if awk -v p="$p99" -v l="$p99_limit_ms" -v ok="$ok" -v r="$rate" -v s="$step_seconds" \
        'BEGIN { exit !(p <= l && ok >= 0.97 * r * s) }'; then
        knee=$rate
      fi
      echo "offered $rate/s: $(tail -n 1 "$out/sweep.tsv")"
    done
    {
      printf 'knee: %s creates/s (p99 <= %s ms, >= 97%% answered 200); %.2f of the create ceiling\n' "$knee" \
        "$p99_limit_ms" "$(awk -v k="$knee" -v c="$create_ceiling" 'BEGIN { print k / c }')"
    } | tee -a "$out/ceilings.txt"
    deploy/loadtest/plot.sh sweep "$out/sweep.tsv" "$out/capacity" "creates: latency against offered load ($topology)" \
      "$p99_limit_ms" "$create_ceiling"

    # Every step's end check compared each created task's charge with the ledger; the books as a whole
    # must balance too. (The backlog, hundreds of thousands of tasks, is not drained here: the journey
    # profile is the one that waits for every task to become final.)
    GESSO_DATABASE_URL="$db_url" "$bin/gesso" ledger check | tee -a "$out/ceilings.txt"
    ;;
esac
echo "results in $out"
