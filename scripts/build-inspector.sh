#!/usr/bin/env bash
# Build web/inspector.html, the zero-upload inspector, from web/src/, the map viewer
# (crates/gguf-tools/src/render/map/map.html, map_view.js), the JavaScript parser that the Kaitai Struct compiler
# generates from grammar/gguf.ksy (runtime and parser inlined; see scripts/grammar/build-inspector.js)
# and the WebAssembly module of crates/gguf-wasm (templates, llama.cpp's verdict, memory fit:
# the workspace's own Rust, built for wasm32-wasip1 in release, gzipped and inlined).
#
# Usage: scripts/build-inspector.sh           rewrite web/inspector.html
#        scripts/build-inspector.sh --check   fail (exit 1) when the committed page differs from
#                                             what the sources and the grammar give (CI runs this)
# Installs the npm packages of scripts/grammar/ once (npm ci) and the wasm32-wasip1 target once
# (rustup target add). The module is built with the paths of this checkout and of the cargo
# home remapped, so it is the same bytes wherever it is built with the same toolchain.
set -euo pipefail
cd "$(dirname "$0")/.."

[[ -d scripts/grammar/node_modules ]] || (cd scripts/grammar && npm ci --no-audit --no-fund --silent)

wasm() {
    local target=wasm32-wasip1
    rustup target list --installed | grep -qx "$target" || rustup target add "$target" >&2
    RUSTFLAGS="--remap-path-prefix=$PWD=/gguf-grammar --remap-path-prefix=${CARGO_HOME:-$HOME/.cargo}=/cargo" \
        cargo build --quiet --locked --release --target "$target" -p gguf-wasm \
        --config 'profile.release.debug=0' --config 'profile.release.opt-level="s"' \
        --config 'profile.release.panic="abort"' --config 'profile.release.strip=true' >&2
    echo "target/$target/release/gguf_wasm.wasm"
}

case "${1:-}" in
    "") node scripts/grammar/build-inspector.js web/inspector.html "$(wasm)" ;;
    --check)
        mkdir -p target
        node scripts/grammar/build-inspector.js target/inspector.html "$(wasm)"
        if ! cmp -s target/inspector.html web/inspector.html; then
            echo "build-inspector.sh: web/inspector.html is not what web/src/, grammar/gguf.ksy and crates/gguf-wasm give;" >&2
            echo "run scripts/build-inspector.sh and commit the result" >&2
            diff <(cut -c1-200 web/inspector.html) <(cut -c1-200 target/inspector.html) | head -20 >&2 || true
            exit 1
        fi
        echo "web/inspector.html matches its sources" >&2 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' ;;
    *) echo "usage: scripts/build-inspector.sh [--check]" >&2; exit 2 ;;
esac
