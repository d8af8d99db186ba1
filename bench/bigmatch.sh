#!/usr/bin/env bash
# bench/bigmatch.sh [PLAYERS] [SECONDS]  — one big match, bots over loopback.
#
# One keel-server hosting one match of PLAYERS players (default 128) on SCENE (default
# scenes/arena_match.json: 2,000 dynamic crates and balls, 128 spawn points), its world
# stepped with STEP_THREADS worker threads (default 2), and the players played by keel-bot
# over loopback: PREDICT of them predicting (default 2: each runs its own copy of the
# match, so they cost the machine as much as the server does), the rest interpolating, all
# random-walking and firing balls. After a WARMUP (default 4 s: everyone joined, the first
# full snapshots sent) it reads /metrics and the server's CPU time, again SECONDS (default
# 10) later, and prints one line per run:
#
#   bigmatch build=B players=P connected=C seconds=S ticks=N late=L dropped=D
#            tick_p50_ms=.. tick_p99_ms=.. run_p50_ms=.. run_p99_ms=.. cpu_ms_per_tick=..
#            server_cpu_pct=.. kbps_out_per_client=.. hash_mismatches=..
#
# tick_*: keel_tick_duration_seconds (inputs, step, recording, hash of one tick); run_*:
# keel_match_run_duration_seconds (one run of the match's task: datagrams in, the due
# ticks, snapshots and frames encoded, datagrams out). Quantiles are interpolated inside
# the histogram's bucket as Prometheus' histogram_quantile does (buckets 0.25 0.5 1 1.5 2
# 3 4 5 6 8 12 16 32 ... ms). cpu_ms_per_tick is the server process's user + system CPU
# over the ticks stepped: all of its threads, snapshots and sockets included.
#
# INTEREST_RADIUS (default 0: none) is keel-server's --interest-radius: bodies farther than
# that from a player's character leave its interest, as a game on a large level would set.
#
# BOT_NICE (default 0) runs the keel-bot processes at that nice level: the bots stand in
# for players' machines, and on a 2-core box they take more than a core, so with
# BOT_NICE=10 they get what the server leaves (as remote clients would not compete at all).
#
# BUILDS="build/before build" alternates builds (each a dir with bin/keel-server and
# bin/keel-bot) over ROUNDS rounds (default 1); PLAYERS may be a list: "16 32 64 128".
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
players_list=${1:-128}
seconds=${2:-10}
scene=${SCENE:-$here/scenes/arena_match.json}
builds=${BUILDS:-$here/build}
rounds=${ROUNDS:-1}
predict=${PREDICT:-2}
warmup=${WARMUP:-4}
step_threads=${STEP_THREADS:-2}
interest_radius=${INTEREST_RADIUS:-0}
bot_nice=${BOT_NICE:-0}

