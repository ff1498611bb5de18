#!/usr/bin/env bash
# Build one of our reference programs (a .cpp file in scripts/llama/) against the static
# llama.cpp libraries that scripts/build-llama-tools.sh builds, and print the binary's path.
#
# Usage: scripts/llama/build-program.sh SOURCE.cpp [EXTRA_G++_ARGUMENTS...]
#
# The binary is cached as ~/.cache/gguf-grammar/NAME-HASH/NAME (NAME: the source's name
# without .cpp; HASH: the sha256 of the source, this script, the extra arguments and the
# llama.cpp build's stamp), built only when absent. Concurrent builds of the same program are
# safe: each links into its own temporary file and renames it into place. $GGUF_TOOLS_CACHE
# is the llama.cpp cache, as for build-llama-tools.sh. Build logs go to stderr.

set -euo pipefail

if [[ $# -lt 1 || "$1" == "-h" || "$1" == "--help" ]]; then
    sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
    [[ $# -ge 1 ]] && exit 0 || exit 2
fi

source_file="$1"
shift
here="$(cd "$(dirname "$0")/.." && pwd)"
bash "$here/build-llama-tools.sh" >/dev/null
cache="${GGUF_TOOLS_CACHE:-$HOME/.cache/gguf-grammar/llama.cpp-0.3.16}"
src="$cache/src"
build="$cache/build"

name="$(basename "$source_file" .cpp)"
hash="$( (cat "$source_file" "$0" "$cache"/.built-*; printf '%s\n' "$@") | sha256sum | cut -c1-16)"
out_dir="$HOME/.cache/gguf-grammar/$name-$hash"
out="$out_dir/$name"
if [[ -x "$out" ]]; then
    echo "$out"
    exit 0
fi

libs=()
for lib in common/libcommon.a src/libllama.a ggml/src/libggml.a ggml/src/libggml-cpu.a ggml/src/libggml-base.a; do
    [[ -f "$build/$lib" ]] || { echo "build-program.sh: $build/$lib is missing" >&2; exit 1; }
    libs+=("$build/$lib")
done
mkdir -p "$out_dir"
part="$(mktemp "$out_dir/.$name.XXXXXX")"
trap 'rm -f "$part"' EXIT
g++ -std=c++17 -O2 -Wall -Wextra \
    -I"$src/include" -I"$src/ggml/include" -I"$src/common" -I"$src/vendor" -I"$src/src" \
    -DLLAMA_SRC_ROOT="\"$src/\"" -o "$part" "$source_file" "$@" \
    -Wl,--start-group "${libs[@]}" -Wl,--end-group -fopenmp -lpthread -ldl >&2
chmod 755 "$part"
mv -f "$part" "$out"
echo "$out"
