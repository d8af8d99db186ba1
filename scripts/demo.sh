#!/usr/bin/env bash
# The main job: builds Keel and steps the demo scene headless, printing its hash chain,
# then shows how to check that the run reproduces to the bit.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
BIN=${KEEL_BUILD_DIR:-build}/bin
OUT=${KEEL_DEMO_DIR:-demo-output}
mkdir -p "$OUT"
"$BIN/keel-sim" run scenes/demo.json --ticks 600 --hash-every 60 --timing \
  --save-at 300 --state-out "$OUT/demo-300.state" --dump-final "$OUT/demo-final.json"
cat <<MSG

The demo stepped scenes/demo.json for 600 ticks (10 s at 60 Hz) and saved its state at tick 300.
Verify that the run reproduces to the bit: continue from the saved state and compare the final line:

  $BIN/keel-sim run --state $OUT/demo-300.state --ticks 300

Both runs must end with the same "final 600 <hash>" line. Final body poses: $OUT/demo-final.json
MSG
