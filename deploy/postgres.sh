# Sourced by the deploy scripts: a private PostgreSQL cluster in a directory of its own, listening only
# on a Unix socket in that directory (no TCP). initdb refuses root, so as root it runs as `postgres`.

pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)

pg_as_owner() { if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }

# pg_start SOCKET_DIR DATA_DIR [SERVER_OPTIONS]: creates the cluster on first use (user gesso, trust
# authentication on the socket), then starts it unless it runs. Its log is SOCKET_DIR/postgres.log.
pg_start() {
  local socket_dir=$1 data=$2 options=${3:-}
  mkdir -p "$socket_dir"
  if [[ $(id -u) -eq 0 ]]; then chown postgres "$socket_dir"; fi
  chmod 755 "$socket_dir"
  if [[ ! -f "$data/PG_VERSION" ]]; then
    pg_as_owner "$pgbin/initdb" -D "$data" -U gesso --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
  fi
  pg_running "$data" && return 0
  pg_as_owner "$pgbin/pg_ctl" -D "$data" -l "$socket_dir/postgres.log" -w \
    -o "-k $socket_dir -c listen_addresses='' $options" start >/dev/null
}

# pg_stop DATA_DIR [fast|immediate|smart]
pg_stop() {
  [[ -f "$1/postmaster.pid" ]] || return 0
  pg_as_owner "$pgbin/pg_ctl" -D "$1" -m "${2:-fast}" -w stop >/dev/null 2>&1 || true
}

pg_running() { pg_as_owner "$pgbin/pg_ctl" -D "$1" status >/dev/null 2>&1; }
