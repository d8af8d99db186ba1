#!/usr/bin/env bash
# Keel vs Bullet 3.24, measured in the same run (docs/performance.md).
#
#   bench/run_benchmarks.sh                 # build Release into build/, 3 rounds, 600 ticks
#   RUNS=5 TICKS=600 BUILD_DIR=build-bench bench/run_benchmarks.sh
#   SCENES="pyramid" WITH_F64=1 bench/run_benchmarks.sh
#   SKIP_BUILD=1 bench/run_benchmarks.sh    # use the binaries already in BUILD_DIR/bin
#   KEEL_THREADS="2 4" bench/run_benchmarks.sh   # Keel also at these thread counts (default 2)
#   sudo NICE=-10 bench/run_benchmarks.sh   # raise the measured programs' priority on a busy box
#   MODE=scale bench/run_benchmarks.sh      # ms per step against body count (below)
#
# MODE=scale: pile (1,000 boxes), pile_4000 (4,000 boxes) and mixed_10000 (10,000 boxes,
# spheres, capsules and hulls), sleep off, Keel at 1 and 2 threads and Bullet, alternating
# in every round; a table of medians (wall and CPU per tick) and a plot,
# docs/images/scale.svg (bench/scale_plot.py; SCALE_PLOT=path to write elsewhere).
#
# For every round, for every scene (pile, pyramid, spheres_capsules, characters, convex_pile,
# terrain, ragdolls), it runs, one after the
# other so that all programs see the same machine state:
#   keel-sim run scenes/X.json --ticks N --timing
#   keel-bullet-bench scenes/X.json --ticks N --sleep on
#   keel-bullet-bench scenes/X.json --ticks N --sleep off
#   (keel-bullet-bench-f64 ... --sleep off, with WITH_F64=1)
# and prints a markdown table of the medians over the rounds of each run's median step time
# (step_ms_p50), the Keel/Bullet ratios, and Bullet's largest body displacement when kept
# awake (how far a resting stack creeps); then a second table of CPU time per tick, which is
# the steadier figure when other work shares the machine. Every program's full output is
# kept in OUT_DIR.
# Progress goes to stderr; the table to stdout.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-build}"
RUNS="${RUNS:-3}"
TICKS="${TICKS:-600}"
# characters: Bullet steps the same bodies with no character controller (it has none of
# Keel's kind), so that row's ratio shows what the controllers add, not a like-for-like race.
# ragdolls: Bullet builds the same bones and joints (btConeTwistConstraint, btHingeConstraint)
# from the loaded scene; it has no holding torque, so half its ragdolls are limp where Keel's hold.
# spheres_capsules_tilt, not spheres_capsules: the untilted columns stay standing in Keel
# and collapse in other engines, so the untilted scene compares different work.
SCENES="${SCENES:-pile pyramid spheres_capsules_tilt characters convex_pile terrain ragdolls}"
MODE="${MODE:-tables}"
# Extra Keel thread counts (sleep off), beside the one-thread runs: speed-up table.
KEEL_THREADS="${KEEL_THREADS:-2}"
WITH_F64="${WITH_F64:-0}"
JOBS="${JOBS:-2}"
cd "$ROOT"
case "$BUILD_DIR" in /*) ;; *) BUILD_DIR="$ROOT/$BUILD_DIR" ;; esac
OUT_DIR="${OUT_DIR:-$BUILD_DIR/bench-results/$(date +%Y%m%d-%H%M%S)}"

log() { printf '%s\n' "$*" >&2; }

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  log "building Release in $BUILD_DIR"
  mkdir -p "$BUILD_DIR"
  if cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >"$BUILD_DIR/bench-configure.log" 2>&1; then
    targets=(keel-sim keel-bullet-bench)
    [[ "$WITH_F64" == 1 ]] && targets+=(keel-bullet-bench-f64)
    for t in "${targets[@]}"; do
      cmake --build "$BUILD_DIR" --target "$t" -j "$JOBS" >/dev/null 2>&1 ||
        log "warning: $t did not build; using the binary already there, if any"
    done
  else
    log "warning: cmake configure failed (see $BUILD_DIR/bench-configure.log); using the binaries already built"
  fi
fi
BIN="$BUILD_DIR/bin"
if [[ ! -x "$BIN/keel-bullet-bench" ]]; then
  log "keel-bullet-bench was not built: is Bullet installed (apt-get install libbullet-dev)?"
  exit 1
fi
mkdir -p "$OUT_DIR"
log "raw output: $OUT_DIR"

# run NAME CMD... : runs once, keeps the output as OUT_DIR/NAME.<round>.txt, prints nothing.
# The process's CPU time (user + sys, from bash's `time`) divided by the ticks is appended as
# ` process_cpu_ms_per_tick=..`: on a busy machine it shows the work done, without the time
# spent waiting for a CPU (it includes loading the scene, a few ms).
TIMEFORMAT='%3U %3S'
# NICE=-10 (root only) runs every measured program at that priority, so that on a machine
# shared with other work the programs wait less for a CPU. All programs get the same.
prefix=()
if [[ -n "${NICE:-}" ]]; then
  prefix=(nice -n "$NICE")
fi
run() {
  local name="$1"
  shift
  local out="$OUT_DIR/$name.$round.txt"
  log "  [$round/$RUNS] $name: $*"
  if ! { time "${prefix[@]}" "$@" >"$out" 2>&1; } 2>"$out.cpu"; then
    log "    failed (see $out)"
    return
  fi
  awk -v t="$TICKS" '{ printf " process_cpu_ms_per_tick=%.4f\n", ($1 + $2) * 1000 / t }' "$out.cpu" >>"$out"
  rm -f "$out.cpu"
}

# median FIELD NAME: median over the rounds of `FIELD=value` in NAME's outputs, or "n/a".
median() {
  local field="$1" name="$2"
  cat "$OUT_DIR/$name".*.txt 2>/dev/null |
    sed -n "s/.*[[:space:]]$field=\([-0-9.eE+]*\).*/\1/p" | sort -g |
    awk '{ v[NR] = $1 } END {
      if (NR == 0) { print "n/a"; exit }
      if (NR % 2) printf "%.3f\n", v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() {
  if [[ "$1" == n/a || "$2" == n/a ]]; then echo "n/a"; else awk -v a="$1" -v b="$2" 'BEGIN {
    if (b > 0) printf "%.2f\n", a / b; else print "n/a" }'; fi
}

