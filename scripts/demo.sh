#!/usr/bin/env bash
# The main job (until keel-server lands): builds Keel, plays the demo match headless with
# four scripted bots for 20 s of match time, records it, and shows how to verify the
# recording to the bit.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
BIN=${KEEL_BUILD_DIR:-build}/bin
OUT=${KEEL_DEMO_DIR:-demo-output}
mkdir -p "$OUT"
"$BIN/keel-sim" run scenes/demo.json --ticks 1200 --hash-every 120 --timing \
  --record "$OUT/demo.krec" --bots 4 --dump-final "$OUT/demo-final.json"
cat <<MSG

Four bots played scenes/demo.json for 1200 ticks (20 s at 60 Hz); every applied input and
every tick's state hash is in $OUT/demo.krec. Verify that it replays to the bit:

  $BIN/keel-replay verify $OUT/demo.krec        # last line: verified 1200 ticks
  $BIN/keel-replay info $OUT/demo.krec
  $BIN/keel-replay dump $OUT/demo.krec --tick 600 --out $OUT/tick600.json

Final body poses: $OUT/demo-final.json
MSG
