#!/usr/bin/env bash
# Benchmark (not a test): create and query throughput and latency of a running gesso-server, beside
# the PostgreSQL ceilings for the same statements measured in the same run with pgbench.
#   tests/bench/api_bench.sh [seconds per phase, default 10]
# Prints each figure and the ratios; docs/benchmarks.md records a run.
seconds="${1:-10}"
source "$(dirname "$0")/lib.sh"

# Many accounts, as in real traffic: one account's debits serialise on its row lock.
accounts="${GESSO_BENCH_ACCOUNTS:-64}"
make_accounts "$accounts"
key=$(head -n 1 "$work/keys")
hash=$(printf '%s' "$key" | sha256sum | cut -d' ' -f1)

start_server
task=$(curl -s "$base/api/v1/tasks/create" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
  -d '{"model_id":"vendor4-2","prompt":"benchmark"}' | sed -E 's/.*"task_id":"([^"]+)".*/\1/')

# The server's create statement with a fresh id per transaction: the same work, no HTTP.
create_script "$work/create.sql" "$accounts" vendor4-2 6
# The query statement: key joined to the task by id and account, a point lookup on both primary keys.
cat >"$work/query.sql" <<SQL
SELECT k.account_id, t.id, t.model_id, t.task_type, t.status, t.credits, floor(extract(epoch FROM t.created_at))::bigint,
       t.image_object, t.video_object, t.audio_object, t.error
FROM api_keys k LEFT JOIN tasks t ON t.id = '$task' AND t.account_id = k.account_id
WHERE k.key_hash = '$hash' AND k.revoked_at IS NULL;
SQL
{
  echo "local keys = {"
  sed -E 's/.*/  "&",/' "$work/keys"
  cat <<'LUA'
}
local body = '{"model_id":"vendor4-2","prompt":"benchmark"}'
request = function()
  local headers = { ["Content-Type"] = "application/json",
                    ["Authorization"] = "Bearer " .. keys[math.random(#keys)] }
  return wrk.format("POST", nil, headers, body)
end
LUA
} >"$work/create.lua"
cat >"$work/query.lua" <<LUA
wrk.headers["Authorization"] = "Bearer $key"
LUA

pgbench_tps() {  # clients script
  pgbench_ -c "$1" -j 2 -T "$seconds" -f "$2" | sed -nE 's/^tps = ([0-9.]+) .*/\1/p' | head -n 1
}
to_ms() {  # wrk latency (e.g. 812.00us, 1.23ms, 2.01s) in milliseconds
  awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n = n; else if (v ~ /s$/) n *= 1000; printf "%.2f", n }'
}
wrk_run() {  # connections script path → "rps p50_ms p99_ms non2xx"
  local out; out=$(wrk -t 2 -c "$1" -d "${seconds}s" --latency -s "$2" "$base$3")
  local rps p50 p99 bad
  rps=$(sed -nE 's/^Requests\/sec: *([0-9.]+).*/\1/p' <<<"$out")
  p50=$(awk '$1 == "50%" { print $2 }' <<<"$out")
  p99=$(awk '$1 == "99%" { print $2 }' <<<"$out")
  bad=$(sed -nE 's/^ *Non-2xx or 3xx responses: *([0-9]+).*/\1/p' <<<"$out")
  echo "$rps $(to_ms "$p50") $(to_ms "$p99") ${bad:-0}"
}

echo "Gesso API benchmark: ${seconds}s per phase, $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ)"
create_ceiling=$(pgbench_tps 32 "$work/create.sql")
select_ceiling=$(pgbench_tps 16 "$work/query.sql")
read -r create_rps create_p50 create_p99 create_bad < <(wrk_run 32 "$work/create.lua" /api/v1/tasks/create)
read -r query_rps query_p50 query_p99 query_bad < <(wrk_run 32 "$work/query.lua" "/api/v1/tasks/$task")

printf '\n%-44s %12s\n' "measurement" "per second"
printf '%-44s %12.0f\n' "ceiling: create statement (pgbench, 32 clients, $accounts accounts)" "$create_ceiling"
printf '%-44s %12.0f\n' "ceiling: query statement (pgbench, 16 clients)" "$select_ceiling"
printf '%-44s %12.0f   p50 %s ms  p99 %s ms  non-2xx %s\n' "gesso create (wrk, 32 connections)" "$create_rps" "$create_p50" "$create_p99" "$create_bad"
printf '%-44s %12.0f   p50 %s ms  p99 %s ms  non-2xx %s\n' "gesso query (wrk, 32 connections)" "$query_rps" "$query_p50" "$query_p99" "$query_bad"
awk -v a="$create_rps" -v b="$create_ceiling" -v c="$query_rps" -v d="$select_ceiling" 'BEGIN {
  printf "\nratio create / create ceiling: %.2f (aim >= 0.70)\n", a / b
  printf "ratio query  / query ceiling:  %.2f (aim >= 0.50)\n", c / d }'
"$bin/gesso" ledger check >/dev/null && echo "ledger check after the run: consistent"
