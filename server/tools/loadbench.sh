#!/usr/bin/env bash
# server/tools/loadbench.sh BUILD_DIR MATCHES [SECONDS] [PLAYERS] [SCENE] [MODE]
#
# The load figure of docs/performance-network.md: one keel-server process, MATCHES matches of
# PLAYERS keel-bots each (one keel-bot process per match, MODE interpolate by default;
# match 0 is the start-up match, so no idle match runs beside them),
# on loopback. After a 3 s warm-up it reads /metrics and the server's CPU time, again at
# the end, and prints one line:
#   loadbench matches=M players=P seconds=S tick_p99_le_ms=X ticks=N late=L dropped=D
#             server_cpu_pct=C cpu_ms_per_match_second=Y kbps_out=K
# tick_p99_le_ms is the upper bound of the histogram bucket holding the 99th percentile
# (buckets: 0.25 0.5 1 2 4 8 16 32 64 128 ms), so "< 8 ms" means tick_p99_le_ms <= 8.
set -euo pipefail
build=${1:?BUILD_DIR}
matches=${2:?MATCHES}
seconds=${3:-20}
players=${4:-8}
scene=${5:-$(dirname "$0")/../../scenes/demo.json}
mode=${6:-interpolate}
port=$((20000 + RANDOM % 20000))
mport=$((port + 1))
rec=$(mktemp -d)
trap 'kill $server 2>/dev/null || true; rm -rf "$rec"' EXIT

"$build/bin/keel-server" --scene "$scene" --bind 127.0.0.1:$port --metrics 127.0.0.1:$mport \
  --record "$rec" --max-matches "$matches" --max-players "$players" --status-interval 0 \
  --log-level warn >/dev/null 2>&1 &
server=$!
sleep 0.5
bots=()
for m in $(seq 1 "$matches"); do
  "$build/bin/keel-bot" --server 127.0.0.1:$port --bots "$players" --seconds $((seconds + 4)) \
    --mode "$mode" --match "$((m - 1))" --quiet >/dev/null 2>&1 &
  bots+=($!)
done

metric() { curl -s "127.0.0.1:$mport/metrics"; }
cpu() { awk '{print $14 + $15}' "/proc/$server/stat"; }
hz=$(getconf CLK_TCK)
sleep 3
m0=$(metric); c0=$(cpu); t0=$(date +%s.%N)
sleep "$seconds"
m1=$(metric); c1=$(cpu); t1=$(date +%s.%N)
wait "${bots[@]}" || true

python3 - "$m0" "$m1" "$c0" "$c1" "$t0" "$t1" "$hz" "$matches" "$players" <<'PY'
import sys
m0, m1 = sys.argv[1], sys.argv[2]
c0, c1, t0, t1, hz = map(float, sys.argv[3:8])
matches, players = int(sys.argv[8]), int(sys.argv[9])
def parse(text):
    d = {}
    for line in text.splitlines():
        if line and not line.startswith('#'):
            k, v = line.rsplit(' ', 1)
            d[k] = float(v)
    return d
a, b = parse(m0), parse(m1)
delta = lambda k: b.get(k, 0) - a.get(k, 0)
buckets = ['0.00025', '0.0005', '0.001', '0.002', '0.004', '0.008', '0.016', '0.032', '0.064', '0.128', '+Inf']
total = delta('keel_tick_duration_seconds_count')
p99 = 'none'
for le in buckets:
    if total > 0 and delta('keel_tick_duration_seconds_bucket{le="%s"}' % le) >= 0.99 * total:
        p99 = le if le == '+Inf' else '%g' % (float(le) * 1000)
        break
secs = t1 - t0
cpu_s = (c1 - c0) / hz
print('loadbench matches=%d players=%d seconds=%.1f tick_p99_le_ms=%s ticks=%d late=%d dropped=%d '
      'players_connected=%d server_cpu_pct=%.0f cpu_ms_per_match_second=%.1f kbps_out=%.0f' % (
      matches, players, secs, p99, total, delta('keel_ticks_late_total'), delta('keel_ticks_dropped_total'),
      b.get('keel_players', 0), 100 * cpu_s / secs, 1000 * cpu_s / secs / max(1, matches),
      delta('keel_bytes_out_total') * 8 / 1000 / secs))
PY
