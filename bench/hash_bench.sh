#!/usr/bin/env bash
# What the per-tick state hash costs against the step (docs/performance.md, "Per-tick hash").
#
#   bench/hash_bench.sh                                  # build/bin/keel-sim, 5 rounds, 600 ticks
#   BEFORE=/tmp/old/keel-sim bench/hash_bench.sh         # and an older keel-sim, alternated with it
#   RUNS=9 TICKS=600 KEEL_SIM=build/bin/keel-sim bench/hash_bench.sh
#
# Cases: scenes/pile.json asleep (--sleep on: it settles and sleeps) and awake (--sleep off),
# scenes/pile_4000.json likewise, and the sandbox match on scenes/demo.json with 8 scripted
# players (--match --bots 8). For every round, every case and every binary, it runs
#   keel-sim run SCENE --ticks N --hash-every 1     (a hash every tick)
#   keel-sim run SCENE --ticks N --hash-every 0     (the final hash only)
# one right after the other, and takes each process's CPU time (user + sys): on a machine
# shared with other work that is steadier than wall time, and both runs pay the same
# scene loading. It prints, per binary and case, the medians over the rounds, their ratio,
# and the hash's cost per tick ((hash1 - hash0) / ticks).
#
# A binary without --match (older than the option) is measured on the match case with
# --record instead: the recording writer hashes the match every tick, so its hash0 run
# already hashes (the ratio is not comparable; its row says so).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KEEL_SIM="${KEEL_SIM:-$ROOT/build/bin/keel-sim}"
BEFORE="${BEFORE:-}"
RUNS="${RUNS:-5}"
TICKS="${TICKS:-600}"
OUT_DIR="${OUT_DIR:-$(mktemp -d)}"
mkdir -p "$OUT_DIR"
cd "$ROOT"

log() { printf '%s\n' "$*" >&2; }

binaries=("$KEEL_SIM")
labels=(after)
if [[ -n "$BEFORE" ]]; then
  binaries=("$BEFORE" "$KEEL_SIM")
  labels=(before after)
fi
for b in "${binaries[@]}"; do
  [[ -x "$b" ]] || { log "no keel-sim at $b (build it: cmake --build build --target keel-sim)"; exit 1; }
done

cases=(pile-asleep pile-awake pile_4000-asleep pile_4000-awake demo-match)

# args CASE BINARY: the run arguments of a case (without --hash-every).
args() {
  local bin=$2
  case "$1" in
    pile-asleep) echo "scenes/pile.json --sleep on" ;;
    pile-awake) echo "scenes/pile.json --sleep off" ;;
    pile_4000-asleep) echo "scenes/pile_4000.json --sleep on" ;;
    pile_4000-awake) echo "scenes/pile_4000.json --sleep off" ;;
    demo-match)
      if "$bin" run --help 2>/dev/null | grep -q -- '--match'; then
        echo "scenes/demo.json --match --bots 8"
      else
        echo "scenes/demo.json --record $OUT_DIR/demo.krec --bots 8"
      fi
      ;;
  esac
}

# cpu_seconds CMD...: runs it (output discarded) and prints its user + sys CPU seconds.
cpu_seconds() {
  local t
  TIMEFORMAT='%3U %3S'
  t=$({ time "$@" >/dev/null 2>&1; } 2>&1)
  awk '{printf "%.3f\n", $1 + $2}' <<<"$t"
}

median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2)}'; }

log "raw figures: $OUT_DIR"
for ((round = 1; round <= RUNS; ++round)); do
  log "round $round/$RUNS"
  for c in "${cases[@]}"; do
    for i in "${!binaries[@]}"; do
      bin=${binaries[$i]}
      read -r -a a <<<"$(args "$c" "$bin")"
      for every in 1 0; do
        cpu_seconds "$bin" run "${a[@]}" --ticks "$TICKS" --hash-every "$every" >>"$OUT_DIR/${labels[$i]}.$c.h$every"
      done
    done
  done
done

echo "| binary | case | CPU s, hash every tick | CPU s, final hash only | ratio | hash ms / tick |"
echo "| --- | --- | ---: | ---: | ---: | ---: |"
for c in "${cases[@]}"; do
  for i in "${!binaries[@]}"; do
    l=${labels[$i]}
    h1=$(median <"$OUT_DIR/$l.$c.h1")
    h0=$(median <"$OUT_DIR/$l.$c.h0")
    note=""
    read -r -a a <<<"$(args "$c" "${binaries[$i]}")"
    [[ " ${a[*]} " == *" --record "* ]] && note=" (recorded: both runs hash the match every tick)"
    awk -v l="$l" -v c="$c$note" -v h1="$h1" -v h0="$h0" -v n="$TICKS" \
      'BEGIN {printf "| %s | %s | %.3f | %.3f | %.2f | %.4f |\n", l, c, h1, h0, (h0 > 0 ? h1 / h0 : 0), (h1 - h0) * 1000 / n}'
  done
done
