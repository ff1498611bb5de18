#!/usr/bin/env bash
# Build llama.cpp's own tools and libraries, the references the tests run: llama-gguf-split
# and llama-gguf-hash (`gguf split`/`merge`/`hash` are compared with them byte for byte),
# llama-tokenize and llama-simple, and the static libraries (libllama, libggml*, libcommon)
# that the reference programs in scripts/llama/ link against.
#
# Usage: scripts/build-llama-tools.sh [--help]
#
# The sources are the llama.cpp tree vendored in the llama-cpp-python 0.3.16 source
# distribution on PyPI (the .tar.gz the package index lists, sha256-checked; `pip download`
# would try to build its metadata first). They are built with cmake (Debian's `cmake`, and a C
# and C++ compiler) into $GGUF_TOOLS_CACHE (default: ~/.cache/gguf-grammar/llama.cpp-0.3.16),
# once: when the stamp of this build is there nothing is fetched or built. The source stays
# in $cache/src (models/, tests/, include/), the build tree in $cache/build (the libraries).
# On success the folder holding the binaries is the only thing printed on stdout; build logs
# go to stderr.

set -euo pipefail

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
fi

version="0.3.16"
sdist="llama_cpp_python-$version.tar.gz"
url="https://files.pythonhosted.org/packages/e4/b4/c8cd17629ced0b9644a71d399a91145aedef109c0333443bef015e45b704/$sdist"
want_sha="34ed0f9bd9431af045bb63d9324ae620ad0536653740e9bb163a2e1fcb973be6"
cache="${GGUF_TOOLS_CACHE:-$HOME/.cache/gguf-grammar/llama.cpp-$version}"
bin="$cache/bin"
stamp="$cache/.built-2"

if [[ -f "$stamp" ]]; then
    echo "$bin"
    exit 0
fi

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
if [[ -f "$stamp" ]]; then
    echo "$bin"
    exit 0
fi

command -v cmake >/dev/null || { echo "build-llama-tools.sh: cmake not found (apt-get install cmake)" >&2; exit 1; }

if [[ ! -f "$cache/$sdist" ]] || ! echo "$want_sha  $cache/$sdist" | sha256sum -c --quiet - >/dev/null 2>&1; then
    curl -fsSL --retry 3 -o "$cache/$sdist.part" "$url"
    echo "$want_sha  $cache/$sdist.part" | sha256sum -c --quiet -
    mv "$cache/$sdist.part" "$cache/$sdist"
fi

src="$cache/src"
rm -rf "$src"
mkdir -p "$src"
tar xzf "$cache/$sdist" -C "$src" --strip-components=3 "llama_cpp_python-$version/vendor/llama.cpp"

build="$cache/build"
rm -rf "$build"
{
    cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DLLAMA_CURL=OFF \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF -DBUILD_SHARED_LIBS=OFF
    cmake --build "$build" -j "$(nproc)" --target llama-gguf-split llama-gguf-hash \
        llama-tokenize llama-simple llama common
} >&2

mkdir -p "$bin"
for tool in llama-gguf-split llama-gguf-hash llama-tokenize llama-simple; do
    cp "$build/bin/$tool" "$bin/"
done
touch "$stamp"
echo "$bin"
