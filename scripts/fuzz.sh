#!/usr/bin/env bash
# Builds the libFuzzer targets with clang-14 (AddressSanitizer + UndefinedBehaviorSanitizer)
# and runs each for a bounded time on a copy of its seed corpus. scripts/test.sh (and so
# CI) runs it with the default 20 s per target.
#
#   scripts/fuzz.sh                 every fuzz target, 20 s each, two at a time
#   scripts/fuzz.sh 60              every target, 60 s each
#   scripts/fuzz.sh 20 fuzz_protocol_snapshot fuzz_protocol_token    just these
#
# Target fuzz_X reads its seeds from tests/fuzz/corpus/X/ (never written to: new inputs go
# to build-fuzz/corpus/X/). Only the fuzz targets and the libraries they link are built.
# Any crash, leak, undefined behaviour (UBSan aborts: the targets build with
# -fno-sanitize-recover=all), timeout (-timeout=10 s per input) or out-of-memory fails the
# run: the input is left in build-fuzz/artifacts/, the end of the target's log is printed,
# and the script exits 1. Each target prints one summary line, e.g.
#   fuzz: fuzz_protocol_message ok: 20 s, 515234 execs (24534/s), cov 682, corpus 200 (+200)
# Environment: BUILD_DIR (default build-fuzz), JOBS (targets run at once and build jobs,
# default 2).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build-fuzz}"
JOBS="${JOBS:-2}"
SECONDS_EACH="${1:-20}"
shift || true
START=$SECONDS

bash "$ROOT/scripts/setup.sh"
if ! command -v clang++-14 >/dev/null || \
   ! ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a >/dev/null 2>&1; then
  echo "fuzz: needs clang-14 and libclang-rt-14-dev (scripts/setup.sh installs them)" >&2
  exit 2
fi

