#!/usr/bin/env bash
# Benchmark (not a test): how fast workers drain a backlog of tasks (create → status 3) and how long a
# new task waits before a worker claims it, beside the claim ceiling measured in the same run.
#   tests/bench/drain_bench.sh [backlog, default 20000] [workers, default 1]
#   CLAIM_SQL=other_claim.sql tests/bench/drain_bench.sh    # with another claim_due_tasks
# The model renders 16-pixel images, so the figures are those of the queue, not of rendering.
backlog="${1:-20000}"
workers="${2:-1}"
source "$(dirname "$0")/lib.sh"

cat >"$work/catalog.json" <<'JSON'
{"models":{"bench-image":{"task_type":"image","price":1,"engine_settings":{"long_side":16}}}}
JSON
export GESSO_CATALOG="$work/catalog.json"
make_accounts 64
# CLAIM_SQL=FILE replaces claim_due_tasks before the run (to compare claim statements in one sitting).
[[ -n "${CLAIM_SQL:-}" ]] && psql_ -f "$CLAIM_SQL" >/dev/null

# The worker's claim statement (storage/task_queue.cpp: claim_due_tasks, sql/011), 32 tasks per claim, leases of an hour so
# nothing is claimed twice: the most tasks PostgreSQL can hand out per second here.
psql_ -c "INSERT INTO tasks (id, account_id, request_id, model_id, task_type, prompt, aspect_ratio, credits,
                             engine, max_attempts, deadline_at)
          SELECT 'task_ceiling_' || g, 1, 'req_ceiling', 'bench-image', 'image', 'p', '1:1', 1, 'builtin', 3,
                 now() + interval '1 hour'
          FROM generate_series(1, 400000) g"
cat >"$work/claim.sql" <<'SQL'
SELECT t.id, t.lease_token::text, t.model_id, t.task_type, t.prompt, t.aspect_ratio, t.image_urls::text,
       t.engine, t.attempts, t.max_attempts, t.provider_job, t.error, t.cancel_requested_at IS NOT NULL
FROM claim_due_tasks('pgbench', 3600000, 32, 0, 1000) t;
SQL
claims_per_s=$(pgbench_ -c 4 -j 2 -T 5 -f "$work/claim.sql" | sed -nE 's/^tps = ([0-9.]+) .*/\1/p' | head -n 1)
claim_ceiling=$(awk -v t="$claims_per_s" 'BEGIN { printf "%.0f", t * 32 }')
psql_ -c "DELETE FROM tasks WHERE id LIKE 'task_ceiling_%'"
psql_ -c "VACUUM ANALYZE tasks"

# A backlog of real tasks (debited, with ledger charges) made with the server's create statement.
create_script "$work/create.sql" 64 bench-image 1
pgbench_ -c 8 -j 2 -t $((backlog / 8)) -f "$work/create.sql" >/dev/null
queued=$(psql_ -c "SELECT count(*) FROM tasks WHERE status = 1")

started=$(date +%s.%N)
for _ in $(seq "$workers"); do start_worker; done
while [[ $(psql_ -c "SELECT count(*) FROM tasks WHERE status IN (1, 2)") != 0 ]]; do sleep 0.2; done
wall=$(awk -v s="$started" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
read -r drained drain_seconds < <(psql_ -F ' ' -c "SELECT count(*), extract(epoch FROM max(finished_at) - min(started_at))
                                                  FROM tasks WHERE status = 3")
failed=$(psql_ -c "SELECT count(*) FROM tasks WHERE status = 4")

# Dispatch latency: tasks created one by one through the API while the workers are idle.
start_server
key=$(head -n 1 "$work/keys")
psql_ -c "CREATE TABLE dispatch_marker AS SELECT now() AS since"
for _ in $(seq 300); do
  curl -s -o /dev/null "$base/api/v1/tasks/create" -H "Authorization: Bearer $key" \
    -H 'Content-Type: application/json' -d '{"model_id":"bench-image","prompt":"dispatch"}'
  sleep 0.02
done
while [[ $(psql_ -c "SELECT count(*) FROM tasks WHERE status IN (1, 2)") != 0 ]]; do sleep 0.2; done
read -r n p50 p99 max < <(psql_ -F ' ' -c "
  SELECT count(*),
         round(1000 * percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM started_at - created_at))::numeric, 1),
         round(1000 * percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM started_at - created_at))::numeric, 1),
         round(1000 * max(extract(epoch FROM started_at - created_at))::numeric, 1)
  FROM tasks WHERE created_at > (SELECT since FROM dispatch_marker)")

echo "Gesso drain benchmark: backlog $queued tasks, $workers worker(s), $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ)"
printf '%-52s %10s\n' "claim ceiling (pgbench, claim statement, 4 clients x 32)" "$claim_ceiling tasks/s"
awk -v n="$drained" -v s="$drain_seconds" -v c="$claim_ceiling" -v w="$wall" -v f="$failed" 'BEGIN {
  printf "%-52s %10.0f tasks/s  (%d tasks in %.2f s, wall %.2f s, failed %d)\n", "drain: first claim to last success", n / s, n, s, w, f
  printf "ratio drain / claim ceiling: %.2f\n", n / s / c }'
printf 'dispatch latency, create to claim (%s tasks at ~40/s): p50 %s ms  p99 %s ms  max %s ms\n' "$n" "$p50" "$p99" "$max"
"$bin/gesso" ledger check >/dev/null && echo "ledger check after the run: consistent"
