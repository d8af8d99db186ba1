#!/usr/bin/env bash
# Checks deploy/ as far as a machine without Docker or a cluster can:
#   1. yamllint on every YAML file under deploy/;
#   2. `kubectl kustomize` renders the base and every overlay, and each rendering holds the
#      Fleet, the FleetAutoscaler and the image the overlay pins; it also renders the
#      standalone GameServer (deploy/k8s/gameserver), whose spec must equal the dev
#      overlay's Fleet template;
#   3. the Dockerfile passes KEEL_GIT_COMMIT to cmake, and its run stage installs exactly the Debian packages that own the shared
#      libraries the built binaries link against (ldd), besides what debian:bookworm-slim
#      already has;
#   4. the entrypoint turns KEEL_METRICS / KEEL_METRICS_HOST into the right --metrics.
# Usage: scripts/deploy-check.sh [BUILD_DIR]   (BUILD_DIR/bin holds the built binaries)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-${KEEL_BUILD_DIR:-build}}
fail=0
say() { printf 'deploy-check: %s\n' "$*"; }

# 1. YAML lint.
if yamllint -s -c deploy/.yamllint deploy; then
  say "yamllint ok ($(find deploy -name '*.yaml' | wc -l) files)"
else
  say "yamllint FAILED"; fail=1
fi

# 2. Kustomize renderings.
render() {  # dir, expected image (or empty), kinds expected (default: Fleet FleetAutoscaler)
  local out
  if ! out=$(kubectl kustomize "$1" 2>/tmp/keel-kustomize.err); then
    say "kubectl kustomize $1 FAILED: $(grep -v '^# Warning' /tmp/keel-kustomize.err)"; fail=1; return
  fi
  for kind in ${3:-Fleet FleetAutoscaler}; do
    grep -q "^kind: $kind\$" <<<"$out" || { say "$1: no $kind in the rendering"; fail=1; }
  done
  if [ -n "$2" ] && ! grep -q "image: $2\$" <<<"$out"; then
    say "$1: image $2 not set"; fail=1
  fi
  say "kustomize $1 ok ($(grep -c '^kind:' <<<"$out") objects)"
}
render deploy/k8s/base keel-server:latest
render deploy/k8s/overlays/dev keel-server:dev
render deploy/k8s/overlays/production registry.example.com/keel/keel-server:0.1.0
render deploy/k8s/gameserver keel-server:dev GameServer

# The standalone GameServer runs what a dev Fleet's GameServers run: same ports, health,
# pod (python3-yaml comes with yamllint).
if ! python3 - <<'PY'
import subprocess, sys, yaml
def render(d):
    out = subprocess.run(["kubectl", "kustomize", d], check=True, capture_output=True, text=True).stdout
    return {doc["kind"]: doc for doc in yaml.safe_load_all(out) if doc}
fleet = render("deploy/k8s/overlays/dev")["Fleet"]["spec"]["template"]["spec"]
gameserver = render("deploy/k8s/gameserver")["GameServer"]["spec"]
sys.exit(0 if fleet == gameserver else 1)
PY
then
  say "deploy/k8s/gameserver/gameserver.yaml: spec differs from the dev overlay's Fleet template"; fail=1
else
  say "standalone GameServer matches the dev Fleet template"
fi

# The image has no .git: the build id recordings carry comes in as a build argument.
if ! grep -q '^ARG KEEL_GIT_COMMIT' deploy/Dockerfile ||
   ! grep -q -- '-DKEEL_GIT_COMMIT="${KEEL_GIT_COMMIT}"' deploy/Dockerfile; then
  say "Dockerfile: KEEL_GIT_COMMIT is not passed to cmake (recordings would say +unknown)"; fail=1
fi

# 3. Run-stage packages against what the binaries link.
declared=$(sed -n 's/^# runtime-packages: //p' deploy/Dockerfile | tr ' ' '\n' | sort -u)
if ! grep -q "apt-get install -y --no-install-recommends $(sed -n 's/^# runtime-packages: //p' deploy/Dockerfile) " deploy/Dockerfile; then
  say "Dockerfile: the run stage's apt-get line differs from its runtime-packages comment"; fail=1
fi
base_image="libc6 libstdc++6 libgcc-s1"  # part of debian:bookworm-slim
bins=()
for b in keel-server keel-bot keel-replay keel-token keel-sim; do
  [ -x "$BUILD_DIR/bin/$b" ] && bins+=("$BUILD_DIR/bin/$b")
done
if [ ${#bins[@]} -eq 0 ]; then
  say "no binaries in $BUILD_DIR/bin: build first"; exit 1
fi
needed=$(for b in "${bins[@]}"; do ldd "$b" | awk '$3 ~ /^\// {print $3}'; done | sort -u |
  while read -r lib; do dpkg -S "$(readlink -f "$lib")" 2>/dev/null || dpkg -S "$lib"; done |
  cut -d: -f1 | sort -u)
for p in $needed; do
  grep -qx "$p" <<<"$declared" || grep -qw "$p" <<<"$base_image" ||
    { say "Dockerfile run stage lacks $p (linked by the binaries)"; fail=1; }
done
for p in $declared; do
  grep -qx "$p" <<<"$needed" || { say "Dockerfile run stage installs $p, which nothing links"; fail=1; }
done
say "runtime packages checked against ldd of ${#bins[@]} binaries: $(echo $needed)"

# 4. The entrypoint's flags for the metrics address (KEEL_METRICS, KEEL_METRICS_HOST), run
#    with a stand-in keel-server that prints its arguments.
fake=$(mktemp -d)
printf '#!/bin/sh\necho "$@"\n' >"$fake/keel-server"
chmod +x "$fake/keel-server"
entry() { env -i PATH="$fake:/usr/bin:/bin" KEEL_SCENE=s KEEL_BIND=0.0.0.0:7777 KEEL_RECORD_DIR=r "$@" \
  bash deploy/docker-entrypoint.sh; }
check_entry() {  # expected --metrics value ("" = none), then environment assignments
  local want=$1 got; shift
  got=$(entry "$@" | sed -n 's/.*--metrics \([^ ]*\).*/\1/p')
  [ "$got" = "$want" ] || { say "entrypoint: $* gave --metrics '${got}', not '${want}'"; fail=1; }
}
check_entry 0.0.0.0:9100 KEEL_METRICS=0.0.0.0:9100
check_entry 10.1.2.3:9100 KEEL_METRICS=0.0.0.0:9100 KEEL_METRICS_HOST=10.1.2.3
check_entry '[fd00::5]:9100' KEEL_METRICS=0.0.0.0:9100 KEEL_METRICS_HOST=fd00::5
check_entry 127.0.0.1:9200 KEEL_METRICS=127.0.0.1:9200
check_entry "" KEEL_METRICS=
rm -rf "$fake"
say "entrypoint metrics address checked"

[ $fail -eq 0 ] && say "all checks passed" || say "FAILED"
exit $fail
