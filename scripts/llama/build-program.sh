#!/usr/bin/env bash
# Build one of our reference programs (a .cpp file in scripts/llama/) against the static
# llama.cpp libraries that scripts/build-llama-tools.sh builds for a release, and print the
# binary's path.
#
# Usage: scripts/llama/build-program.sh [--release 0.3.16|0.3.36] SOURCE.cpp [EXTRA_G++_ARGUMENTS...]
#
# The release defaults to 0.3.16, as for build-llama-tools.sh. The program is compiled with
# LLAMA_CPP_RELEASE set to the release as a number (316, 336), for the few places where the
# two releases' APIs differ. The binary is cached as ~/.cache/gguf-grammar/NAME-RELEASE-HASH/NAME
# (NAME: the source's name without .cpp; HASH: the sha256 of the source, this script, the
# extra arguments and the llama.cpp build's stamp), built only when absent. Concurrent builds
# of the same program are safe: each links into its own temporary file and renames it into
# place. $GGUF_TOOLS_CACHE is the llama.cpp cache, as for build-llama-tools.sh. Build logs go
# to stderr.

set -euo pipefail

usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; }
release="0.3.16"
case "${1:-}" in
    --release) release="${2:-}"; shift 2 ;;
    --release=*) release="${1#--release=}"; shift ;;
esac
if [[ $# -lt 1 || "$1" == "-h" || "$1" == "--help" ]]; then
    usage
    [[ $# -ge 1 ]] && exit 0 || exit 2
fi

# The static libraries a program links, per release: 0.3.36 renamed `common` to
# `llama-common`, split off `llama-common-base`, and links cpp-httplib into it.
case "$release" in
    0.3.16) common_libs=(common/libcommon.a) ;;
    0.3.36) common_libs=(common/libllama-common.a common/libllama-common-base.a vendor/cpp-httplib/libcpp-httplib.a) ;;
    *) echo "build-program.sh: unknown release '$release' (0.3.16 or 0.3.36)" >&2; exit 2 ;;
esac

source_file="$1"
shift
here="$(cd "$(dirname "$0")/.." && pwd)"
bash "$here/build-llama-tools.sh" --release "$release" >/dev/null
cache="${GGUF_TOOLS_CACHE:-$HOME/.cache/gguf-grammar/llama.cpp-$release}"
src="$cache/src"
build="$cache/build"

name="$(basename "$source_file" .cpp)"
hash="$( (cat "$source_file" "$0" "$cache"/.built-*; printf '%s\n' "$release" "$@") | sha256sum | cut -c1-16)"
out_dir="$HOME/.cache/gguf-grammar/$name-$release-$hash"
out="$out_dir/$name"
if [[ -x "$out" ]]; then
    echo "$out"
    exit 0
fi

libs=()
for lib in "${common_libs[@]}" src/libllama.a ggml/src/libggml.a ggml/src/libggml-cpu.a ggml/src/libggml-base.a; do
    [[ -f "$build/$lib" ]] || { echo "build-program.sh: $build/$lib is missing" >&2; exit 1; }
    libs+=("$build/$lib")
done
release_number="${release#0.}"
release_number="${release_number//./}"
mkdir -p "$out_dir"
part="$(mktemp "$out_dir/.$name.XXXXXX")"
trap 'rm -f "$part"' EXIT
g++ -std=c++17 -O2 -Wall -Wextra \
    -I"$src/include" -I"$src/ggml/include" -I"$src/common" -I"$src/vendor" -I"$src/src" \
    -DLLAMA_SRC_ROOT="\"$src/\"" -DLLAMA_CPP_RELEASE="$release_number" -o "$part" "$source_file" "$@" \
    -Wl,--start-group "${libs[@]}" -Wl,--end-group -fopenmp -lpthread -ldl >&2
chmod 755 "$part"
mv -f "$part" "$out"
echo "$out"
