#!/usr/bin/env bash
# Installs every Debian 12 package Keel needs to build and test, when it is missing.
# Safe to run repeatedly: it only calls apt-get when something is absent.
set -euo pipefail

PACKAGES=(
  g++ cmake make pkg-config
  libglm-dev libxxhash-dev libtbb-dev
  libflatbuffers-dev flatbuffers-compiler
  libasio-dev libsodium-dev libzstd-dev
  libgtest-dev libcli11-dev nlohmann-json3-dev
  libbullet-dev
  clang-14 libclang-rt-14-dev  # libFuzzer + sanitizers for scripts/fuzz.sh
)

# The determinism check's extra configurations (scripts/determinism.sh): clang, an aarch64
# cross compiler, and qemu user-mode emulation to run what it builds. Installed only by
# `scripts/setup.sh --determinism`, which that script calls.
DETERMINISM_PACKAGES=(clang-14 g++-aarch64-linux-gnu qemu-user)
if [ "${1:-}" = "--determinism" ]; then
  PACKAGES=("${DETERMINISM_PACKAGES[@]}")
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "keel setup: installing ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1; then
  SUDO="sudo"
else
  echo "keel setup: missing packages (${missing[*]}) and not root; install them with apt-get" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
