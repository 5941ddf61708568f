#!/usr/bin/env bash
# Offline validation of the Kubernetes manifests (docs/deploy.md#validation): installs the pinned npm
# packages, validates every overlay, then runs the validator's own tests (broken manifests refused).
set -euo pipefail
cd "$(dirname "$0")"
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
node validate.mjs
node --test
