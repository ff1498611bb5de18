#!/usr/bin/env bash
# Build web/inspector.html, the zero-upload inspector, from web/src/, the map viewer
# (crates/gguf-tools/src/render/map.html, map_view.js) and the JavaScript parser that the Kaitai Struct compiler
# generates from grammar/gguf.ksy (runtime and parser inlined; see scripts/grammar/build-inspector.js).
#
# Usage: scripts/build-inspector.sh           rewrite web/inspector.html
#        scripts/build-inspector.sh --check   fail (exit 1) when the committed page differs from
#                                             what the sources and the grammar give (CI runs this)
# Installs the npm packages of scripts/grammar/ once (npm ci).
set -euo pipefail
cd "$(dirname "$0")/.."

[[ -d scripts/grammar/node_modules ]] || (cd scripts/grammar && npm ci --no-audit --no-fund --silent)
case "${1:-}" in
    "") node scripts/grammar/build-inspector.js web/inspector.html ;;
    --check)
        mkdir -p target
        node scripts/grammar/build-inspector.js target/inspector.html
        if ! cmp -s target/inspector.html web/inspector.html; then
            echo "build-inspector.sh: web/inspector.html is not what web/src/ and grammar/gguf.ksy give;" >&2
            echo "run scripts/build-inspector.sh and commit the result" >&2
            diff <(cat web/inspector.html) target/inspector.html | head -20 >&2 || true
            exit 1
        fi
        echo "web/inspector.html matches its sources" >&2 ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' ;;
    *) echo "usage: scripts/build-inspector.sh [--check]" >&2; exit 2 ;;
esac
