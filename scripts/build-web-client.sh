#!/usr/bin/env bash
# Builds the wasm32 client (client-sdk/web/, docs/browser.md "The wasm32 client") with
# Debian's emscripten into DIR (default build/web-client): DIR/bin/keel_web_client.js and
# .wasm. Incremental, and cached by ccache where installed. Run by ctest as the fixture of
# web.wasm_client (tests/CMakeLists.txt); fails, with the reason, where emscripten is absent,
# as the determinism check's wasm32 configuration does.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-build/web-client}
if ! command -v em-config >/dev/null 2>&1; then
  echo "build-web-client: emscripten is not installed (scripts/setup.sh installs Debian's emscripten)" >&2
  exit 1
fi
# shellcheck source=scripts/emscripten-env.sh
source scripts/emscripten-env.sh "$DIR/emscripten"
launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S client-sdk/web -B "$DIR" --toolchain "$PWD/cmake/wasm32-emscripten.cmake" -DCMAKE_BUILD_TYPE=Release \
  "${launcher[@]}" >/dev/null
cmake --build "$DIR" -j"$(nproc)"
ls -l "$DIR/bin/keel_web_client.js" "$DIR/bin/keel_web_client.wasm"
