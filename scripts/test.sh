#!/usr/bin/env bash
# The test command: installs what is missing, configures, builds, runs every test.
# Phases: build (scripts/build.sh), ctest, the determinism check (golden hash chains across
# gcc -O3 / -O2 / -O0, clang-14, aarch64 under qemu, wasm32 under node, 1-8 threads,
# save/restore), the deploy/ checks (scripts/deploy-check.sh), and every fuzz target for
# 20 s (scripts/fuzz.sh). Prints how long each phase took.
set -euo pipefail
cd "$(dirname "$0")/.."
START=$SECONDS
TIMES=()
phase_done() { TIMES+=("$1 $(( SECONDS - $2 )) s"); }

t=$SECONDS
bash scripts/build.sh
phase_done build "$t"

BUILD_DIR=${KEEL_BUILD_DIR:-build}
t=$SECONDS
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$(nproc)" --timeout 600
phase_done ctest "$t"

t=$SECONDS
bash scripts/determinism.sh
phase_done determinism "$t"

t=$SECONDS
bash scripts/deploy-check.sh "$BUILD_DIR"
phase_done deploy "$t"

t=$SECONDS
bash scripts/fuzz.sh 20
phase_done fuzz "$t"

summary=$(printf '%s, ' "${TIMES[@]}")
echo "test.sh: all passed in $((SECONDS - START)) s (${summary%, })"
