#!/usr/bin/env bash
# Installs everything Gesso needs to build, test and run on Debian 12. Safe to run again.
set -euo pipefail
packages=(
  build-essential g++ cmake pkg-config clang-format clang libclang-rt-14-dev
  libboost1.81-all-dev libpqxx-dev libssl-dev libpng-dev libjpeg-dev libwebp-dev ffmpeg
  postgresql postgresql-contrib
  curl wrk nginx-light
)
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
