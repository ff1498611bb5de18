#!/usr/bin/env bash
# gguf-grammar beside ggus 0.5, candle-core's gguf_file and gguf-rs-lib, doing equal work
# (parse + every string read as UTF-8-checked text) in one criterion run: the crate in
# benches/peers/, outside the main workspace so that `cargo test` and CI never build
# candle-core. Headers: the Llama 3 tokenizer, a generated 262,144-token vocabulary and
# SmolLM2-135M (scripts/fetch-models.sh). Results: benches/README.md, "Peer readers".
#
# Usage: scripts/bench-peers.sh [CRITERION ARGS]   (e.g. `llama3` to run one header)
# The first run builds candle-core (a few minutes). Not part of the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
fi

GGUF_SMOLLM2="$(bash scripts/fetch-models.sh)"
export GGUF_SMOLLM2
cd benches/peers
exec cargo bench --bench peers -- "$@"
