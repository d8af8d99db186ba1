#!/usr/bin/env bash
# Installs every Debian 12 package Keel needs to build and test, when it is missing.
# Safe to run repeatedly: it only calls apt-get when something is absent.
set -euo pipefail

PACKAGES=(
  g++ cmake make pkg-config
  libglm-dev libxxhash-dev libtbb-dev
  libflatbuffers-dev flatbuffers-compiler
  libasio-dev libsodium-dev libzstd-dev
  # keel-server's --websocket listener and the client SDK's WebSocket transport (header-only).
  libwebsocketpp-dev
  libgtest-dev libcli11-dev nlohmann-json3-dev
  libbullet-dev
  # scripts/fuzz.sh (run by scripts/test.sh): clang-14, libFuzzer and the ASan/UBSan
  # runtimes (libclang-rt-14-dev), and llvm-symbolizer (llvm-14) for readable crash stacks.
  clang-14 libclang-rt-14-dev llvm-14
  # scripts/deploy-check.sh: lints deploy/ and renders its kustomize overlays.
  yamllint
  # The wasm32 client (client-sdk/web/, built for ctest's web.wasm_client by
  # scripts/build-web-client.sh): Debian's emscripten 3.1.6 with its clang-14, lld-14,
  # binaryen and nodejs. The determinism check's wasm32 runner uses it too.
  emscripten
)
# kubectl renders the kustomize overlays; Debian ships it as kubernetes-client. A machine
# that already has a kubectl (from another package) keeps it.
if ! command -v kubectl >/dev/null 2>&1; then
  PACKAGES+=(kubernetes-client)
fi

# The replay viewer's browser test (tests/viewer/): Node.js and npm (Debian's, unless the
# machine already has them), Debian's chromium, and playwright-core pinned by
# tests/viewer/package-lock.json. Installed one by one and never fatal: where Chromium
# cannot be installed the test skips, and everything else still builds and runs.
viewer_test_deps() {
  if [ "${1:-}" = "--determinism" ]; then return 0; fi
  local dir p
  dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/viewer"
  for p in nodejs:node npm:npm chromium:chromium; do
    if ! command -v "${p#*:}" >/dev/null 2>&1; then
      p="${p%%:*}"
      echo "keel setup: installing $p (browser test)"
      { DEBIAN_FRONTEND=noninteractive ${SUDO:-} apt-get install -y -qq --no-install-recommends "$p" ||
        { ${SUDO:-} apt-get update -qq && DEBIAN_FRONTEND=noninteractive ${SUDO:-} apt-get install -y -qq --no-install-recommends "$p"; }; } ||
        echo "keel setup: could not install $p; the viewer's browser test will be skipped" >&2
    fi
  done
  if [ ! -d "$dir/node_modules/playwright-core" ] && command -v npm >/dev/null 2>&1; then
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) ||
      echo "keel setup: npm ci in tests/viewer failed; the viewer's browser test will fail until it succeeds" >&2
  fi
  # The wasm32 client's node test (tests/web/wasm_client_test.mjs): libsodium-wrappers (the
  # packet AEAD), fzstd (the scene block's zstd) and ws (node 20 has no WebSocket client),
  # pinned by tests/web/package-lock.json.
  dir="$(dirname "$dir")/web"
  if [ ! -d "$dir/node_modules/libsodium-wrappers" ] && command -v npm >/dev/null 2>&1; then
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) ||
      echo "keel setup: npm ci in tests/web failed; the wasm client's test will fail until it succeeds" >&2
  fi
}

# The determinism check's extra configurations (scripts/determinism.sh): clang, an aarch64
# cross compiler, and qemu user-mode emulation to run what it builds; emscripten (3.1.6, with
# its clang-14, lld-14, binaryen, node-acorn and nodejs) for the wasm32 runner, run by node.
# Installed only by `scripts/setup.sh --determinism`, which that script calls (emscripten is
# also in the main list, for the wasm32 client).
DETERMINISM_PACKAGES=(clang-14 g++-aarch64-linux-gnu qemu-user emscripten)
if [ "${1:-}" = "--determinism" ]; then
  PACKAGES=("${DETERMINISM_PACKAGES[@]}")
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  viewer_test_deps "${1:-}"
  exit 0
fi

echo "keel setup: installing ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1; then
  SUDO="sudo"
else
  echo "keel setup: missing packages (${missing[*]}) and not root; install them with apt-get" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
viewer_test_deps "${1:-}"
