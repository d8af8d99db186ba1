#!/usr/bin/env bash
# The cross-configuration determinism check (docs/determinism.md): every scene in scenes/
# and the recorded match must reproduce the golden hash chains in tests/golden/ in every
# configuration below, or this fails naming the configuration, the scene and the first
# differing tick.
#
#   scripts/determinism.sh           check (scripts/test.sh, and so CI, runs this)
#   scripts/determinism.sh --write   regenerate tests/golden/ with the normal build, then
#                                    check; the commit that changes goldens says why
#
# Configurations (names as printed):
#   gcc-O3        the normal build ($KEEL_BUILD_DIR, default build/: CMake Release, g++
#                 -O3): keel-sim on the JSON scenes at 1, 2, 4 and 8 threads; at 1 thread
#                 also save/restore at RESTORE_AT; the recorded match and each game
#                 module's scripted match (GAME_MODULES) likewise
#   gcc-O3-sse2   the normal build with its AVX contact kernels turned off (KEEL_SIMD=sse2,
#                 docs/sim.md "Wide solve"), at 2 threads: every other x86-64 configuration
#                 picks AVX where the CPU has it, so this is the check that both agree
#   gcc-O2        a separate build of only the sim + keel-detrun with g++ -O2, on binary
#                 scenes (-O2 is what the determinism issue calls the normal build; Keel's
#                 Release stays -O3, which steps measurably faster: docs/determinism.md)
#   gcc-O0        the same with g++ -O0 (asserts on)
#   clang14-O2    the same with clang++-14 -O2
#   aarch64-O2    the same cross-compiled with aarch64-linux-gnu-g++ -O2, run under qemu-aarch64
#   wasm32        the same compiled to WebAssembly with Debian's emscripten (em++ -O2, clang-14
#                 for wasm32, serial sim, 32-bit size_t, libc++), run under node; also
#                 save/restore at RESTORE_AT_WASM
# Each runs every scene and the recorded match. Under qemu the heavy scenes are checked for
# their first ticks only (TICKS_QEMU below) to fit the CI budget; the start of a chain is
# still an exact check of every hash in it.
#
# Environment: KEEL_BUILD_DIR (default build), KEEL_DETERMINISM_CONFIGS (a space-separated
# subset of the names above, default all), KEEL_JOBS (default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."

WRITE=0
case "${1:-}" in
  "") ;;
  --write) WRITE=1 ;;
  *) echo "usage: scripts/determinism.sh [--write]" >&2; exit 2 ;;
esac

BUILD_DIR=${KEEL_BUILD_DIR:-build}
DET_DIR=$BUILD_DIR/determinism
GOLDEN=tests/golden
CONFIGS=${KEEL_DETERMINISM_CONFIGS:-"gcc-O3 gcc-O3-sse2 gcc-O2 gcc-O0 clang14-O2 aarch64-O2 wasm32"}
JOBS=${KEEL_JOBS:-$(nproc)}
# Every scene but the benchmark-only pile_4000 (bench/hash_bench.sh), pyramid_5050, mixed_10000
# and arena_128 (arena.json's code with 128 players, keel-netbench --interest): pile.json checks the
# same code in a quarter of the time.
SCENES=()
# The scale scenes (4,000 to 10,000 bodies) cost tens of seconds a configuration: their
# 1- and 2-thread runs are benchmarks (bench/run_benchmarks.sh MODE=scale), not CI.
for scene in scenes/*.json; do
  case "$scene" in scenes/pile_4000.json | scenes/pyramid_5050.json | scenes/mixed_10000.json | scenes/arena_128.json) ;; *) SCENES+=("$scene") ;; esac
done
MATCH_SCENES=(scenes/demo.json)   # the recorded multi-player match (sandbox rules)
# Game modules and their scenes: the scripted match of each game (keel-sim determinism
# --game), checked in the normal build's configurations (the standalone runners step the
# built-in sandbox only). Module targets are built into $BUILD_DIR/games/<name>.so.
GAME_MODULES=(pushball)
declare -A GAME_SCENES=([pushball]=games/pushball/pushball.json)
GAME_TICKS=1200
RESTORE_AT=137,300,451            # mid-scene saves; ticks off and on the 10-tick grid
RESTORE_AT_WASM=137               # the wasm32 runner's one save (each save re-steps the rest)
THREADS=(1 2 4 8)
# Ticks checked per scene under -O0 and qemu (scene stem -> ticks; absent = all 600),
# chosen so that the whole check fits in 15 minutes of CI on 2 cores.
declare -A TICKS_FULL=()
declare -A TICKS_O0=([convex_pile]=300 [ragdolls]=200 [spheres_capsules_tilt]=200)
declare -A TICKS_QEMU=([pile]=150 [spheres_capsules]=300 [spheres_capsules_tilt]=100 [convex_pile]=120 [ragdolls]=100)

START=$SECONDS
FAILED=()

say() { printf 'determinism: %s\n' "$*"; }

in_configs() { [[ " $CONFIGS " == *" $1 "* ]]; }

# check LABEL CMD...: runs a check, prefixing its lines with [LABEL]; records a failure.
check() {
  local label=$1 t0=$SECONDS status
  shift
  set +e
  "$@" | awk -v prefix="[$label] " '{ print prefix $0; fflush() }'
  status=${PIPESTATUS[0]}
  set -e
  if [ "$status" -ne 0 ]; then
    FAILED+=("$label")
    say "FAILED $label (exit $status, $((SECONDS - t0)) s)"
  else
    say "passed $label ($((SECONDS - t0)) s)"
  fi
}

# symbols_of NM FILE...: the symbol names each file defines or references. A linked .wasm
# has no symbol table: its function names (kept by --profiling-funcs,
# cmake/wasm32-emscripten.cmake) and its imports, as binaryen's wasm-dis prints them.
symbols_of() {
  local nm=$1 file
  shift
  for file in "$@"; do
    case "$file" in
      *.wasm) wasm-dis "$file" | sed -n -e 's/^ (func \$\([^ ]*\).*/\1/p' -e 's/^ (import "[^"]*" "\([^"]*\)".*/\1/p' ;;
      *) "$nm" -A "$file" 2>/dev/null | awk '{print $NF}' ;;
    esac
  done
}

