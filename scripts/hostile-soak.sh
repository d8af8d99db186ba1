#!/usr/bin/env bash
# A hostile soak, not part of CI: 16 keel-bots play against keel-server for N minutes while
# keel-attack runs a mix of the attacks docs/security.md describes (block bombs and claims
# from authenticated players, handshake garbage, replayed responses, connected garbage).
# At the end it reports ticks late and dropped, hash checks and mismatches, joins, the
# server's peak resident size, /healthz failures and what the attack sent, and verifies
# every recording; it exits 1 if a bot desynced, a bot failed to join, or a recording does
# not verify.
#
#   scripts/hostile-soak.sh                 10 minutes
#   scripts/hostile-soak.sh --minutes 30
#   scripts/hostile-soak.sh --short         30 seconds
#   scripts/hostile-soak.sh --short --rate 6000      attack datagrams a second (default 3000)
# Environment: BUILD_DIR (default build; the binaries are built there first), OUT (default
# $BUILD_DIR/hostile-soak: logs, summaries, recordings).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
OUT="${OUT:-$BUILD_DIR/hostile-soak}"
SECONDS_TOTAL=600
RATE=3000
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) SECONDS_TOTAL=$(( ${2:?--minutes needs a number} * 60 )); shift 2 ;;
    --short) SECONDS_TOTAL=30; shift ;;
    --rate) RATE="${2:?--rate needs a number}"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "hostile-soak: unknown argument $1 (try --help)" >&2; exit 2 ;;
  esac
done
if [ "$SECONDS_TOTAL" -lt 20 ]; then
  echo "hostile-soak: run at least 20 s" >&2
  exit 2
fi

cmake --build "$BUILD_DIR" --target keel-server keel-bot keel-attack keel-replay >/dev/null
BIN="$BUILD_DIR/bin"
rm -rf "$OUT"
mkdir -p "$OUT/recordings"
free_port() { python3 -c 'import socket,sys; s=socket.socket(socket.AF_INET, getattr(socket, sys.argv[1])); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' "$1"; }
PORT=$(free_port SOCK_DGRAM)
HTTP=$(free_port SOCK_STREAM)
SERVER="127.0.0.1:$PORT"

"$BIN/keel-server" --scene "$ROOT/scenes/demo.json" --bind "$SERVER" --record "$OUT/recordings" \
  --metrics "127.0.0.1:$HTTP" --status-interval 0 --log-file "$OUT/server.log" >"$OUT/server.txt" 2>&1 &
SERVER_PID=$!
BOT_PID=""
ATTACK_PID=""
cleanup() {
  for p in $ATTACK_PID $BOT_PID $SERVER_PID; do kill "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
for _ in $(seq 50); do
  curl -sf "127.0.0.1:$HTTP/healthz" >/dev/null 2>&1 && break
  sleep 0.1
done

echo "hostile-soak: $SECONDS_TOTAL s, 16 bots, attack at $RATE datagrams/s against $SERVER (out: ${OUT#$ROOT/})"
"$BIN/keel-bot" --server "$SERVER" --bots 16 --mode predict --seconds "$SECONDS_TOTAL" \
  --summary "$OUT/bots.json" --quiet >"$OUT/bots.txt" 2>&1 &
BOT_PID=$!
sleep 3  # the bots join and sync before the attack starts
"$BIN/keel-attack" --server "$SERVER" --seconds $(( SECONDS_TOTAL - 6 )) --rate "$RATE" \
  --summary "$OUT/attack.json" >"$OUT/attack.txt" 2>&1 &
ATTACK_PID=$!

health_checks=0
health_bad=0
start=$SECONDS
while kill -0 "$BOT_PID" 2>/dev/null; do
  code=$(curl -s -o /dev/null -w '%{http_code}' "127.0.0.1:$HTTP/healthz" || true)
  health_checks=$((health_checks + 1))
  [ "$code" = 200 ] || health_bad=$((health_bad + 1))
  elapsed=$((SECONDS - start))
  if [ -t 2 ]; then printf '\rhostile-soak: %d/%d s, healthz failures %d ' "$elapsed" "$SECONDS_TOTAL" "$health_bad" >&2; fi
  sleep 1
done
[ -t 2 ] && echo >&2
wait "$BOT_PID" || true
BOT_PID=""
wait "$ATTACK_PID" || true
ATTACK_PID=""
peak_kib=$(awk '/^VmHWM:/ {print $2}' "/proc/$SERVER_PID/status")
# CPU seconds the server used (user + system), to tell its own cost from the machine's load.
server_cpu=$(awk -v hz="$(getconf CLK_TCK)" '{printf "%.1f", ($14 + $15) / hz}' "/proc/$SERVER_PID/stat")
load=$(cut -d' ' -f1-3 /proc/loadavg)
curl -s "127.0.0.1:$HTTP/metrics" >"$OUT/metrics.txt"
kill -TERM "$SERVER_PID"
wait "$SERVER_PID" || true
SERVER_PID=""

verified=0
failed=0
for rec in "$OUT"/recordings/*.krec; do
  if "$BIN/keel-replay" verify "$rec" >"$OUT/verify-$(basename "$rec").txt" 2>&1; then
    verified=$((verified + 1))
  else
    failed=$((failed + 1))
  fi
done

python3 - "$OUT" "$peak_kib" "$health_checks" "$health_bad" "$verified" "$failed" "$server_cpu" "$load" <<'PY'
import json, re, sys
out, peak_kib, checks, bad, verified, failed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
server_cpu, load = sys.argv[7], sys.argv[8]
bots = json.load(open(out + "/bots.json"))
attack = json.load(open(out + "/attack.json"))
metrics = {}
for line in open(out + "/metrics.txt"):
    m = re.match(r'^(keel_[a-z_]+(?:\{[^}]*\})?) ([0-9.e+-]+)$', line.strip())
    if m:
        metrics[m.group(1)] = float(m.group(2))
def g(name):
    return int(metrics.get(name, 0))
drops = {k[len('keel_drops_total{reason="'):-2]: int(v) for k, v in metrics.items() if k.startswith("keel_drops_total{") and v}
print("hostile-soak report")
print(f"  bots joined        {bots['connected']} of {bots['bots']}; attackers joined {attack['attackers_joined']} of {attack['attackers']}")
print(f"  hash checks        {bots['hash_checks']}, mismatches {bots['hash_mismatches']}")
print(f"  ticks              {g('keel_ticks_total')}, late {g('keel_ticks_late_total')}, dropped {g('keel_ticks_dropped_total')}")
print(f"  /healthz           {checks - bad} of {checks} ok")
print(f"  server peak RSS    {peak_kib / 1024:.1f} MiB; client memory peak {g('keel_client_memory_peak_bytes')} B")
print(f"  server CPU         {server_cpu} s; machine load average at the end {load}")
print(f"  attack             {attack['datagrams']} datagrams in {attack['seconds']:.0f} s: " +
      ", ".join(f"{k} {v}" for k, v in sorted(attack['sent'].items())))
print("  drops              " + ", ".join(f"{k} {v}" for k, v in sorted(drops.items())))
print(f"  recordings         {verified} verified, {failed} failed")
ok = bots['hash_mismatches'] == 0 and bots['connected'] == bots['bots'] and failed == 0 and verified > 0
print("hostile-soak: " + ("ok" if ok else "FAILED"))
sys.exit(0 if ok else 1)
PY
