#!/usr/bin/env bash
# Build llama.cpp's own tools and libraries, the references the tests run: llama-gguf-split
# and llama-gguf-hash (`gguf split`/`merge`/`hash` are compared with them byte for byte),
# llama-tokenize and llama-simple (these four of 0.3.16 only), and the static libraries
# (libllama, libggml*, the common library) that the reference programs in scripts/llama/ link
# against.
#
# Usage: scripts/build-llama-tools.sh [--release 0.3.16|0.3.36] [--help]
#
# The sources are the llama.cpp tree vendored in the llama-cpp-python source distribution of
# that release (default 0.3.16), fetched by name and version with `pip download` and checked
# against the sha256 recorded below. They are built with cmake (Debian's `cmake`, and a C and
# C++ compiler) into $GGUF_TOOLS_CACHE (default: ~/.cache/gguf-grammar/llama.cpp-RELEASE),
# once: when the stamp of this build is there nothing is fetched or built. The source stays
# in $cache/src (models/, tests/, include/), the build tree in $cache/build (the libraries).
# On success the folder holding the binaries is the only thing printed on stdout; build logs
# go to stderr.

set -euo pipefail

usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; }
version="0.3.16"
while (($#)); do
    case "$1" in
        -h | --help) usage; exit 0 ;;
        --release) version="${2:-}"; shift 2 ;;
        --release=*) version="${1#--release=}"; shift ;;
        *) usage >&2; exit 2 ;;
    esac
done

# Per release: the sdist's sha256, the name of llama.cpp's common library target (0.3.36
# renamed `common` to `llama-common`, split off `llama-common-base`), and the cmake options
# that keep the build to these targets and off the network.
options=(-DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF
    -DLLAMA_BUILD_SERVER=OFF -DBUILD_SHARED_LIBS=OFF)
case "$version" in
    0.3.16)
        want_sha="34ed0f9bd9431af045bb63d9324ae620ad0536653740e9bb163a2e1fcb973be6"
        common_targets=(common)
        tools=(llama-gguf-split llama-gguf-hash llama-tokenize llama-simple)
        options+=(-DLLAMA_CURL=OFF)
        ;;
    0.3.36)
        want_sha="832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
        common_targets=(llama-common llama-common-base)
        # The tests run only this release's libraries (through scripts/llama/*.cpp).
        tools=()
        options+=(-DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF
            -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_LLGUIDANCE=OFF)
        ;;
    *) echo "build-llama-tools.sh: unknown release '$version' (0.3.16 or 0.3.36)" >&2; exit 2 ;;
esac

sdist="llama_cpp_python-$version.tar.gz"
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
    download="$cache/download"
    rm -rf "$download"
    # pip prepares the sdist's metadata before saving it; without build isolation that needs
    # only scikit-build-core (the package's build backend) instead of a fresh build env.
    isolation=()
    python3 -c 'import scikit_build_core' 2>/dev/null && isolation=(--no-build-isolation)
    python3 -m pip download --quiet --no-deps --no-binary :all: "${isolation[@]}" \
        "llama-cpp-python==$version" -d "$download" >&2
    echo "$want_sha  $download/$sdist" | sha256sum -c --quiet -
    mv "$download/$sdist" "$cache/$sdist"
    rm -rf "$download"
fi

src="$cache/src"
rm -rf "$src"
mkdir -p "$src"
tar xzf "$cache/$sdist" -C "$src" --strip-components=3 "llama_cpp_python-$version/vendor/llama.cpp"

build="$cache/build"
rm -rf "$build"
{
    cmake -S "$src" -B "$build" "${options[@]}"
    cmake --build "$build" -j "$(nproc)" --target "${tools[@]}" llama "${common_targets[@]}"
} >&2

mkdir -p "$bin"
for tool in "${tools[@]}"; do
    cp "$build/bin/$tool" "$bin/"
done
touch "$stamp"
echo "$bin"