if [[ "$MODE" == scale ]]; then
  SCALE_SCENES="${SCALE_SCENES:-pile pile_4000 mixed_10000}"
  for ((round = 1; round <= RUNS; round++)); do
    for scene in $SCALE_SCENES; do
      file="scenes/$scene.json"
      for t in 1 2; do
        run "$scene.keel-t$t" "$BIN/keel-sim" run "$file" --ticks "$TICKS" --timing --sleep off --threads "$t"
      done
      run "$scene.bullet" "$BIN/keel-bullet-bench" "$file" --ticks "$TICKS" --sleep off
    done
  done
  table="$OUT_DIR/scale.tsv"
  printf 'scene\tbodies\tkeel_t1_ms\tkeel_t2_ms\tbullet_ms\tkeel_t1_cpu\tkeel_t2_cpu\tbullet_cpu\n' >"$table"
  echo
  echo "Mean step (ms) against body count, sleep off, $TICKS ticks, median of $RUNS alternating rounds;"
  echo "CPU = whole process, user + sys per tick. Load before the table: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo
  echo "| scene | bodies | Keel 1 thread | Keel 2 threads | Bullet | Keel 1 / Bullet | Keel 2 / Bullet | speed-up | Keel CPU 1 / 2 threads | Bullet CPU |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for scene in $SCALE_SCENES; do
    bodies="$(grep -c '"motion": "Dynamic"' "scenes/$scene.json")"
    k1="$(median step_ms_mean "$scene.keel-t1")"
    k2="$(median step_ms_mean "$scene.keel-t2")"
    bu="$(median step_ms_mean "$scene.bullet")"
    c1="$(median process_cpu_ms_per_tick "$scene.keel-t1")"
    c2="$(median process_cpu_ms_per_tick "$scene.keel-t2")"
    cb="$(median process_cpu_ms_per_tick "$scene.bullet")"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$scene" "$bodies" "$k1" "$k2" "$bu" "$c1" "$c2" "$cb" >>"$table"
    echo "| $scene | $bodies | $k1 | $k2 | $bu | $(ratio "$k1" "$bu") | $(ratio "$k2" "$bu") | $(ratio "$k1" "$k2") | $c1 / $c2 | $cb |"
  done
  python3 "$ROOT/bench/scale_plot.py" "$table" "${SCALE_PLOT:-$ROOT/docs/images/scale.svg}" >&2
  exit 0
