#!/usr/bin/env bash
# gguf split / gguf merge against llama.cpp's llama-gguf-split on SmolLM2, side by side in one
# run: each command 5 times, alternating, the best wall-clock time of each printed.
# Usage: scripts/bench-split.sh [GGUF_BINARY]   (default: a release build, built first)
set -euo pipefail
cd "$(dirname "$0")/.."
model="${GGUF_SMOLLM2:-$(bash scripts/fetch-models.sh)}"
tools="${GGUF_LLAMA_TOOLS:-$(bash scripts/build-llama-tools.sh)}"
gguf="${1:-}"
if [[ -z "$gguf" ]]; then
    cargo build --release --quiet --bin gguf
    gguf=target/release/gguf
fi
gguf="$(realpath "$gguf")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"

best() { sort -n | head -1; }
# Wall-clock milliseconds of one run.
millis() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(((e - s) / 1000000)); }

declare -A times
for round in 1 2 3 4 5; do
    rm -f ./*.gguf
    times[ours_split]+="$(millis "$gguf" split --split-max-tensors 100 "$model" ours) "
    times[ref_split]+="$(millis "$tools/llama-gguf-split" --split-max-tensors 100 "$model" ref) "
    times[ours_merge]+="$(millis "$gguf" merge ref-00001-of-00003.gguf ours.gguf) "
    times[ref_merge]+="$(millis "$tools/llama-gguf-split" --merge ours-00001-of-00003.gguf ref.gguf) "
    cmp ours.gguf ref.gguf
done
printf 'SmolLM2 %s (%s bytes), best of 5, milliseconds:\n' "$(basename "$model")" "$(stat -c %s "$model")"
for op in split merge; do
    printf '  %-5s  gguf %6d   llama-gguf-split %6d\n' "$op" \
        "$(tr ' ' '\n' <<<"${times[ours_$op]}" | grep . | best)" \
        "$(tr ' ' '\n' <<<"${times[ref_$op]}" | grep . | best)"
done
