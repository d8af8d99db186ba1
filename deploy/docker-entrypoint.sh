#!/usr/bin/env bash
# Turns the container's KEEL_* environment into keel-server flags; extra flags given to
# `docker run IMAGE ...` (or a Pod's args) are appended and win.
set -euo pipefail
args=(--scene "${KEEL_SCENE}" --bind "${KEEL_BIND}" --record "${KEEL_RECORD_DIR}")
# Outside Agones, tokens name the address clients reach the container at (the host's).
[ -n "${KEEL_PUBLIC_ADDRESS:-}" ] && args+=(--public-address "${KEEL_PUBLIC_ADDRESS}")
[ -n "${KEEL_METRICS:-}" ] && args+=(--metrics "${KEEL_METRICS}")
[ -n "${KEEL_TOKEN_KEY_FILE:-}" ] && args+=(--token-key "${KEEL_TOKEN_KEY_FILE}")
[ -n "${KEEL_LOG_JSON:-}" ] && args+=(--log-json)
exec keel-server "${args[@]}" "$@"
