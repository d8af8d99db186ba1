#!/usr/bin/env bash
# Turns the container's KEEL_* environment into keel-server flags; extra flags given to
# `docker run IMAGE ...` (or a Pod's args) are appended and win.
#
# The metrics endpoint binds KEEL_METRICS (HOST:PORT, default 0.0.0.0:9100 in the image;
# empty = no endpoint). KEEL_METRICS_HOST, when set, replaces its host: Kubernetes sets it
# to the pod IP (status.podIP), so the endpoint answers on the pod network only and not
# on the pod's loopback. A bare IPv6 address is bracketed.
#
# `keel-entrypoint healthcheck` is the image's HEALTHCHECK: GET /healthz on the address
# the endpoint is bound to (loopback for a wildcard bind).
set -euo pipefail

metrics_address() {
  local m=${KEEL_METRICS:-}
  [ -z "$m" ] && return 0
  if [ -n "${KEEL_METRICS_HOST:-}" ]; then
    local host=$KEEL_METRICS_HOST
    [[ $host == *:* && $host != \[* ]] && host="[$host]"
    m="$host:${m##*:}"
  fi
  printf '%s' "$m"
}

if [ "${1:-}" = healthcheck ]; then
  m=$(metrics_address)
  [ -n "$m" ] || { echo "healthcheck: KEEL_METRICS is empty: no endpoint to ask" >&2; exit 1; }
  host=${m%:*} port=${m##*:}
  host=${host#[}; host=${host%]}
  case $host in 0.0.0.0) host=127.0.0.1 ;; ::) host=::1 ;; esac
  exec 3<>"/dev/tcp/$host/$port"
  printf 'GET /healthz HTTP/1.0\r\n\r\n' >&3
  head -n1 <&3 | grep -q ' 200 '
  exit
fi

args=(--scene "${KEEL_SCENE}" --bind "${KEEL_BIND}" --record "${KEEL_RECORD_DIR}")
# Outside Agones, tokens name the address clients reach the container at (the host's).
[ -n "${KEEL_PUBLIC_ADDRESS:-}" ] && args+=(--public-address "${KEEL_PUBLIC_ADDRESS}")
metrics=$(metrics_address)
[ -n "$metrics" ] && args+=(--metrics "$metrics")
[ -n "${KEEL_TOKEN_KEY_FILE:-}" ] && args+=(--token-key "${KEEL_TOKEN_KEY_FILE}")
[ -n "${KEEL_LOG_JSON:-}" ] && args+=(--log-json)
exec keel-server "${args[@]}" "$@"
