#!/usr/bin/env bash
# Benchmark (not a test): one worker keeping many remote (task-api) tasks in flight. The upstream is
# gesso-bare-server --pending, which accepts every create and answers every poll "queued", so nothing
# ever finishes and every task stays in flight; the worker submits the backlog, then polls each task
# every POLL_MS. Reports the submit rate, the poll rate against the rate the interval asks for, the
# worker's resident memory (now and peak) and how late the oldest due poll is.
#   tests/bench/remote_bench.sh [tasks, default 10000] [poll interval ms, default 10000] [observe s, default 30]
tasks="${1:-10000}"
poll_ms="${2:-10000}"
observe="${3:-30}"
source "$(dirname "$0")/lib.sh"
cmake --build --preset release -j"$(nproc)" --target gesso-bare-server >/dev/null

"$root/build/release/tests/gesso-bare-server" --pending >"$work/upstream.out" &
pids+=($!)
for _ in $(seq 50); do grep -q listening "$work/upstream.out" && break; sleep 0.1; done
upstream="http://127.0.0.1:$(sed -E 's/.*://' "$work/upstream.out")"
cat >"$work/catalog.json" <<JSON
{"models":{"bench-remote":{"task_type":"image","price":1,"engine":"task-api","deadline_seconds":86400,
  "engine_settings":{"base_url":"$upstream","api_key":"sk-bench0123456789012345678901234567890123","model_id":"vendor4-2",
                     "poll_interval_ms":$poll_ms}}}}
JSON
export GESSO_CATALOG="$work/catalog.json" GESSO_FETCH_ALLOW_NETWORKS=127.0.0.0/8
make_accounts 64
create_script "$work/create.sql" 64 bench-remote 1
pgbench_ -c 8 -j 2 -t $((tasks / 8)) -f "$work/create.sql" >/dev/null

observe_in_flight "$tasks" "$observe" 18590
held=$(psql_ -c "SELECT count(*) FROM tasks WHERE status IN (1, 2) AND provider_job IS NOT NULL")

echo "Gesso remote in-flight benchmark: $tasks tasks, poll every ${poll_ms} ms, $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ)"
awk -v n="$tasks" -v s="$submit_s" 'BEGIN { printf "submitted upstream: %d tasks in %.2f s (%.0f/s)\n", n, s, n / s }'
echo "in flight (database): $held; the worker's gauge says $in_flight_gauge"
print_poll_rate "$tasks" "$poll_ms" "$observe"
echo "oldest due poll waiting: ${late} s"
awk -v r="$rss_kib" -v h="$peak_kib" 'BEGIN { printf "worker memory: resident %.1f MiB, peak %.1f MiB (aim < 256 MiB)\n", r / 1024, h / 1024 }'
