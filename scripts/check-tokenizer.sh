#!/usr/bin/env bash
# gguf-tokenizer against llama.cpp 0.3.16: its Unicode tables and pre-tokenizer expressions
# are llama.cpp's (regenerated from the cached source and compared), llama.cpp's own
# test-tokenizer-0 vectors (every models/ggml-vocab-*.gguf.inp line gives the .out ids), and
# a generated text set plus test-tokenizer-1's token round trip compared with llama.cpp's
# tokenizer called in-process (scripts/llama/tokenizer-ref.cpp), for every vocabulary of
# models/ and the plamo2 vocabularies of crates/gguf-tokenizer/tests/plamo2.rs. Any difference fails. Needs scripts/build-llama-tools.sh's cache (built if absent).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/build-llama-tools.sh >/dev/null
src="${GGUF_TOOLS_CACHE:-$HOME/.cache/gguf-grammar/llama.cpp-0.3.16}/src"
GGUF_TOKENIZER_REF="$(bash scripts/llama/build-program.sh scripts/llama/tokenizer-ref.cpp)"
export GGUF_TOKENIZER_REF GGUF_LLAMA_SRC="$src" GGUF_REQUIRE_LLAMA=1

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
python3 scripts/gen-tokenizer-unicode.py "$src" "$tmp/unicode_data.rs"
cmp "$tmp/unicode_data.rs" crates/gguf-tokenizer/src/unicode_data.rs ||
    { echo "check-tokenizer: unicode_data.rs differs from llama.cpp's unicode-data.cpp" >&2; exit 1; }
python3 scripts/gen-tokenizer-pre.py "$src" > "$tmp/arms.txt"
if grep -v -F -x -f crates/gguf-tokenizer/src/pre.rs "$tmp/arms.txt" >&2; then
    echo "check-tokenizer: these pre-tokenizer lists of llama-vocab.cpp differ in pre.rs" >&2
    exit 1
fi

# fmt, clippy and the crate's unit and `check` tests run in scripts/test.sh's workspace steps;
# here the tests that need llama.cpp (required, not skipped: GGUF_REQUIRE_LLAMA). Release:
# the round trip encodes every token of 17 vocabularies.
cargo test --release -p gguf-tokenizer --test vectors --test reference --test plamo2 -- --nocapture
