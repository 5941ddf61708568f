#!/usr/bin/env bash
# 10 000 clients waiting on one gesso-server with GET /api/v1/tasks/{id}?wait=N (docs/benchmarks.md#waiting):
# the server's extra resident memory while they wait (against the 100 MiB the issue allows), the
# database transactions per second meanwhile (none per waiter: they wait on the final-task notification),
# and how fast all of them answer once their tasks are announced final.
#   tests/bench/wait_bench.sh [CLIENTS] [WAIT_S]    # defaults 10000 and 30
# WAIT_S 0 measures the same connections idle after a plain query instead (the per-connection baseline).
source "$(dirname "$0")/lib.sh"
clients=${1:-10000}
wait_s=${2:-30}
ulimit -n "$(ulimit -Hn)"  # the client and the server each hold one descriptor per waiter
make_accounts 1
key=$(head -n 1 "$work/keys")
GESSO_MAX_CONNECTIONS=$((clients + 1000)) start_server
server_pid=${pids[-1]}
account=$(psql_ -c "SELECT account_id FROM api_keys LIMIT 1")
psql_ -c "INSERT INTO tasks (id, account_id, request_id, model_id, task_type, prompt, aspect_ratio, credits,
                             engine, max_attempts, deadline_at)
          SELECT 'task_0' || lpad(n::text, 25, '0'), $account, 'req_bench', 'vendor4-2', 'image', 'p', '1:1', 6,
                 'builtin', 3, now() + interval '1 hour'
          FROM generate_series(1, $clients) n"
rss() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$server_pid/status"; }
commits() { psql_ -c "SELECT xact_commit FROM pg_stat_database WHERE datname = 'postgres'"; }
curl -s -H "Authorization: Bearer $key" "$base/api/v1/tasks/task_0$(printf '%025d' 1)" >/dev/null
before_kib=$(rss)
cat >"$work/waiters.py" <<PY
import asyncio, os, sys, time
host, port = "${base#http://}".split(":")
async def one(n, ready, answered):
    r, w = await asyncio.open_connection(host, int(port))
    task = "task_0" + str(n).zfill(25)
    w.write(f"GET /api/v1/tasks/{task}?wait=$wait_s HTTP/1.1\r\nHost: b\r\nAuthorization: Bearer $key\r\n\r\n".encode())
    await w.drain()
    if $wait_s == 0:  # the baseline: answered at once, then the connection is held idle
        head = await r.readuntil(b"\r\n\r\n")
        await r.readexactly(int([l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")][0].split(b":")[1]))
        ready.append(n)
        while not (os.path.exists("$work/ready") and open("$work/ready").read().startswith("go")):
            await asyncio.sleep(0.5)
        answered.append((time.time(), False))
        w.close()
        return
    ready.append(n)
    head = await r.readuntil(b"\r\n\r\n")
    length = int([l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")][0].split(b":")[1])
    body = await r.readexactly(length)
    answered.append((time.time(), b'"task_status":3' in body))
    if b'"task_status"' not in body:
        print("not a task:", head.split(b"\r\n")[0].decode(), body[:120], file=sys.stderr)
    w.close()
async def main():
    ready, answered = [], []
    jobs = []
    for n in range(1, $clients + 1):
        jobs.append(asyncio.create_task(one(n, ready, answered)))
        if n % 200 == 0:  # 2 000 a second: each arrival costs two reads, within the server's database queue
            await asyncio.sleep(0.1)
    while len(ready) < $clients:
        await asyncio.sleep(0.1)
    open("$work/ready", "w").write("ready")
    while not open("$work/ready").read().startswith("go"):
        await asyncio.sleep(0.05)
    await asyncio.gather(*jobs)
    if not answered:
        answered.append((time.time(), False))
    finals = [t for t, final in answered if final]
    print(len(answered), len(finals), max(t for t, _ in answered))
asyncio.run(main())
PY
python3 "$work/waiters.py" >"$work/waiters.out" &
client_pid=$!
until [[ -s "$work/ready" ]]; do sleep 0.2; done
sleep 3  # every request read and registered
waiting_kib=$(rss)
c1=$(commits); sleep 5; c2=$(commits)
# Finalize every task and announce it the way end_leases does (200 ids a notification).
announced=$(date +%s.%N)
psql_ -c "UPDATE tasks SET status = 3, finished_at = now() WHERE account_id = $account" \
      -c "SELECT count(pg_notify('gesso_tasks_final', ids)) FROM (SELECT string_agg(id, ',') AS ids FROM
            (SELECT id, (row_number() OVER ()) / 200 AS chunk FROM tasks WHERE account_id = $account) n GROUP BY chunk) c" >/dev/null
echo go >"$work/ready"
wait "$client_pid"
read -r answered finals last <"$work/waiters.out"
awk -v c="$clients" -v b="$before_kib" -v w="$waiting_kib" -v t="$(( (c2 - c1) ))" -v a="$announced" -v l="$last" \
    -v n="$answered" -v f="$finals" 'BEGIN {
  printf "%d clients waiting: server RSS %.1f MiB -> %.1f MiB: +%.1f MiB, %.2f of the 100 MiB allowed (%.1f KiB a waiter)\n",
         c, b / 1024, w / 1024, (w - b) / 1024, (w - b) / 1024 / 100, (w - b) / c
  printf "database transactions while they waited: %.1f/s (none per waiter)\n", t / 5
  printf "answered %d, %d of them final; the last %.2f s after the announcement\n", n, f, l - a }'
