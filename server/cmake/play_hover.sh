#!/bin/sh
# play_hover.sh EXAMPLE_BUILD SCENE WORK_DIR — run by test_install.cmake. Starts the
# custom-rules example's keel-hover-server on a free loopback port, plays one predicting
# keel-hover-bot against it for 3 s (the hover rules move its ball), and lets the server
# stop by itself once its match has stepped 300 ticks (5 s), finishing its recording.
# Exits with the bot's status; the bot's lines are in WORK_DIR/bot.txt.
set -u
build=$1 scene=$2 work=$3
log=$work/server.log
mkdir -p "$work/recordings"
"$build/keel-hover-server" --scene "$scene" --bind 127.0.0.1:0 --record "$work/recordings" \
  --stop-after-ticks 300 --status-interval 0 --log-json > "$log" 2>&1 &
server=$!
# Never leave the server behind, whatever fails below.
trap 'kill "$server" 2>/dev/null' EXIT
i=0
until grep -q '"server_started"' "$log"; do
  i=$((i + 1))
  if [ "$i" -gt 100 ]; then echo "keel-hover-server did not start:"; cat "$log"; exit 1; fi
  sleep 0.05
done
# The bound address (port 0 picks a free one) is in the JSON start line.
address=$(sed -n '/"server_started"/s/.*"bind":\["\([^"]*\)".*/\1/p' "$log" | head -n 1)
"$build/keel-hover-bot" "$address" 3 1 > "$work/bot.txt" 2>&1
bot=$?
wait "$server"
served=$?
trap - EXIT
cat "$work/bot.txt"
if [ "$served" -ne 0 ]; then echo "keel-hover-server exited $served:"; cat "$log"; exit 1; fi
exit "$bot"
