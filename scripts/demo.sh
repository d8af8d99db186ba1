#!/usr/bin/env bash
# The main job: builds Keel, starts keel-server hosting scenes/demo.json on loopback, and
# connects four headless keel-bots — predicting clients that step the same match and check
# every confirmed tick's hash against the server's. The server logs to demo-output/server.log
# and keeps a live line on the terminal (tick, players, kbit/s, hash; on a terminal only —
# elsewhere the log gets a status line every 10 s). After KEEL_DEMO_SECONDS (default 60;
# 0 = until Ctrl-C), or on Ctrl-C, everything stops cleanly — the server tells the bots it
# is shutting down and they exit, writing their summary — and the script prints how to
# verify the recording the server made.
#
# Settings (environment): KEEL_DEMO_SECONDS, KEEL_DEMO_PORT (7777), KEEL_DEMO_METRICS_PORT
# (9100), KEEL_DEMO_BOTS (4), KEEL_DEMO_DIR (demo-output), KEEL_BUILD_DIR (build),
# KEEL_DEMO_GAME (sandbox, or pushball: the team game loaded as a module, on its pitch).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
BIN=${KEEL_BUILD_DIR:-build}/bin
OUT=${KEEL_DEMO_DIR:-demo-output}
PORT=${KEEL_DEMO_PORT:-7777}
METRICS_PORT=${KEEL_DEMO_METRICS_PORT:-9100}
BOTS=${KEEL_DEMO_BOTS:-4}
RUN_SECONDS=${KEEL_DEMO_SECONDS:-60}
REC_DIR="$OUT/recordings"
GAME=${KEEL_DEMO_GAME:-sandbox}
mkdir -p "$REC_DIR"

scene=scenes/demo.json
game_args=()
case "$GAME" in
  sandbox) ;;
  pushball)
    scene=games/pushball/pushball.json
    game_args=(--game "${KEEL_BUILD_DIR:-build}/games/pushball.so") ;;
  *) echo "keel demo: KEEL_DEMO_GAME is sandbox or pushball, not $GAME" >&2; exit 2 ;;
esac

# Log lines go to the file, so stderr (the terminal) is left to the live status line.
server_args=(--scene "$scene" "${game_args[@]}" --bind "127.0.0.1:$PORT" --record "$REC_DIR"
             --metrics "127.0.0.1:$METRICS_PORT" --status-interval 1 --log-file "$OUT/server.log")
bot_seconds=86400
if [ "$RUN_SECONDS" != 0 ]; then
  # The start-up match steps 60 ticks a second; the server stops itself after that many.
  server_args+=(--stop-after-ticks $((RUN_SECONDS * 60)))
  bot_seconds=$((RUN_SECONDS + 5))  # a margin only: the bots end when the server does
fi

echo "keel demo: keel-server on 127.0.0.1:$PORT hosting $GAME, $BOTS keel-bots predicting, metrics on" \
     "http://127.0.0.1:$METRICS_PORT/metrics"
if [ "$RUN_SECONDS" != 0 ]; then
  echo "keel demo: runs $RUN_SECONDS s (KEEL_DEMO_SECONDS); Ctrl-C stops it earlier"
else
  echo "keel demo: runs until Ctrl-C"
fi

: > "$OUT/server.log"  # --log-file appends
"$BIN/keel-server" "${server_args[@]}" &
server=$!
bots=""
stop() {
  trap - INT TERM
  kill -INT "$server" 2>/dev/null || true
}
trap stop INT TERM

# Wait until the server listens (its log says so), then start the bots in match 0, the
# match the server creates at start-up.
for _ in $(seq 1 100); do
  grep -q server_started "$OUT/server.log" 2>/dev/null && break
  kill -0 "$server" 2>/dev/null || break
  sleep 0.1
done
"$BIN/keel-bot" --server "127.0.0.1:$PORT" "${game_args[@]}" --bots "$BOTS" --mode predict --match 0 \
  --seconds "$bot_seconds" --summary "$OUT/bots.json" --dump-dir "$OUT" --quiet &
bots=$!

status=0
wait "$server" || status=$?
# SIGINT may interrupt the first wait; the server is still finishing its recording.
while kill -0 "$server" 2>/dev/null; do wait "$server" || status=$?; done
# The server told the bots it stopped, so they are exiting already (give them a second);
# SIGTERM (which keel-bot handles like SIGINT: stop, write the summary, exit 0) covers a
# server that died untold.
for _ in $(seq 1 10); do
  kill -0 "$bots" 2>/dev/null || break
  sleep 0.1
done
kill -TERM "$bots" 2>/dev/null || true
wait "$bots" 2>/dev/null || true

recordings=$(ls -t "$REC_DIR"/*.krec 2>/dev/null | head -n 5)
latest=$(echo "$recordings" | head -n 1)
echo
if [ -z "$latest" ]; then
  echo "keel demo: keel-server exited ($status) without a recording; see $OUT/server.log" >&2
  exit 1
fi
summary=""
if [ -s "$OUT/bots.json" ]; then
  summary=$(sed -n 's/^  "\(confirmed_ticks\|hash_checks\|hash_mismatches\)": \(.*\),$/\1=\2/p' \
            "$OUT/bots.json" | tr '\n' ' ')
fi
# The replay command, with the game module when the match ran one.
replay="$BIN/keel-replay${game_args[*]:+ ${game_args[*]}}"
cat <<MSG
keel demo: the server stopped cleanly (exit $status). Bots: ${summary:-see $OUT/bots.json}
Every applied input and every tick's state hash of the match is in:
  $latest

Verify that it replays to the bit (last line: "verified N ticks"):
  $replay verify $latest
  $replay info $latest
  $replay view $latest --out $OUT/match.html     # open in a browser

Server log: $OUT/server.log   bot summary: $OUT/bots.json
MSG
