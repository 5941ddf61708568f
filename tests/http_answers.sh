#!/usr/bin/env bash
# The HTTP answers of one gesso-server to a fixed list of requests, normalised (request and task ids,
# times, signatures, dates and the bound port replaced by placeholders) so that two builds can be
# compared byte for byte: a refactoring must not change a single answer.
#   tests/http_answers.sh BIN_DIR > answers.txt     # BIN_DIR holds gesso-server and gesso
#   diff <(tests/http_answers.sh build/before/server) <(tests/http_answers.sh build/debug/server)
# It starts its own PostgreSQL in a temporary directory and removes it afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(cd "$1" && pwd)
source deploy/postgres.sh
dir=$(mktemp -d /tmp/gesso-answers.XXXXXX)
chmod 755 "$dir"
server_pid=""
cleanup() {
  [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  pg_stop "$dir/pg" immediate
  rm -rf "$dir"
}
trap cleanup EXIT
pg_start "$dir" "$dir/pg"
export GESSO_DATABASE_URL="host=$dir user=gesso dbname=postgres"
export GESSO_MEDIA_DIR="$dir/media" GESSO_MEDIA_SIGNING_KEY="answers-signing-key-0123456789abcdef012345"
export GESSO_DRAIN_GRACE_MS=0 GESSO_LOG_LEVEL=error
"$bin/gesso" migrate >/dev/null
key=$("$bin/gesso" account create --name answers --credits 100 --json | sed -n 's/.*"api_key":"\([^"]*\)".*/\1/p')
poor=$("$bin/gesso" account create --name poor --credits 1 --json | sed -n 's/.*"api_key":"\([^"]*\)".*/\1/p')
GESSO_LISTEN=127.0.0.1:0 "$bin/gesso-server" >"$dir/out" 2>"$dir/err" &
server_pid=$!
for _ in $(seq 100); do grep -q "listening on" "$dir/out" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$dir/out" | head -n 1)
base="http://127.0.0.1:$port"

# One request: method, path, extra curl arguments. Prints the status line, the headers that carry
# meaning (sorted, without Date), and the body.
ask() {
  local method=$1 path=$2
  shift 2
  echo "=== $method $path $*" | sed -E -e "s/$key/KEY/g" -e "s/$poor/POOR/g" -e 's/task_[a-z0-9]{26,}/TASK/g'
  curl -s -i -X "$method" "$base$path" "$@" | tr -d '\r' |
    awk 'BEGIN { body = 0 } body { print; next } /^$/ { body = 1; print; next } { print }' |
    grep -v -i '^date:' |
    sed -E -e 's/req_[A-Za-z0-9]+/REQ/g' -e 's/task_[a-z0-9]{26,}/TASK/g' -e "s/$port/PORT/g" \
      -e 's/"created_at":[0-9]+/"created_at":TIME/g'
  echo
}
json=(-H 'Content-Type: application/json')
auth=(-H "Authorization: Bearer $key")
ask POST /api/v1/tasks/create "${auth[@]}" "${json[@]}" -d '{"model_id":"vendor4-2","prompt":"a fox"}'
ask POST /api/v1/tasks/create "${auth[@]}" "${json[@]}" -d '{"model_id":"vendor1-pro","prompt":"x","aspect_ratio":"9:16"}'
ask POST /api/v1/tasks/create -H "Authorization: Bearer $poor" "${json[@]}" -d '{"model_id":"vendor1-pro","prompt":"x"}'
ask POST /api/v1/tasks/create "${auth[@]}" "${json[@]}" -d '{"model_id":"vendor4-2","prompt":"x","image_url":[]}'
ask POST /api/v1/tasks/create "${auth[@]}" "${json[@]}" -d '{"model_id":"nope","prompt":"x"}'
ask POST /api/v1/tasks/create "${auth[@]}" "${json[@]}" -d '{"model_id":"vendor4-2","prompt":"x","aspect_ratio":"7:3"}'
ask POST /api/v1/tasks/create "${auth[@]}" "${json[@]}" -d '{"model_id":"vendor4-2"}'
ask POST /api/v1/tasks/create "${auth[@]}" "${json[@]}" -d '{"model_id":"vendor4-2","prompt":"   "}'
ask POST /api/v1/tasks/create "${auth[@]}" "${json[@]}" -d '{"model_id":"vendor4-2","prompt":"x","image_urls":["http://127.0.0.1/x.png"]}'
ask POST /api/v1/tasks/create "${auth[@]}" "${json[@]}" -d '{"model_id":'
ask POST /api/v1/tasks/create "${auth[@]}" "${json[@]}" -d '[1,2]'
ask POST /api/v1/tasks/create "${auth[@]}" -H 'Content-Type: text/plain' -d '{}'
ask POST /api/v1/tasks/create "${json[@]}" -d '{}'
ask POST /api/v1/tasks/create -H 'Authorization: Bearer sk-nope' "${json[@]}" -d '{}'
ask POST /api/v1/tasks/create -H 'Authorization: Basic abc' "${json[@]}" -d '{}'
created=$(curl -s "$base/api/v1/tasks/create" "${auth[@]}" "${json[@]}" -d '{"model_id":"vendor3-image-2","prompt":"p"}')
ask GET "/api/v1/tasks/$(sed -n 's/.*"task_id":"\([^"]*\)".*/\1/p' <<<"$created")" "${auth[@]}"
ask GET /api/v1/tasks/create "${auth[@]}"
ask GET /api/v1/tasks/task_00000000000000000000000000 "${auth[@]}"
ask GET /api/v1/tasks/not-an-id "${auth[@]}"
ask GET /api/v1/tasks/task_00000000000000000000000000
ask DELETE /api/v1/tasks/task_00000000000000000000000000 "${auth[@]}"
ask GET /healthz
ask GET /readyz
ask GET /nowhere
ask GET /media/2026/01/01/task_x.png
ask GET '/media/2026/01/01/task_x.png?expires=1&sig=00'
ask GET '/media/../etc/passwd?expires=4000000000&sig=00'
