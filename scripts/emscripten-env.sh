# Sourced, not run: `source scripts/emscripten-env.sh DIR` sets up Debian's emscripten for a
# build whose emscripten cache lives in DIR (docs/determinism.md, "wasm32").
#
# Debian's emscripten reads a frozen cache in /usr/share/emscripten/cache: prebuilt system
# libraries, enough for the flags Keel uses today, that nothing may add to. A variant or
# port Debian did not prebuild then fails ("FROZEN_CACHE is set, but cache file is
# missing", or "Permission denied: '/usr/share/emscripten/cache/ports'" for a user who is
# not root). This gives the build a cache of its own instead, inside its build folder:
#  - DIR/cache starts as a tree of links to Debian's prebuilt libraries and headers (made
#    once, in well under a second), so nothing is rebuilt that Debian ships;
#  - DIR/emscripten.config is Debian's configuration with that cache, unfrozen, so a
#    library variant Debian did not prebuild is built into DIR/cache, not refused;
#  - NODE_PATH lets emscripten's JavaScript tools find Debian's node-acorn
#    (/usr/share/nodejs), which a node from outside Debian does not search.
# It exports EM_CONFIG, EM_CACHE and NODE_PATH; it fails if emscripten is not installed.
keel_emscripten_env() {
  local dir=$1 root debian_cache
  if ! command -v em-config >/dev/null 2>&1; then
    echo "emscripten-env: em-config not found (scripts/setup.sh --determinism installs emscripten)" >&2
    return 1
  fi
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  root=$(env -u EM_CONFIG -u EM_CACHE em-config EMSCRIPTEN_ROOT)
  debian_cache=$(env -u EM_CONFIG -u EM_CACHE em-config CACHE)
  if [ ! -e "$dir/cache/sysroot_install.stamp" ]; then
    rm -rf "$dir/cache"
    mkdir -p "$dir/cache"
    cp -rs "$debian_cache/." "$dir/cache/"
    # The lock must be this cache's own file, writable by whoever builds.
    rm -f "$dir/cache/cache.lock" "$dir/cache/sanity.txt"
  fi
  cat >"$dir/emscripten.config" <<EOF
# Written by scripts/emscripten-env.sh: Debian's configuration with a writable cache.
exec(open('$root/.emscripten').read())
CACHE = '$dir/cache'
FROZEN_CACHE = False
EOF
  export EM_CONFIG=$dir/emscripten.config
  export EM_CACHE=$dir/cache
  export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
}

keel_emscripten_env "$@"
