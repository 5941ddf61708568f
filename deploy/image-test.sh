#!/usr/bin/env bash
# Builds the container image (deploy/Containerfile) with buildah and runs it: a server and a worker
# from the image complete a task against a real PostgreSQL, and the PNG downloads (docs/deploy.md).
# No registry is reachable, so the Debian 12 base is made with debootstrap first (cached under
# build/image/ and in buildah's storage). Needs root (chroot isolation).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work="$root/build/image"
store=(--storage-driver vfs)
mkdir -p "$work"

packages=(buildah debootstrap postgresql curl file)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# 1. The base image, from a debootstrap root filesystem.
if ! buildah "${store[@]}" inspect --type image localhost/debian:12 >/dev/null 2>&1; then
  rm -rf "$work/rootfs"
  debootstrap --variant=minbase bookworm "$work/rootfs" http://deb.debian.org/debian >"$work/debootstrap.log"
  base=$(buildah "${store[@]}" from scratch)
  buildah "${store[@]}" copy "$base" "$work/rootfs" / >/dev/null
  buildah "${store[@]}" commit -q "$base" localhost/debian:12 >/dev/null
  buildah "${store[@]}" rm "$base" >/dev/null
  rm -rf "$work/rootfs"
fi

# 2. The image, from deploy/Containerfile with the local base.
sed -e 's|^FROM debian:12-slim|FROM localhost/debian:12|' -e 's|^FROM debian:12 AS|FROM localhost/debian:12 AS|' \
  deploy/Containerfile >"$work/Containerfile"
buildah "${store[@]}" build -q --isolation chroot -f "$work/Containerfile" -t localhost/gesso:test . >"$work/build.log" 2>&1 ||
  { tail -30 "$work/build.log"; exit 1; }

# 3. Run it: PostgreSQL on a private socket, then migrate, an account, a server and a worker, all
#    from the image, and one task from create to downloaded PNG.
source deploy/postgres.sh
db="$work/db"
media="$work/media"
rm -rf "$db" "$media"
mkdir -p "$media"
chmod 777 "$media"
pg_start "$db" "$db/data"
containers=()
cleanup() {
  pkill -f "^/usr/local/bin/gesso-(server|worker)$" 2>/dev/null || true
  for c in "${containers[@]}"; do buildah "${store[@]}" rm "$c" >/dev/null 2>&1 || true; done
  pg_stop "$db/data" immediate
  buildah "${store[@]}" rmi localhost/gesso:test >/dev/null 2>&1 || true
}
trap cleanup EXIT
port=$((24000 + $$ % 1000))
env=(-v "$db:$db" -v "$media:/media" -e "GESSO_DATABASE_URL=host=$db port=5432 user=gesso dbname=postgres"
  -e GESSO_MEDIA_DIR=/media -e GESSO_MEDIA_SIGNING_KEY=image-test-signing-key-0123456789abcdef
  -e "GESSO_LISTEN=127.0.0.1:$port" -e GESSO_DRAIN_GRACE_MS=0)
# Each program runs in a container of its own, made here (not in a subshell) so cleanup sees it.
container=""
new_container() {
  container=$(buildah "${store[@]}" from localhost/gesso:test)
  containers+=("$container")
}
in_image() { buildah "${store[@]}" run --isolation chroot "${env[@]}" "$container" -- "$@"; }
new_container
in_image /usr/local/bin/gesso migrate >/dev/null
whoami_in_image=$(in_image id -u)
key=$(in_image /usr/local/bin/gesso account create --name image-test --credits 100 --json |
  sed -E 's/.*"api_key":"([^"]+)".*/\1/')
new_container
in_image /usr/local/bin/gesso-server >"$work/server.log" 2>&1 &
new_container
in_image /usr/local/bin/gesso-worker >"$work/worker.log" 2>&1 &
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.2; done
task=$(curl -sf "http://127.0.0.1:$port/api/v1/tasks/create" -H "Authorization: Bearer $key" \
  -H 'Content-Type: application/json' -d '{"model_id":"vendor4-2","prompt":"from the image"}' |
  sed -E 's/.*"task_id":"([^"]+)".*/\1/')
reply=""
for _ in $(seq 100); do
  reply=$(curl -sf "http://127.0.0.1:$port/api/v1/tasks/$task" -H "Authorization: Bearer $key")
  [[ "$reply" == *'"task_status":3'* || "$reply" == *'"task_status":4'* ]] && break
  sleep 0.2
done
url=$(sed -nE 's/.*"image_url":"([^"]+)".*/\1/p' <<<"$reply")
curl -sf -o "$work/task.png" "$url" || true
# The load generator ships in the image too: a short journey run from it, end check included.
echo "$key" >"$media/load-keys"
chmod 644 "$media/load-keys"
new_container
load_status=0
in_image /usr/local/bin/gesso-load --target "http://127.0.0.1:$port" --keys /media/load-keys --rate 4 \
  --duration 1 --poll-interval 200 --settle 60 --quiet >"$work/load.txt" 2>&1 || load_status=$?
size=$(buildah "${store[@]}" images --format '{{.Size}}' localhost/gesso:test)
if [[ "$whoami_in_image" != 10001 || $load_status != 0 ]] || ! file "$work/task.png" | grep -q "PNG image data, 512 x 512"; then
  echo "image test FAILED: user $whoami_in_image; task $task: $reply; gesso-load exit $load_status:"
  cat "$work/load.txt"
  tail -5 "$work/server.log" "$work/worker.log"
  exit 1
fi
echo "image test passed: localhost/gesso:test ($size) runs as uid 10001; task $task succeeded from the image; gesso-load from the image passed its end check"
