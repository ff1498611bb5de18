#!/usr/bin/env bash
# Build scripts/llama/loader.cpp (llama.cpp as an executed reference: load, tokenize, decode
# each model in a child process, one JSON line per model) against the static libllama that
# scripts/build-llama-tools.sh builds, and print the path of the binary.
#
# Usage: scripts/build-llama-loader.sh [--help]
#
# The binary is cached as ~/.cache/gguf-grammar/llama-loader-HASH/loader (HASH: the source's
# and this script's sha256), built only when absent. $GGUF_TOOLS_CACHE is the llama.cpp cache,
# as for build-llama-tools.sh. Build logs go to stderr.

set -euo pipefail

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
fi

here="$(cd "$(dirname "$0")" && pwd)"
bash "$here/build-llama-tools.sh" >/dev/null
cache="${GGUF_TOOLS_CACHE:-$HOME/.cache/gguf-grammar/llama.cpp-0.3.16}"
src="$cache/src"
build="$cache/build"
hash="$(cat "$here/llama/loader.cpp" "$0" | sha256sum | cut -c1-16)"
out="$HOME/.cache/gguf-grammar/llama-loader-$hash"
if [[ -x "$out/loader" ]]; then
    echo "$out/loader"
    exit 0
fi

libs=()
for lib in src/libllama.a ggml/src/libggml.a ggml/src/libggml-cpu.a ggml/src/libggml-base.a; do
    [[ -f "$build/$lib" ]] || { echo "build-llama-loader.sh: $build/$lib is missing" >&2; exit 1; }
    libs+=("$build/$lib")
done
mkdir -p "$out"
g++ -std=c++17 -O2 -Wall -Wextra -I"$src/include" -I"$src/ggml/include" -DLLAMA_SRC_ROOT="\"$src/\"" \
    -o "$out/loader.part" "$here/llama/loader.cpp" "${libs[@]}" -fopenmp -lpthread -ldl >&2
mv "$out/loader.part" "$out/loader"
echo "$out/loader"
