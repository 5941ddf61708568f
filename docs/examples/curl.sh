#!/usr/bin/env bash
# Creates an image task, waits until it is final and downloads the result: curl and jq only.
#   GESSO_URL=http://127.0.0.1:8080 GESSO_KEY=sk-... docs/examples/curl.sh "a red fox in snow" fox.png
# Prints the final task; exits 1 (printing the API's msg) when a request is refused or the task fails.
set -euo pipefail
url="${GESSO_URL:-http://127.0.0.1:8080}"
prompt="${1:-a red fox in snow}"
out="${2:-result.png}"
auth=(-H "Authorization: Bearer ${GESSO_KEY:?set GESSO_KEY to an sk- API key}")

# One Idempotency-Key per task you mean to create: if the answer is lost, sending the same request
# with the same key returns the same task instead of charging twice.
idempotency_key="curl-$(date +%s%N)-$RANDOM"
body=$(jq -n --arg prompt "$prompt" '{model_id: "vendor3-image-2", prompt: $prompt, aspect_ratio: "3:2"}')
for attempt in 1 2 3; do
  answer=$(curl -sS --max-time 30 "${auth[@]}" -H 'Content-Type: application/json' \
    -H "Idempotency-Key: $idempotency_key" -d "$body" "$url/api/v1/tasks/create") && break
  sleep "$attempt"
done
if [[ $(jq -r .code <<<"$answer") != 200 ]]; then
  echo "create refused: $(jq -r .msg <<<"$answer")" >&2
  exit 1
fi
task_id=$(jq -r .data.task_id <<<"$answer")
echo "created $task_id for $(jq -r .data.credits <<<"$answer") credits" >&2

# ?wait=60 answers as soon as the task is final, or after 60 s with the task as it is then.
while :; do
  answer=$(curl -sS --max-time 70 "${auth[@]}" "$url/api/v1/tasks/$task_id?wait=60")
  if [[ $(jq -r .code <<<"$answer") != 200 ]]; then
    echo "query refused: $(jq -r .msg <<<"$answer")" >&2
    exit 1
  fi
  status=$(jq -r .data.task_status <<<"$answer")
  [[ $status == 3 || $status == 4 ]] && break
done
jq -c .data <<<"$answer"
if [[ $status == 4 ]]; then
  echo "task failed ($(jq -r .data.error.kind <<<"$answer")): $(jq -r .data.error.message <<<"$answer")" >&2
  exit 1
fi
curl -sS --fail --max-time 300 -o "$out" "$(jq -r .data.image_url <<<"$answer")"
echo "saved $out" >&2
