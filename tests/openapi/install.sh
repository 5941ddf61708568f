#!/usr/bin/env bash
# Installs the pinned npm packages of the OpenAPI checks (package-lock.json) once, and again when the lock
# file changes. Several test processes may call it at once: one installs, the others wait for it.
set -euo pipefail
cd "$(dirname "$0")"
exec 9>.install.lock
flock 9
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
