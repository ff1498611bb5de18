#!/usr/bin/env bash
# crates/gguf-fit's estimate against llama.cpp itself: builds scripts/llama/fit_probe.cpp
# (scripts/llama/build-program.sh, on the cached llama.cpp build) and runs the comparison test
# (crates/gguf-fit/tests/llama.rs) over the tiny models it writes, SmolLM2 (whole and as a
# shard set made by llama-gguf-split) and the corpus, at several context sizes, batch sizes,
# KV cache types, flash attention on and off; and over the tiny model of every architecture
# `gguf fixtures --all-archs` writes, at four of them. It prints the table of cases and fails
# on any difference in the weights, KV/recurrent caches, output buffer or n_ctx, or a compute
# buffer outside the stated bound.
#
# Usage: scripts/check-fit.sh [--help]   (GGUF_SMOLLM2: the SmolLM2 file, else fetched;
# GGUF_BIN: the gguf CLI, else built as target/debug/gguf)
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
fi

# The probe reads exact buffer sizes by wrapping the two calls llama.cpp logs them with.
probe="$(bash scripts/llama/build-program.sh scripts/llama/fit_probe.cpp \
    -Wl,--wrap=ggml_backend_buffer_get_size,--wrap=ggml_backend_sched_get_buffer_size)"
if [[ -z "${GGUF_BIN:-}" ]]; then
    cargo build --quiet --bin gguf
    GGUF_BIN="$PWD/target/debug/gguf"
fi
tools="${GGUF_LLAMA_TOOLS:-$(bash scripts/build-llama-tools.sh)}"
smollm2="${GGUF_SMOLLM2:-$(bash scripts/fetch-models.sh)}"
# SmolLM2 as a shard set (one mapped buffer per file), split by llama.cpp's own tool.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$tools/llama-gguf-split" --split --split-max-tensors 120 "$smollm2" "$tmp/SmolLM2-split" >/dev/null
# The test runs in crates/gguf-fit: every path it gets is absolute.
"$GGUF_BIN" fixtures --all-archs "$tmp/archs" >/dev/null
models="$smollm2:$tmp/SmolLM2-split-00001-of-00003.gguf"
for f in "$PWD"/tests/corpus/*.gguf; do
    models="$models:$f"
done
FIT_PROBE="$probe" GGUF_FIT_MODELS="$models" GGUF_FIT_ARCHS="$tmp/archs" \
    cargo test -p gguf-fit --test llama -- --ignored --nocapture
