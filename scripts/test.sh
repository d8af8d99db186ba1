#!/usr/bin/env bash
# The test command: installs what is missing, configures, builds, runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
BUILD_DIR=${KEEL_BUILD_DIR:-build}
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$(nproc)" --timeout 600
# Golden hash chains across gcc/clang, -O0/-O3, 1-8 threads, save/restore and aarch64.
bash scripts/determinism.sh