# The libm and flag guards for a standalone build (the main build's are ctest tests in
# tests/determinism, which share the symbol list): guard_build LABEL DIR [NM [FILE...]]
# checks libkeel_sim.a and the FILEs (default: the linked runner).
guard_build() {
  local label=$1 dir=$2 nm=${3:-nm}
  shift $(($# < 3 ? $# : 3))
  local files=("$@") names alt symbols hits bad
  [ ${#files[@]} -gt 0 ] || files=("$dir/bin/keel-detrun")
  names=$(grep -v -e '^#' -e '^$' tests/determinism/libm_symbols.txt | tr '\n' '|')
  alt=${names%|}
  symbols=$(symbols_of "$nm" "$dir/lib/libkeel_sim.a" "${files[@]}")
  if ! grep -qx main <<<"$symbols"; then
    echo "[$label] could not list the symbols of $dir/lib/libkeel_sim.a and ${files[*]}"
    FAILED+=("$label libm guard")
  fi
  hits=$(sed 's/@.*//' <<<"$symbols" | grep -E "^(__)?($alt)[fl]?(_finite)?\$" | sort -u || true)
  if [ -n "$hits" ]; then
    echo "[$label] libm transcendental symbols referenced: $(echo $hits)"
    FAILED+=("$label libm guard")
  fi
  bad=$( { grep '"command":' "$dir/compile_commands.json" | grep -v -- '-ffp-contract=off' || true
           grep '"command":' "$dir/compile_commands.json" |
             grep -E -- '-ffast-math|-Ofast|-funsafe-math-optimizations|-fassociative-math|-freciprocal-math|-ffinite-math-only|-mfpmath=387|-ffp-contract=(fast|on)|-mrelaxed-simd' || true; } | head -3)
  if [ -n "$bad" ]; then
    echo "[$label] compile commands break the rounding rules:"
    echo "$bad"
    FAILED+=("$label flags guard")
  fi
}

# build_runner NAME CMAKE_ARGS...: a standalone build of the sim + keel-detrun only.
build_runner() {
  local name=$1 t0=$SECONDS
  shift
  say "building $name (sim + keel-detrun only)"
  cmake -S tools/keel-detrun -B "$DET_DIR/$name" "$@" >"$DET_DIR/$name.configure.log" 2>&1 ||
    { cat "$DET_DIR/$name.configure.log"; return 1; }
  cmake --build "$DET_DIR/$name" -j"$JOBS" --target keel-detrun >"$DET_DIR/$name.build.log" 2>&1 ||
    { tail -50 "$DET_DIR/$name.build.log"; return 1; }
  say "built $name ($((SECONDS - t0)) s)"
}

# run_runner LABEL TICKS_TABLE RUNNER...: every binary scene, heavy ones as a prefix, and
# the recorded match.
run_runner() {
  local label=$1 table=$2
  shift 2
  local -n limits=$table
  local full=() stem
  for scene in "$DET_DIR"/scenes/*.kscn; do
    stem=$(basename "$scene" .kscn)
    if [ -n "${limits[$stem]:-}" ]; then
      check "$label $stem ${limits[$stem]} ticks" "$@" --golden "$GOLDEN" --ticks "${limits[$stem]}" "$scene"
    else
      full+=("$scene")
    fi
  done
  [ ${#full[@]} -eq 0 ] || check "$label" "$@" --golden "$GOLDEN" "${full[@]}"
  local match_bins=()
  for scene in "${MATCH_SCENES[@]}"; do match_bins+=("$DET_DIR/scenes/$(basename "$scene" .json).kscn"); done
  check "$label match" "$@" --golden "$GOLDEN" --match "${match_bins[@]}"
}

# check_games LABEL KEEL_SIM... [FLAGS]: each game module's scripted match.
check_games() {
  local label=$1 game
  shift
  local runner=() flags=()
  while [ $# -gt 0 ] && [[ "$1" != --* ]]; do runner+=("$1"); shift; done
  flags=("$@")
  for game in "${GAME_MODULES[@]}"; do
    check "$label game $game" "${runner[@]}" determinism --game "$BUILD_DIR/games/$game.so" "${GAME_SCENES[$game]}" \
      --golden "$GOLDEN" "${flags[@]}"
  done
}

bash scripts/setup.sh
bash scripts/setup.sh --determinism
mkdir -p "$DET_DIR"

say "normal build ($BUILD_DIR): keel-sim"
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$BUILD_DIR" -j"$JOBS" --target keel-sim keel-detrun "${GAME_MODULES[@]}" >/dev/null
KEEL_SIM=$BUILD_DIR/bin/keel-sim
say "normal build ready ($((SECONDS - START)) s): $(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt")" \
    "$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt")" \
    "$(sed -n 's/^CMAKE_CXX_FLAGS_RELEASE:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt")"

if [ "$WRITE" -eq 1 ]; then
  say "writing $GOLDEN from the normal build"
  "$KEEL_SIM" determinism "${SCENES[@]}" --golden "$GOLDEN" --write
  "$KEEL_SIM" determinism "${MATCH_SCENES[@]}" --golden "$GOLDEN" --write --match
  for game in "${GAME_MODULES[@]}"; do
    "$KEEL_SIM" determinism --game "$BUILD_DIR/games/$game.so" "${GAME_SCENES[$game]}" --golden "$GOLDEN" --write \
      --ticks "$GAME_TICKS"
  done
  for g in "$GOLDEN"/*.match.golden "$GOLDEN"/*.golden; do
    stem=$(basename "$g" .golden)
    stem=${stem%.match}
    stem=${stem%.script}
    [ -f "scenes/$stem.json" ] || [ -n "${GAME_SCENES[$stem]:-}" ] ||
      say "warning: $g has no scene scenes/$stem.json; delete it if the scene is gone"
  done
fi

if in_configs gcc-O3; then
  # Small scenes fall below the thresholds under which a step runs on one thread alone
  # (docs/performance.md, "Small work on one thread"); at more threads the thresholds are
  # set to 0 so that every shared stage is checked against the goldens.
  export KEEL_STEP_MIN_WORK=0 KEEL_SOLVE_MIN_BATCHES_PER_STAGE=0
  for t in "${THREADS[@]}"; do
    extra=()
    label="gcc-O3 threads=$t"
    if [ "$t" -eq 1 ]; then
      extra=(--restore-at "$RESTORE_AT")
      label="$label save/restore@$RESTORE_AT"
    fi
    check "$label" "$KEEL_SIM" determinism "${SCENES[@]}" --golden "$GOLDEN" --threads "$t" "${extra[@]}"
    check "$label match" "$KEEL_SIM" determinism "${MATCH_SCENES[@]}" --golden "$GOLDEN" --match --threads "$t" "${extra[@]}"
    check_games "$label" "$KEEL_SIM" --threads "$t" "${extra[@]}"
  done
fi

if in_configs gcc-O3-sse2; then
  check "gcc-O3-sse2 threads=2" env KEEL_SIMD=sse2 "$KEEL_SIM" determinism "${SCENES[@]}" --golden "$GOLDEN" --threads 2
  check "gcc-O3-sse2 match" env KEEL_SIMD=sse2 "$KEEL_SIM" determinism "${MATCH_SCENES[@]}" --golden "$GOLDEN" --match --threads 2
  check_games "gcc-O3-sse2" env KEEL_SIMD=sse2 "$KEEL_SIM" --threads 2
fi

# Binary scenes for keel-detrun: no JSON parser in those builds.
rm -rf "$DET_DIR/scenes"
mkdir -p "$DET_DIR/scenes"
flatc -b -o "$DET_DIR/scenes" scene/schemas/scene.fbs "${SCENES[@]}"

O2=(-DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG")
if in_configs gcc-O2; then
  if build_runner gcc-O2 -DCMAKE_CXX_COMPILER=g++ "${O2[@]}"; then
    guard_build gcc-O2 "$DET_DIR/gcc-O2"
    run_runner gcc-O2 TICKS_FULL "$DET_DIR/gcc-O2/bin/keel-detrun"
  else
    FAILED+=("gcc-O2 build")
  fi
fi
if in_configs gcc-O0; then
  if build_runner gcc-O0 -DCMAKE_CXX_COMPILER=g++ -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0; then
    guard_build gcc-O0 "$DET_DIR/gcc-O0"
    run_runner gcc-O0 TICKS_O0 "$DET_DIR/gcc-O0/bin/keel-detrun"
  else
    FAILED+=("gcc-O0 build")
  fi
fi
if in_configs clang14-O2; then
  if build_runner clang14-O2 -DCMAKE_CXX_COMPILER=clang++-14 "${O2[@]}"; then
    guard_build clang14-O2 "$DET_DIR/clang14-O2"
    run_runner clang14-O2 TICKS_FULL "$DET_DIR/clang14-O2/bin/keel-detrun"
  else
    FAILED+=("clang14-O2 build")
  fi
fi
if in_configs aarch64-O2; then
  if build_runner aarch64-O2 --toolchain "$PWD/cmake/aarch64-linux-gnu.cmake" "${O2[@]}"; then
    guard_build aarch64-O2 "$DET_DIR/aarch64-O2" aarch64-linux-gnu-nm
    run_runner aarch64-O2 TICKS_QEMU qemu-aarch64 -L /usr/aarch64-linux-gnu "$DET_DIR/aarch64-O2/bin/keel-detrun"
  else
    FAILED+=("aarch64-O2 build")
  fi
fi

if in_configs wasm32; then
  # Debian's emscripten with a cache of its own in the build folder (scripts/emscripten-env.sh);
  # ccache, where installed, caches em++'s compiles like any other compiler's.
  launcher=()
  if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  if source scripts/emscripten-env.sh "$DET_DIR/emscripten" &&
     build_runner wasm32 --toolchain "$PWD/cmake/wasm32-emscripten.cmake" "${O2[@]}" "${launcher[@]}"; then
    # The linked .wasm (wasm-opt may have inlined a small libm function whole, so also)
    # every library and object file it was linked from.
    guard_build wasm32 "$DET_DIR/wasm32" llvm-nm-14 "$DET_DIR/wasm32/bin/keel-detrun.wasm" \
      "$DET_DIR"/wasm32/lib/*.a "$DET_DIR"/wasm32/CMakeFiles/keel-detrun.dir/*.o
    if grep '"command":' "$DET_DIR/wasm32/compile_commands.json" | grep -qv -- '-mno-simd128'; then
      echo "[wasm32] a compile command lacks -mno-simd128 (cmake/wasm32-emscripten.cmake)"
      FAILED+=("wasm32 flags guard")
    fi
    run_runner "wasm32 save/restore@$RESTORE_AT_WASM" TICKS_FULL \
      node "$DET_DIR/wasm32/bin/keel-detrun.js" --restore-at "$RESTORE_AT_WASM"
  else
    FAILED+=("wasm32 build")
  fi
fi

if [ ${#FAILED[@]} -ne 0 ]; then
  say "FAILED after $((SECONDS - START)) s: ${FAILED[*]}"
  say "a mismatch means a build or a change broke determinism (docs/determinism.md lists the usual causes);"
  say "if a change is meant to alter results, run scripts/determinism.sh --write and say why in the commit"
  exit 1
fi
say "all configurations ($CONFIGS) match $GOLDEN in $((SECONDS - START)) s"
