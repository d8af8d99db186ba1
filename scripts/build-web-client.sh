#!/usr/bin/env bash
# Builds the wasm32 client (client-sdk/web/, docs/browser.md "The wasm32 client") with
# Debian's emscripten into DIR (default build/web-client): DIR/bin/keel_web_client.js and
# .wasm. Incremental, and cached by ccache where installed. Then gathers in DIR/page the
# files keel-server --web-client DIR/page serves the page under /client/: the module, its
# JavaScript face (client-sdk/web/keel_web_client.mjs) and the ES modules of the two npm
# libraries from tests/web/node_modules (scripts/setup.sh installs them), libsodium-wrappers'
# import of the libsodium package by its bare name pointed at the file beside it (a page
# has no package resolution). Run by ctest as the fixture of
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
modules=tests/web/node_modules
for f in libsodium-wrappers/dist/modules-esm/libsodium-wrappers.mjs libsodium/dist/modules-esm/libsodium.mjs fzstd/esm/index.mjs; do
  if [ ! -f "$modules/$f" ]; then
    echo "build-web-client: $modules/$f missing (scripts/setup.sh runs npm ci in tests/web)" >&2
    exit 1
  fi
done
mkdir -p "$DIR/page"
cp "$DIR/bin/keel_web_client.js" "$DIR/bin/keel_web_client.wasm" client-sdk/web/keel_web_client.mjs "$DIR/page/"
cp "$modules/libsodium/dist/modules-esm/libsodium.mjs" "$DIR/page/libsodium.mjs"
cp "$modules/fzstd/esm/index.mjs" "$DIR/page/fzstd.mjs"
sed 's/from"libsodium"/from".\/libsodium.mjs"/' "$modules/libsodium-wrappers/dist/modules-esm/libsodium-wrappers.mjs" \
  >"$DIR/page/libsodium-wrappers.mjs"
if ! grep -q 'from"./libsodium.mjs"' "$DIR/page/libsodium-wrappers.mjs"; then
  echo "build-web-client: libsodium-wrappers.mjs no longer imports libsodium as expected" >&2
  exit 1
fi
ls -l "$DIR/page"
