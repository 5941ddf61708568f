#!/usr/bin/env bash
# Sets up and runs Gesso locally on Debian 12: installs packages, builds, starts a private
# PostgreSQL in .gesso-local/, migrates, creates a demo account, runs gesso-server and a
# gesso-worker, completes a first image task, and serves until Ctrl-C.
#   deploy/run-local.sh                     # listens on 127.0.0.1:8080
#   GESSO_LISTEN=0.0.0.0:9000 deploy/run-local.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
state="$root/.gesso-local"

deploy/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)" --target gesso-server gesso-worker gesso

source deploy/postgres.sh
pg_start "$state" "$state/data"
export GESSO_DATABASE_URL="host=$state port=5432 user=gesso dbname=postgres"
export GESSO_LISTEN="${GESSO_LISTEN:-127.0.0.1:8080}"
export GESSO_MEDIA_DIR="${GESSO_MEDIA_DIR:-$state/media}"
if [[ ! -s "$state/signing-key" ]]; then
  head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$state/signing-key"
  chmod 600 "$state/signing-key"
fi
export GESSO_MEDIA_SIGNING_KEY="${GESSO_MEDIA_SIGNING_KEY:-$(cat "$state/signing-key")}"

server_pid=""
worker_pid=""
cleanup() {
  trap - EXIT INT TERM
  [[ -n "$worker_pid" ]] && kill -TERM "$worker_pid" 2>/dev/null && wait "$worker_pid" || true
  [[ -n "$server_pid" ]] && kill -TERM "$server_pid" 2>/dev/null && wait "$server_pid" || true
  pg_stop "$state/data" fast
  echo "stopped"
}
trap cleanup EXIT INT TERM

bin="$root/build/release/server"
"$bin/gesso" migrate
if [[ ! -s "$state/demo-key" ]]; then
  "$bin/gesso" account create --name demo --credits 1000 --json >"$state/demo-account.json"
  sed -E 's/.*"api_key":"([^"]+)".*/\1/' "$state/demo-account.json" >"$state/demo-key"
  chmod 600 "$state/demo-key" "$state/demo-account.json"
fi
key=$(cat "$state/demo-key")

"$bin/gesso-server" >"$state/server.out" 2>>"$state/server.log" &
server_pid=$!
"$bin/gesso-worker" >"$state/worker.out" 2>>"$state/worker.log" &
worker_pid=$!
for _ in $(seq 50); do grep -q listening "$state/server.out" 2>/dev/null && break; sleep 0.1; done
base="http://$GESSO_LISTEN"

# A first task, to show the whole path works: create, poll until final, download the PNG.
task=$(curl -s "$base/api/v1/tasks/create" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
  -d '{"model_id":"vendor3-image-2","prompt":"a red fox in snow"}' | sed -E 's/.*"task_id":"([^"]+)".*/\1/')
for _ in $(seq 100); do
  reply=$(curl -s "$base/api/v1/tasks/$task" -H "Authorization: Bearer $key")
  [[ "$reply" == *'"task_status":3'* || "$reply" == *'"task_status":4'* ]] && break
  sleep 0.1
done
image_url=$(sed -nE 's/.*"image_url":"([^"]+)".*/\1/p' <<<"$reply")
if [[ -n "$image_url" ]] && curl -s -o "$state/first-task.png" "$image_url"; then
  echo "First task $task finished: $state/first-task.png ($(stat -c %s "$state/first-task.png") bytes)"
else
  echo "First task $task did not finish: $reply"
fi
cat <<MSG

Gesso is running at $base (logs: $state/server.log). A demo account has 1000 credits; its key is in
$state/demo-key. Create a task:

  curl -s $base/api/v1/tasks/create -H "Authorization: Bearer $key" \\
       -H 'Content-Type: application/json' -d '{"model_id":"vendor3-image-2","prompt":"a red fox in snow"}'

Then poll it with the task_id it returns until task_status is 3 (or 4), and download image_url:

  curl -s $base/api/v1/tasks/TASK_ID -H "Authorization: Bearer $key"

Or wait for it in one request: append ?wait=60. Complete clients in curl, Python and TypeScript:

  GESSO_URL=$base GESSO_KEY=$key docs/examples/curl.sh "a red fox in snow" fox.png

Video models (vendor1-flash, vendor1-pro, vendor2-2) give video_url (H.264 MP4) and audio_url (AAC).
The API described as OpenAPI 3.1: $base/api/v1/openapi.json (docs/openapi.yaml).
Logs: $state/server.log and $state/worker.log (JSON lines). Media: $GESSO_MEDIA_DIR.

Administer with: GESSO_DATABASE_URL="$GESSO_DATABASE_URL" $bin/gesso help
Press Ctrl-C to stop.
MSG
wait "$server_pid"