if [ $# -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(cd "$ROOT/tests/fuzz" && ls fuzz_*.cpp | sed 's/\.cpp$//')
fi

# --- server and client targets (tests/fuzz/CMakeLists.txt) ---------------------------------
# fuzz_server_session and fuzz_client_receive play whole sessions per input (a match that
# records, loopback UDP for the server's answers, a real handshake): a few hundred inputs a
# second rather than thousands, each reaching deep. Their seeds are real sessions, written by
#   KEEL_FUZZ_WRITE_SEEDS=tests/fuzz/corpus build-fuzz/bin/fuzz_server_session
# and KEEL_FUZZ_DEBUG=1 makes either print where a run ended (state, snapshots, frames).
# The session target records to /dev/shm (or /tmp)/keel-fuzz-session-PID, emptied after
# every input. Nothing here needs options of its own: the loop below runs them like the rest.
# --------------------------------------------------------------------------------------------
# --- sim targets -----------------------------------------------------------------------
# fuzz_sim_restore_state: the saved-state decoder (World::restore_state). Built by
# sim/CMakeLists.txt, which also instruments keel_sim itself in this build (so every
# target that steps a world checks the sim too); found by the glob above; seeds are
# real saved states in tests/fuzz/corpus/sim_restore_state/.
# --- end of sim targets ----------------------------------------------------------------
# --- game targets ----------------------------------------------------------------------
# fuzz_game_values: game::read_spec (a spec's name, input layout, state layout and event
# types) and the values read against a layout (read_values, read_values_change): the
# sandbox's, one of every kind, none, or one read from the input. Built by
# tests/fuzz/CMakeLists.txt, which instruments keel_game for every target; found by the
# glob above. fuzz_protocol_input picks its layout the same way (tests/fuzz/fuzz_layouts.h).
# Seeds in tests/fuzz/corpus/{game_values,protocol_input}/ are written by
#   KEEL_WRITE_FUZZ_SEEDS=tests/fuzz/corpus build/bin/keel_protocol_tests --gtest_filter='FuzzSeeds.*'
# --- end of game targets ---------------------------------------------------------------

# -O1 with line tables and asserts on (no NDEBUG): what libFuzzer recommends, quicker to
# build than -O2 -g, and enough for symbolised stack traces.
echo "fuzz: building ${#targets[@]} targets in ${BUILD_DIR#$ROOT/}"
mkdir -p "$BUILD_DIR"
CC=clang-14 CXX=clang++-14 cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Fuzz \
  "-DCMAKE_CXX_FLAGS_FUZZ=-O1 -gline-tables-only -fno-omit-frame-pointer" \
  "-DCMAKE_C_FLAGS_FUZZ=-O1 -gline-tables-only -fno-omit-frame-pointer" \
  -DKEEL_BUILD_FUZZ=ON -DKEEL_BUILD_TESTS=OFF -DKEEL_BUILD_BENCH=OFF -DKEEL_WITH_TBB=OFF \
  >"$BUILD_DIR/fuzz-configure.log" 2>&1 || { cat "$BUILD_DIR/fuzz-configure.log"; exit 1; }
if ! cmake --build "$BUILD_DIR" -j"$JOBS" --target "${targets[@]}" >"$BUILD_DIR/fuzz-build.log" 2>&1; then
  tail -60 "$BUILD_DIR/fuzz-build.log"
  echo "fuzz: build FAILED (log: $BUILD_DIR/fuzz-build.log)" >&2
  exit 1
fi
echo "fuzz: built in $((SECONDS - START)) s"

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
if [ -x /usr/lib/llvm-14/bin/llvm-symbolizer ]; then
  export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer
fi
mkdir -p "$BUILD_DIR/artifacts"

# run_target T: runs one target; its log is $BUILD_DIR/T.log, its one-line result T.result.
run_target() {
  local t=$1 name=${1#fuzz_} log="$BUILD_DIR/$1.log"
  local work="$BUILD_DIR/corpus/$name" seeds="$ROOT/tests/fuzz/corpus/$name" status=0
  local dirs=("$work")
  mkdir -p "$work"
  [ -d "$seeds" ] && dirs+=("$seeds")
  local before
  before=$(find "$work" -type f | wc -l)
  "$BUILD_DIR/bin/$t" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$BUILD_DIR/artifacts/$t-" "${dirs[@]}" \
    >"$log" 2>&1 || status=$?
  local execs rate cov corpus kind=""
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$( (grep -oE 'cov: [0-9]+' "$log" || true) | tail -1 | cut -d' ' -f2)
  corpus=$(find "$work" -type f | wc -l)
  if grep -q 'ERROR: LeakSanitizer' "$log"; then kind="leak"
  elif grep -q 'runtime error:' "$log"; then kind="undefined behaviour"
  elif grep -q 'ERROR: AddressSanitizer' "$log"; then kind="memory error"
  elif grep -q 'ERROR: libFuzzer: timeout' "$log"; then kind="timeout"
  elif grep -q 'ERROR: libFuzzer: out-of-memory' "$log"; then kind="out of memory"
  elif [ "$status" -ne 0 ]; then kind="crash (exit $status)"
  fi
  if [ -n "$kind" ]; then
    echo "FAILED: $kind after ${execs:-?} execs; input in ${BUILD_DIR#$ROOT/}/artifacts/$t-*" \
      >"$BUILD_DIR/$t.result"
  else
    echo "ok: ${SECONDS_EACH} s, ${execs:-0} execs (${rate:-0}/s), cov ${cov:-0}," \
      "corpus $corpus (+$((corpus - before)))" >"$BUILD_DIR/$t.result"
  fi
}

# report T: prints T's result line (and the end of its log when it failed).
failed=()
report() {
  local t=$1 line
  line=$(cat "$BUILD_DIR/$t.result" 2>/dev/null || echo "FAILED: the runner script stopped (log: ${BUILD_DIR#$ROOT/}/$t.log)")
  echo "fuzz: $t $line"
  if [[ $line == FAILED* ]]; then
    failed+=("$t")
    { grep -E -A25 'ERROR: |runtime error:|==ERROR|deadly signal' "$BUILD_DIR/$t.log" || true; } |
      head -60 | sed "s|^|  [$t] |" || true
  fi
}

echo "fuzz: running each target ${SECONDS_EACH} s, $JOBS at a time"
declare -A running=()  # pid -> target
for t in "${targets[@]}"; do
  rm -f "$BUILD_DIR/$t.result"
  while [ ${#running[@]} -ge "$JOBS" ]; do
    wait -n || true
    for pid in "${!running[@]}"; do
      if ! kill -0 "$pid" 2>/dev/null; then report "${running[$pid]}"; unset "running[$pid]"; fi
    done
  done
  run_target "$t" &
  running[$!]=$t
done
wait || true
for pid in "${!running[@]}"; do report "${running[$pid]}"; done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]} (inputs in ${BUILD_DIR#$ROOT/}/artifacts/; reproduce with" \
       "${BUILD_DIR#$ROOT/}/bin/<target> <input>)" >&2
  exit 1
fi
echo "fuzz: ${#targets[@]} targets ran ${SECONDS_EACH} s each without a finding ($((SECONDS - START)) s in all)"
