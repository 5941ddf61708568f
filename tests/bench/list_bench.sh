#!/usr/bin/env bash
# GET /api/v1/tasks with 100 thousand and then 10 million tasks in the table (docs/benchmarks.md#listing):
# one account's pages (newest, a status filter, a page 50 deep through the cursor) served by gesso-server
# under wrk, against the query endpoint (a primary-key lookup) measured in the same phase as the ceiling.
# The cost must stay flat: the 10 M / 100 k ratio of each figure near 1, and the same buffers per page.
#   tests/bench/list_bench.sh [SECONDS_PER_RUN] [TOTAL_TASKS]    # defaults 8 and 10000000
source "$(dirname "$0")/lib.sh"
seconds=${1:-8}
total=${2:-10000000}
make_accounts 1
key=$(head -n 1 "$work/keys")
start_server
mine=$(psql_ -c "SELECT account_id FROM api_keys LIMIT 1")
# 1 000 other accounts, and the measured account's 2 000 tasks: a tenth failed, spread over 20 days.
psql_ -c "INSERT INTO accounts (name) SELECT 'other-' || n FROM generate_series(1, 1000) n"
insert_tasks() {  # FIRST LAST ACCOUNT_SQL: tasks numbered FIRST..LAST (their ids), created over 20 days
  psql_ -c "INSERT INTO tasks (id, account_id, request_id, model_id, task_type, status, prompt, aspect_ratio,
                               credits, engine, max_attempts, deadline_at, created_at, finished_at)
            SELECT 'task_' || lpad(n::text, 26, '0'), $3, 'req_bench', 'vendor4-2', 'image',
                   CASE WHEN n % 10 = 0 THEN 4 ELSE 3 END, 'p', '1:1', 6, 'builtin', 3, now(),
                   now() - (n % 1728000) * interval '1 second', now()
            FROM generate_series($1, $2) n"
}
insert_tasks 1 2000 "$mine"
insert_tasks 2001 100000 "1 + (n % 1000) + $mine"
psql_ -c "VACUUM ANALYZE tasks"
task=$(psql_ -c "SELECT id FROM tasks WHERE account_id = $mine LIMIT 1")
deep=$(curl -s -H "Authorization: Bearer $key" "$base/api/v1/tasks?limit=20" >/dev/null
       cursor=""
       for _ in $(seq 50); do
         cursor=$(curl -s -H "Authorization: Bearer $key" "$base/api/v1/tasks?limit=20${cursor:+&cursor=$cursor}" |
                  sed -E 's/.*"next_cursor":"([^"]+)".*/\1/')
       done
       echo "$cursor")
cat >"$work/get.lua" <<LUA
wrk.headers["Authorization"] = "Bearer $key"
LUA
rps() { wrk -t 2 -c 16 -d "${seconds}s" -s "$work/get.lua" "$base$1" | awk '/Requests\/sec/ { print $2 }'; }
buffers() {  # the shared buffers one page of the given predicate touches (EXPLAIN ANALYZE, BUFFERS)
  psql_ -c "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT id FROM tasks t WHERE account_id = $mine $1
            ORDER BY created_at DESC, id DESC LIMIT 21" |
    python3 -c 'import json,sys; p=json.load(sys.stdin)[0]["Plan"]; print(p["Shared Hit Blocks"] + p["Shared Read Blocks"])'
}
deep_us=$(python3 -c "import base64,sys; s='$deep'; s+='='*(-len(s)%4); print(base64.urlsafe_b64decode(s).decode().split(':')[1])")
deep_id=$(python3 -c "import base64,sys; s='$deep'; s+='='*(-len(s)%4); print(base64.urlsafe_b64decode(s).decode().split(':')[2])")
deep_sql="AND (created_at, id) < (timestamptz 'epoch' + $deep_us * interval '1 microsecond', '$deep_id')"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { print a / b }'; }
measure() {  # PHASE: one line of figures
  local q l s d
  q=$(rps "/api/v1/tasks/$task")
  l=$(rps "/api/v1/tasks?limit=20")
  s=$(rps "/api/v1/tasks?status=4&limit=20")
  d=$(rps "/api/v1/tasks?limit=20&cursor=$deep")
  printf '%-10s rows %9s   query %8.0f/s   newest %8.0f/s (%.2f)   status=4 %8.0f/s (%.2f)   page 51 %8.0f/s (%.2f)   buffers %s/%s/%s\n' \
    "$1" "$(psql_ -c 'SELECT count(*) FROM tasks')" "$q" "$l" "$(ratio "$l" "$q")" "$s" "$(ratio "$s" "$q")" \
    "$d" "$(ratio "$d" "$q")" "$(buffers "")" "$(buffers "AND status = 4")" "$(buffers "$deep_sql")"
  echo "$l $s $d $q" >"$work/$1"
}
echo "listing: 20 tasks a page of one account's 2 000; wrk, 16 connections, ${seconds}s each; (ratio to the query ceiling)"
measure small
started=$(date +%s)
step=1000000
for ((first = 100001; first <= total; first += step)); do
  last=$((first + step - 1)); ((last > total)) && last=$total
  insert_tasks "$first" "$last" "1 + (n % 1000) + $mine"
done
psql_ -c "VACUUM ANALYZE tasks"
echo "(filled to $total tasks in $(( $(date +%s) - started )) s)"
measure large
read -r l1 s1 d1 q1 <"$work/small"
read -r l2 s2 d2 q2 <"$work/large"
awk -v l1="$l1" -v s1="$s1" -v d1="$d1" -v q1="$q1" -v l2="$l2" -v s2="$s2" -v d2="$d2" -v q2="$q2" 'BEGIN {
  printf "large / small, each against its own ceiling:  newest %.2f   status=4 %.2f   page 51 %.2f\n",
         (l2 / q2) / (l1 / q1), (s2 / q2) / (s1 / q1), (d2 / q2) / (d1 / q1) }'
