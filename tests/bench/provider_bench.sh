#!/usr/bin/env bash
# Benchmark (not a test): one worker holding many tasks in flight on the asynchronous provider engines
# (replicate, fal, sdcpp, openai-videos, gemini-veo, ark, kling, comfyui), each against its fake in
# gesso-fake-providers. Every prompt asks the fake for a job that never ends ([fake:steps=N]), so every
# task stays in flight: the worker submits the backlog, then polls each task every POLL_MS. Reports the
# submit rate, tasks in flight per engine (the worker's database and the fake's own count), the poll
# rate against the rate the interval asks for, and the worker's resident memory (now and peak) against
# the 256 MiB it must stay within (docs/benchmarks.md).
#   tests/bench/provider_bench.sh [tasks, default 10000] [poll interval ms, default 10000] [observe s, default 30]
tasks="${1:-10000}"
poll_ms="${2:-10000}"
observe="${3:-30}"
source "$(dirname "$0")/lib.sh"
cmake --build --preset release -j"$(nproc)" --target gesso-fake-providers >/dev/null

"$bin/gesso-fake-providers" --listen 127.0.0.1:0 >"$work/fake.out" 2>>"$work/fake.log" &
pids+=($!)
for _ in $(seq 100); do grep -q listening "$work/fake.out" 2>/dev/null && break; sleep 0.1; done
fake=$(sed -E 's/.*(http:[^ ]*).*/\1/' "$work/fake.out")
export BENCH_KEY=bench BENCH_KLING_SECRET=kling-secret  # the fake's default Kling secret
route() {  # route ENGINE PREFIX EXTRA_SETTINGS
  echo "{\"engine\":\"$1\",\"settings\":{\"base_url\":\"$fake/$2\",\"api_key_env\":\"BENCH_KEY\",\"poll_interval_ms\":$poll_ms$3}}"
}
model() {  # model NAME TYPE ROUTE [EXTRA_FIELDS]
  echo "\"$1\":{\"task_type\":\"$2\",\"price\":1,\"deadline_seconds\":86400,\"max_input_images\":0,\"routes\":[$3]${4:-}}"
}
video=',"duration_seconds":5,"aspect_ratios":["16:9"],"default_aspect_ratio":"16:9"'
cat >"$work/catalog.json" <<JSON
{"models":{
 $(model bench-replicate image "$(route replicate replicate ',"model":"black-forest-labs/flux-schnell"')"),
 $(model bench-fal image "$(route fal fal ',"model":"fal-ai/flux/dev"')"),
 $(model bench-sdcpp image "$(route sdcpp sdcpp '')"),
 $(model bench-comfyui image "$(route comfyui comfyui ",\"workflow\":\"$root/deploy/comfyui/text-to-image.json\",\"prompt_node\":\"6\",\"size_node\":\"5\",\"seed_node\":\"3\"")"),
 $(model bench-openai-videos video "$(route openai-videos openai '')" ',"duration_seconds":4,"aspect_ratios":["16:9"],"default_aspect_ratio":"16:9"'),
 $(model bench-veo video "$(route gemini-veo gemini ',"model":"veo-3.1-generate-preview"')" ',"duration_seconds":8,"aspect_ratios":["16:9"],"default_aspect_ratio":"16:9"'),
 $(model bench-ark video "$(route ark ark ',"model":"doubao-seedance-1-0-pro-250528"')" "$video"),
 $(model bench-kling video "$(route kling kling ',"secret_key_env":"BENCH_KLING_SECRET"')" "$video")
}}
JSON
export GESSO_CATALOG="$work/catalog.json"
make_accounts 64
engines=(replicate fal sdcpp comfyui openai-videos veo ark kling)
scripts=()
for e in "${engines[@]}"; do
  case "$e" in
    replicate | fal | sdcpp | comfyui) type=image ratio=1:1 ;;
    *) type=video ratio=16:9 ;;
  esac
  create_script "$work/create-$e.sql" 64 "bench-$e" 1 "$type" "$ratio"
  scripts+=(-f "$work/create-$e.sql@1")
done
pgbench_ -c 8 -j 2 -t $((tasks / 8)) "${scripts[@]}" >/dev/null
# A job that never ends at the fake (pgbench would read ":steps" as a variable, so it is set here).
psql_ -c "UPDATE tasks SET prompt = '[fake:steps=1000000000] benchmark', deadline_at = now() + interval '1 day'" >/dev/null
tasks=$(psql_ -c "SELECT count(*) FROM tasks")

observe_in_flight "$tasks" "$observe" 18591
failed=$(psql_ -c "SELECT count(*) FROM tasks WHERE status = 4")

echo "Gesso provider in-flight benchmark: $tasks tasks on ${#engines[@]} async engines, poll every ${poll_ms} ms, $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ)"
awk -v n="$tasks" -v s="$submit_s" 'BEGIN { printf "submitted to the providers: %d tasks in %.2f s (%.0f/s)\n", n, s, n / s }'
echo "in flight by model (database, status 1-2 with a provider job):"
psql_ -c "SELECT '  ' || model_id || ': ' || count(*) FROM tasks WHERE status IN (1, 2) AND provider_job IS NOT NULL GROUP BY model_id ORDER BY model_id"
echo "failed: $failed; the fake's own count of jobs it holds: $(curl -s "$fake/stats")"
print_poll_rate "$tasks" "$poll_ms" "$observe"
echo "oldest due poll waiting: ${late} s"
awk -v r="$rss_kib" -v h="$peak_kib" 'BEGIN { printf "worker memory: resident %.1f MiB, peak %.1f MiB; ceiling 256 MiB (peak/ceiling %.2f)\n", r / 1024, h / 1024, h / 1024 / 256 }'
