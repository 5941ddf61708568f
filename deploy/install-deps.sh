#!/usr/bin/env bash
# Installs everything Gesso needs to build, test and run on Debian 12. Safe to run again.
#   deploy/install-deps.sh          # building, running and every test
#   deploy/install-deps.sh build    # building only (the container image's build stage)
set -euo pipefail
packages=(
  build-essential g++ cmake pkg-config
  libboost1.81-all-dev libpqxx-dev libssl-dev libpng-dev libjpeg-dev libwebp-dev
  python3 python3-yaml
)
if [[ "${1:-}" != build ]]; then
  # Running (PostgreSQL, ffmpeg, HAProxy for the local cluster) and testing (clang for the fuzzers,
  # wrk for benchmarks, Node.js for the Kubernetes manifest validation and the OpenAPI checks, jq for the
  # curl client example).
  packages+=(ffmpeg postgresql postgresql-contrib curl jq wrk gnuplot-nox haproxy clang-format clang libclang-rt-14-dev)
  # A Node.js from elsewhere (NodeSource) brings its own npm; Debian's npm would conflict with it.
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    packages+=(nodejs npm)
  fi
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
