#!/usr/bin/env bash
# The whole test suite (what .ci/run runs): formatting, lints, the Rust tests, and the
# cross-checks that need Python (gguf-py) or Node (Kaitai) and the SmolLM2 download.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*" >&2; }

step "cargo fmt --check"
cargo fmt --all -- --check
step "cargo clippy"
cargo clippy --all-targets -- -D warnings
step "cargo doc (broken links are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps
step "SmolLM2-135M (download once, sha256-checked)"
GGUF_SMOLLM2="$(bash scripts/fetch-models.sh)"
export GGUF_SMOLLM2
step "llama.cpp's llama-gguf-split and llama-gguf-hash (built once into ~/.cache/gguf-grammar)"
GGUF_LLAMA_TOOLS="${GGUF_LLAMA_TOOLS:-$(bash scripts/build-llama-tools.sh)}"
export GGUF_LLAMA_TOOLS
step "cargo test"
cargo test --all-targets
cargo test --doc
step "native JSON vs gguf-py"
bash scripts/check-gguf-py.sh
step "gguf dump --format gguf-py vs gguf-py's gguf-dump (corpus, SmolLM2, conformance)"
bash scripts/parity.sh
step "Kaitai grammar (Python and JavaScript) vs gguf dump --json"
bash scripts/grammar-check.sh
step "gguf edit against gguf-py"
bash scripts/check-edit.sh
step "remote headers over HTTP ranges against nginx"
bash scripts/check-remote.sh
