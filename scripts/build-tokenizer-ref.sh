#!/usr/bin/env bash
# Builds scripts/llama/tokenizer-ref.cpp (llama.cpp's tokenizer called in-process, the
# reference of scripts/check-tokenizer.sh and scripts/bench-tokenizer.sh) against the static
# libraries of scripts/build-llama-tools.sh, once per source hash, into ~/.cache/gguf-grammar/.
# Prints the binary's path.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build-llama-tools.sh >/dev/null
cache="${GGUF_TOOLS_CACHE:-$HOME/.cache/gguf-grammar/llama.cpp-0.3.16}"
src="$cache/src" build="$cache/build"
hash="$(sha256sum scripts/llama/tokenizer-ref.cpp | cut -c1-16)"
out="$HOME/.cache/gguf-grammar/tokenizer-ref-$hash"
if [[ ! -x "$out" ]]; then
    libs=("$build/src/libllama.a" "$build/common/libcommon.a")
    mapfile -t ggml < <(find "$build/ggml/src" -name 'libggml*.a' | sort -r)
    g++ -O2 -std=c++17 -I"$src/include" -I"$src/ggml/include" -I"$src/common" \
        scripts/llama/tokenizer-ref.cpp -o "$out.tmp" \
        -Wl,--start-group "${libs[@]}" "${ggml[@]}" -Wl,--end-group -fopenmp -lpthread -ldl >&2
    mv "$out.tmp" "$out"
fi
echo "$out"
