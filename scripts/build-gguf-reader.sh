#!/usr/bin/env bash
# Build scripts/llama/gguf-reader.cpp (ggml's gguf_init_from_file, metadata only and with the
# tensor data: the --ggml program of tests/conformance/record.py) against the ggml of the
# llama.cpp that scripts/build-llama-tools.sh builds, and print the path of the binary.
#
# Usage: scripts/build-gguf-reader.sh [--help]
#
# The binary is cached as ~/.cache/gguf-grammar/gguf-reader-HASH/gguf-reader (HASH: the
# source's and this script's sha256), built only when absent. $GGUF_TOOLS_CACHE is the
# llama.cpp cache, as for build-llama-tools.sh. Build logs go to stderr.

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
hash="$(cat "$here/llama/gguf-reader.cpp" "$0" | sha256sum | cut -c1-16)"
out="$HOME/.cache/gguf-grammar/gguf-reader-$hash"
if [[ -x "$out/gguf-reader" ]]; then
    echo "$out/gguf-reader"
    exit 0
fi

libs=()
for lib in ggml/src/libggml.a ggml/src/libggml-cpu.a ggml/src/libggml-base.a; do
    [[ -f "$build/$lib" ]] || { echo "build-gguf-reader.sh: $build/$lib is missing" >&2; exit 1; }
    libs+=("$build/$lib")
done
mkdir -p "$out"
g++ -std=c++17 -O2 -Wall -Wextra -I"$src/ggml/include" \
    -o "$out/gguf-reader.part" "$here/llama/gguf-reader.cpp" "${libs[@]}" -fopenmp -lpthread -ldl >&2
mv "$out/gguf-reader.part" "$out/gguf-reader"
echo "$out/gguf-reader"
