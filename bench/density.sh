#!/usr/bin/env bash
# bench/density.sh [BUILD] [SECONDS] [COUNTS]  — the server density figure.
#
# How many 8-player matches of scenes/demo.json one keel-server process steps at 60 Hz
# with no late tick: for each N of COUNTS (ascending, default "4 8 12 16 20 24 32"), one
# run of server/tools/loadbench.sh BUILD N SECONDS 8 (N keel-bot processes of 8
# interpolating bots each, on the same machine, loopback), until the first N whose run
# has a late or dropped tick. Prints each run's loadbench line, then
#
#   density matches=M cores=C load_before=L1 load_after=L2 first_late=N
#
# M: the largest N run with no late and no dropped tick (0: none), C: the cores the
# machine has (nproc), L1/L2: the 1-minute load average before the first and after the
# last run (the machine may be shared: a late tick may be another process's doing).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
seconds=${2:-10}
counts=${3:-4 8 12 16 20 24 32}
load() { cut -d' ' -f1 /proc/loadavg; }
load_before=$(load)
best=0
first_late=none
for n in $counts; do
  line=$("$here/server/tools/loadbench.sh" "$build" "$n" "$seconds" 8)
  echo "$line"
  late=$(sed -E 's/.* late=([0-9]+).*/\1/' <<<"$line")
  dropped=$(sed -E 's/.* dropped=([0-9]+).*/\1/' <<<"$line")
  connected=$(sed -E 's/.* players_connected=([0-9]+).*/\1/' <<<"$line")
  if ((late > 0 || dropped > 0 || connected < n * 8)); then
    first_late=$n
    break
  fi
  best=$n
done
echo "density matches=$best cores=$(nproc) load_before=$load_before load_after=$(load) first_late=$first_late"
