#!/usr/bin/env bash
# Sets up and runs Gesso locally on Debian 12: installs packages, builds, starts a private
# PostgreSQL in .gesso-local/, migrates, creates a demo account, and serves the API until Ctrl-C.
#   deploy/run-local.sh                     # listens on 127.0.0.1:8080
#   GESSO_LISTEN=0.0.0.0:9000 deploy/run-local.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
state="$root/.gesso-local"

deploy/install-deps.sh
pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)" --target gesso-server gesso

as_owner() { if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }

mkdir -p "$state"
if [[ $(id -u) -eq 0 ]]; then chown postgres "$state"; chmod 755 "$state"; fi
if [[ ! -f "$state/data/PG_VERSION" ]]; then
  as_owner "$pgbin/initdb" -D "$state/data" -U gesso --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
fi
as_owner "$pgbin/pg_ctl" -D "$state/data" -l "$state/postgres.log" -w \
  -o "-k $state -c listen_addresses=''" start >/dev/null
export GESSO_DATABASE_URL="host=$state port=5432 user=gesso dbname=postgres"
export GESSO_LISTEN="${GESSO_LISTEN:-127.0.0.1:8080}"

server_pid=""
cleanup() {
  trap - EXIT INT TERM
  [[ -n "$server_pid" ]] && kill -TERM "$server_pid" 2>/dev/null && wait "$server_pid" || true
  as_owner "$pgbin/pg_ctl" -D "$state/data" -m fast -w stop >/dev/null 2>&1 || true
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

"$bin/gesso-server" 2>>"$state/server.log" &
server_pid=$!
sleep 0.5
base="http://$GESSO_LISTEN"
cat <<MSG

Gesso is running at $base (logs: $state/server.log). A demo account has 1000 credits; its key is in
$state/demo-key. Create a task:

  curl -s $base/api/v1/tasks/create -H "Authorization: Bearer $key" \\
       -H 'Content-Type: application/json' -d '{"model_id":"vendor3-image-2","prompt":"a red fox in snow"}'

Then poll it with the task_id it returns:

  curl -s $base/api/v1/tasks/TASK_ID -H "Authorization: Bearer $key"

This version has no worker yet: tasks are accepted, charged and stay queued (task_status 1).

Administer with: GESSO_DATABASE_URL="$GESSO_DATABASE_URL" $bin/gesso help
Press Ctrl-C to stop.
MSG
wait "$server_pid"
