#!/usr/bin/env bash
# Builds the libFuzzer targets with clang-14 (AddressSanitizer + UndefinedBehaviorSanitizer)
# and runs each for a bounded time on a copy of its seed corpus.
#
#   scripts/fuzz.sh                 every fuzz target, 20 s each
#   scripts/fuzz.sh 60              every target, 60 s each
#   scripts/fuzz.sh 20 fuzz_protocol_snapshot fuzz_protocol_token    just these
#
# Target fuzz_X reads its seeds from tests/fuzz/corpus/X/ (never written to: new inputs go
# to build-fuzz/corpus/X/). A crash leaves its input in build-fuzz/artifacts/ and makes
# the script exit non-zero. Environment: BUILD_DIR (default build-fuzz), JOBS (2).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build-fuzz}"
JOBS="${JOBS:-2}"
SECONDS_EACH="${1:-20}"
shift || true

if ! command -v clang++-14 >/dev/null || \
   ! ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a >/dev/null 2>&1; then
  echo "fuzz: needs clang-14 and libclang-rt-14-dev (scripts/setup.sh installs them)" >&2
  exit 2
fi

CC=clang-14 CXX=clang++-14 cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DKEEL_BUILD_FUZZ=ON -DKEEL_BUILD_TESTS=OFF -DKEEL_BUILD_BENCH=OFF -DKEEL_WITH_TBB=OFF >/dev/null

if [ $# -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(cd "$ROOT/tests/fuzz" && ls fuzz_*.cpp | sed 's/\.cpp$//')
fi

cmake --build "$BUILD_DIR" -j"$JOBS" --target "${targets[@]}"

mkdir -p "$BUILD_DIR/artifacts"
failed=()
for t in "${targets[@]}"; do
  name="${t#fuzz_}"
  work="$BUILD_DIR/corpus/$name"
  mkdir -p "$work"
  seeds="$ROOT/tests/fuzz/corpus/$name"
  echo "== $t: ${SECONDS_EACH}s (seeds: ${seeds#$ROOT/})"
  if ! "$BUILD_DIR/bin/$t" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$BUILD_DIR/artifacts/$t-" \
      "$work" $( [ -d "$seeds" ] && echo "$seeds" ) 2>"$BUILD_DIR/$t.log"; then
    failed+=("$t")
    tail -40 "$BUILD_DIR/$t.log"
  else
    grep -E "stat::number_of_executed_units|cov:" "$BUILD_DIR/$t.log" | tail -2 || true
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]} (inputs in $BUILD_DIR/artifacts/)" >&2
  exit 1
fi
echo "fuzz: ${#targets[@]} targets ran ${SECONDS_EACH}s each without a finding"
