#!/usr/bin/env bash
# Installs the Debian packages gradiens builds against, if any are missing.
set -euo pipefail
packages=(cmake ninja-build g++ libdnnl-dev libopenblas-dev libhwy-dev libsleef-dev librandom123-dev
          libfmt-dev doctest-dev libcli11-dev nlohmann-json3-dev zlib1g-dev libssl-dev dataset-fashion-mnist
          libboost-dev libmuparser-dev libginac-dev pkg-config libfftw3-dev gnuplot-nox python3 python3-jsonschema)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "gradiens: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}"
fi