fi

for ((round = 1; round <= RUNS; round++)); do
  for scene in $SCENES; do
    file="scenes/$scene.json"
    if [[ -x "$BIN/keel-sim" ]]; then
      run "$scene.keel" "$BIN/keel-sim" run "$file" --ticks "$TICKS" --timing --sleep on
      run "$scene.keel-sleep-off" "$BIN/keel-sim" run "$file" --ticks "$TICKS" --timing --sleep off
      for t in $KEEL_THREADS; do
        run "$scene.keel-sleep-off-t$t" "$BIN/keel-sim" run "$file" --ticks "$TICKS" --timing --sleep off --threads "$t"
      done
    fi
    run "$scene.bullet-sleep-on" "$BIN/keel-bullet-bench" "$file" --ticks "$TICKS" --sleep on
    run "$scene.bullet-sleep-off" "$BIN/keel-bullet-bench" "$file" --ticks "$TICKS" --sleep off
    if [[ "$WITH_F64" == 1 && -x "$BIN/keel-bullet-bench-f64" ]]; then
      run "$scene.bullet-f64-sleep-off" "$BIN/keel-bullet-bench-f64" "$file" --ticks "$TICKS" --sleep off
    fi
  done
done

cpu="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
echo
echo "Median of $RUNS runs of each program's median step time (step_ms_p50), $TICKS ticks at 60 Hz, one thread."
echo "Machine: $cpu, $(nproc) logical CPUs; load average before the table: $(cut -d' ' -f1-3 /proc/loadavg)${NICE:+; programs run at nice $NICE}."
echo
header="| scene | Keel ms, sleep on | Keel ms, sleep off | Bullet ms, sleep on | Bullet ms, sleep off | Keel / Bullet (on) | Keel / Bullet (off) | Bullet creep, sleep off (m) |"
rule="|---|---:|---:|---:|---:|---:|---:|---:|"
if [[ "$WITH_F64" == 1 ]]; then
  header="$header Bullet f64 ms, sleep off |"
  rule="$rule---:|"
fi
echo "$header"
echo "$rule"
for scene in $SCENES; do
  keel="$(median step_ms_p50 "$scene.keel")"
  keel_off="$(median step_ms_p50 "$scene.keel-sleep-off")"
  on="$(median step_ms_p50 "$scene.bullet-sleep-on")"
  off="$(median step_ms_p50 "$scene.bullet-sleep-off")"
  creep="$(median max_displacement_m "$scene.bullet-sleep-off")"
  line="| $scene | $keel | $keel_off | $on | $off | $(ratio "$keel" "$on") | $(ratio "$keel_off" "$off") | $creep |"
  if [[ "$WITH_F64" == 1 ]]; then
    line="$line $(median step_ms_p50 "$scene.bullet-f64-sleep-off") |"
  fi
  echo "$line"
done
echo
echo "CPU time per tick (whole process: user + sys over $TICKS ticks, scene loading included), median of $RUNS runs:"
echo
echo "| scene | Keel ms, sleep on | Keel ms, sleep off | Bullet ms, sleep on | Bullet ms, sleep off |"
echo "|---|---:|---:|---:|---:|"
for scene in $SCENES; do
  echo "| $scene | $(median process_cpu_ms_per_tick "$scene.keel") |" \
    "$(median process_cpu_ms_per_tick "$scene.keel-sleep-off") |" \
    "$(median process_cpu_ms_per_tick "$scene.bullet-sleep-on") |" \
    "$(median process_cpu_ms_per_tick "$scene.bullet-sleep-off") |"
done
if [[ -n "$KEEL_THREADS" ]]; then
  echo
  echo "Keel with more threads, sleep off (median of $RUNS runs of step_ms_p50; speed-up = 1 thread / T threads):"
  echo
  echo "| scene | Keel 1 thread | $(for t in $KEEL_THREADS; do printf 'Keel %s threads | speed-up | ' "$t"; done)"
  echo "|---|---:|$(for t in $KEEL_THREADS; do printf -- '---:|---:|'; done)"
  for scene in $SCENES; do
    one="$(median step_ms_p50 "$scene.keel-sleep-off")"
    line="| $scene | $one |"
    for t in $KEEL_THREADS; do
      many="$(median step_ms_p50 "$scene.keel-sleep-off-t$t")"
      line="$line $many | $(ratio "$one" "$many") |"
    done
    echo "$line"
  done
fi
