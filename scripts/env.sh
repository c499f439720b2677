# Sourced by the Makefile's recipes: the pinned tools first on PATH, browsers kept out of $HOME.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$ROOT/.tools/binaryen/node_modules/.bin:$HOME/.cargo/bin:$PATH"
export XDG_CONFIG_HOME="$ROOT/tmp/xdg-config" XDG_CACHE_HOME="$ROOT/tmp/xdg-cache"
export CHROMEDRIVER="${CHROMEDRIVER:-/usr/bin/chromedriver}"
mkdir -p "$ROOT/tmp"
