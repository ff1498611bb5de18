#!/usr/bin/env bash
# Build scripts/llama/fit_probe.cpp against the cached static llama.cpp build (made by
# scripts/build-llama-tools.sh, which this runs first) and print the binary's path.
#
# Usage: scripts/build-fit-probe.sh [--help]
#
# The binary is cached as ~/.cache/gguf-grammar/fit-probe-<sha256 of the source and of this
# script>/fit_probe and rebuilt only when absent. Build output goes to stderr.

set -euo pipefail

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
fi

here="$(cd "$(dirname "$0")" && pwd)"
source_file="$here/llama/fit_probe.cpp"
bash "$here/build-llama-tools.sh" >/dev/null
cache="${GGUF_TOOLS_CACHE:-$HOME/.cache/gguf-grammar/llama.cpp-0.3.16}"
src="$cache/src"
build="$cache/build"

key="$(cat "$source_file" "$0" | sha256sum | cut -c1-16)"
out_dir="$HOME/.cache/gguf-grammar/fit-probe-$key"
out="$out_dir/fit_probe"
if [[ -x "$out" ]]; then
    echo "$out"
    exit 0
fi

lib() {
    local found
    found="$(find "$build" -name "$1" -print -quit)"
    [[ -n "$found" ]] || { echo "build-fit-probe.sh: $1 not found under $build" >&2; exit 1; }
    echo "$found"
}

mkdir -p "$out_dir"
g++ -std=c++17 -O1 -o "$out.part" "$source_file" \
    -I"$src/include" -I"$src/ggml/include" -I"$src/common" \
    -Wl,--wrap=ggml_backend_buffer_get_size,--wrap=ggml_backend_sched_get_buffer_size \
    "$(lib libllama.a)" "$(lib libggml.a)" "$(lib libggml-cpu.a)" "$(lib libggml-base.a)" \
    -fopenmp -lpthread -ldl >&2
mv "$out.part" "$out"
echo "$out"