run_one() {
  local build=$1 players=$2
  local port=$((20000 + RANDOM % 20000))
  local mport=$((port + 1))
  local tmp
  tmp=$(mktemp -d)
  "$build/bin/keel-server" --scene "$scene" --bind 127.0.0.1:$port --metrics 127.0.0.1:$mport \
    --record "$tmp/rec" --max-matches 1 --max-players "$players" --step-threads "$step_threads" \
    --interest-radius "$interest_radius" \
    --status-interval 0 --log-level warn >"$tmp/server.log" 2>&1 &
  local server=$!
  sleep 0.5
  local interp=$((players - predict))
  local p=$predict
  if ((interp < 0)); then interp=0; p=$players; fi
  local bots=()
  if ((interp > 0)); then
    nice -n "$bot_nice" "$build/bin/keel-bot" --server 127.0.0.1:$port --bots "$interp" --seconds $((seconds + warmup + 2)) \
      --mode interpolate --match 0 --first-client-id 1000 --quiet --summary "$tmp/interp.json" >/dev/null 2>&1 &
    bots+=($!)
  fi
  if ((p > 0)); then
    nice -n "$bot_nice" "$build/bin/keel-bot" --server 127.0.0.1:$port --bots "$p" --seconds $((seconds + warmup + 2)) \
      --mode predict --match 0 --first-client-id 5000 --quiet --summary "$tmp/predict.json" >/dev/null 2>&1 &
    bots+=($!)
  fi
  local hz
  hz=$(getconf CLK_TCK)
  sleep "$warmup"
  local m0 c0 t0 m1 c1 t1
  m0=$(curl -s "127.0.0.1:$mport/metrics"); c0=$(awk '{print $14 + $15}' "/proc/$server/stat"); t0=$(date +%s.%N)
  sleep "$seconds"
  m1=$(curl -s "127.0.0.1:$mport/metrics"); c1=$(awk '{print $14 + $15}' "/proc/$server/stat"); t1=$(date +%s.%N)
  wait "${bots[@]}" || true
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  python3 - "$m0" "$m1" "$c0" "$c1" "$t0" "$t1" "$hz" "$players" "$build" "$tmp" <<'PY'
import json, os, sys
m0, m1 = sys.argv[1], sys.argv[2]
c0, c1, t0, t1, hz = map(float, sys.argv[3:8])
players, build, tmp = int(sys.argv[8]), sys.argv[9], sys.argv[10]
def parse(text):
    d = {}
    for line in text.splitlines():
        if line and not line.startswith('#'):
            k, v = line.rsplit(' ', 1)
            d[k] = float(v)
    return d
a, b = parse(m0), parse(m1)
delta = lambda k: b.get(k, 0) - a.get(k, 0)
def quantile(name, q):
    bounds = []
    for k in b:
        if k.startswith(name + '_bucket{le="') and '+Inf' not in k:
            bounds.append(float(k.split('"')[1]))
    bounds.sort()
    total = delta(name + '_count')
    if total <= 0:
        return float('nan')
    lo, below = 0.0, 0.0
    for le in bounds:
        n = delta('%s_bucket{le="%g"}' % (name, le))
        if n >= q * total:
            inside = n - below
            frac = (q * total - below) / inside if inside > 0 else 1.0
            return 1000 * (lo + (le - lo) * frac)
        lo, below = le, n
    return float('inf')
summaries = []
for f in ('interp.json', 'predict.json'):
    p = os.path.join(tmp, f)
    if os.path.exists(p):
        with open(p) as fh:
            summaries.append(json.load(fh))
connected = sum(s.get('connected', 0) for s in summaries)
mismatches = sum(s.get('hash_mismatches', 0) for s in summaries)
secs = t1 - t0
ticks = delta('keel_ticks_total')
cpu_s = (c1 - c0) / hz
print('bigmatch build=%s players=%d connected=%d seconds=%.1f ticks=%d late=%d dropped=%d '
      'tick_p50_ms=%.2f tick_p99_ms=%.2f run_p50_ms=%.2f run_p99_ms=%.2f cpu_ms_per_tick=%.2f '
      'server_cpu_pct=%.0f kbps_out_per_client=%.0f hash_mismatches=%d' % (
      os.path.basename(build.rstrip('/')), players, connected, secs, ticks, delta('keel_ticks_late_total'),
      delta('keel_ticks_dropped_total'),
      quantile('keel_tick_duration_seconds', 0.5), quantile('keel_tick_duration_seconds', 0.99),
      quantile('keel_match_run_duration_seconds', 0.5), quantile('keel_match_run_duration_seconds', 0.99),
      1000 * cpu_s / max(1, ticks), 100 * cpu_s / secs,
      delta('keel_bytes_out_total') * 8 / 1000 / secs / max(1, players), mismatches), flush=True)
PY
  rm -rf "$tmp"
}

for r in $(seq 1 "$rounds"); do
  for players in $players_list; do
    for build in $builds; do
      echo "round $r/$rounds: $build, $players players" >&2
      run_one "$build" "$players"
    done
  done
done
