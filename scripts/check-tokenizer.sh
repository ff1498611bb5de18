#!/usr/bin/env bash
# gguf-tokenizer against llama.cpp, each release (0.3.16 and 0.3.36) under its own: its
# Unicode tables and pre-tokenizer expressions are llama.cpp's (regenerated from the cached
# source and compared), llama.cpp's own test-tokenizer-0 vectors (every
# models/ggml-vocab-*.gguf.inp line gives the .out ids), and a generated text set plus
# test-tokenizer-1's token round trip compared with llama.cpp's tokenizer called in-process
# (scripts/llama/tokenizer-ref.cpp), for every vocabulary of models/ and the plamo2
# vocabularies of crates/gguf-tokenizer/tests/plamo2.rs (0.3.16). Any difference fails. Needs
# scripts/build-llama-tools.sh's cache of each release (built if absent).
set -euo pipefail
cd "$(dirname "$0")/.."

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for release in 0.3.16 0.3.36; do
    bin="$(bash scripts/build-llama-tools.sh --release "$release")"
    src="$(dirname "$bin")/src"
    ref="$(bash scripts/llama/build-program.sh --release "$release" scripts/llama/tokenizer-ref.cpp)"
    if [[ "$release" == 0.3.16 ]]; then
        export GGUF_TOKENIZER_REF="$ref" GGUF_LLAMA_SRC="$src"
    else
        suffix="${release//./_}"
        export "GGUF_TOKENIZER_REF_$suffix=$ref" "GGUF_LLAMA_SRC_$suffix=$src"
    fi
    python3 scripts/gen-tokenizer-unicode.py "$src" "$tmp/unicode_data.rs"
    cmp "$tmp/unicode_data.rs" crates/gguf-tokenizer/src/unicode_data.rs ||
        { echo "check-tokenizer: unicode_data.rs differs from llama.cpp $release's unicode-data.cpp" >&2; exit 1; }
    python3 scripts/gen-tokenizer-pre.py "$src" "$release" > "$tmp/arms.txt"
    if grep -v -F -x -f crates/gguf-tokenizer/src/pre.rs "$tmp/arms.txt" >&2; then
        echo "check-tokenizer: these pre-tokenizer lists of llama.cpp $release's llama-vocab.cpp differ in pre.rs" >&2
        exit 1
    fi
done
export GGUF_REQUIRE_LLAMA=1

# fmt, clippy and the crate's unit and `check` tests run in scripts/test.sh's workspace steps;
# here the tests that need llama.cpp (required, not skipped: GGUF_REQUIRE_LLAMA). Release:
# the round trip encodes every token of the vocabularies of each release (0.3.36: 19).
cargo test --release -p gguf-tokenizer --test vectors --test reference --test plamo2 -- --nocapture
