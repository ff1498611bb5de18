#!/usr/bin/env bash
# gguf-tokenizer vs llama.cpp's tokenizer (llama_tokenize in-process, not the process start:
# scripts/llama/tokenizer-ref.cpp), side by side on one multi-megabyte text: llama.cpp's own
# docs and sources (the cached llama.cpp 0.3.16 tree, so the same bytes everywhere),
# tokenized whole with add_special and parse_special; the fastest of REPS runs each.
# Prints a Markdown table. Usage: scripts/bench-tokenizer.sh [REPS]
set -euo pipefail
cd "$(dirname "$0")/.."
reps="${1:-3}"
bash scripts/build-llama-tools.sh >/dev/null
src="${GGUF_TOOLS_CACHE:-$HOME/.cache/gguf-grammar/llama.cpp-0.3.16}/src"
ref="$(bash scripts/llama/build-program.sh scripts/llama/tokenizer-ref.cpp)"
cargo build --quiet --release -p gguf-tokenizer --example bench
ours=target/release/examples/bench

text="$(mktemp)"
trap 'rm -f "$text"' EXIT
{ find "$src/docs" -name '*.md' | sort | xargs cat; cat "$src"/src/*.cpp "$src"/src/*.h; } > "$text"
bytes=$(stat -c %s "$text")

echo "text: llama.cpp 0.3.16 docs/*.md + src/*.cpp + src/*.h, $bytes bytes; best of $reps"
echo
echo "| vocabulary | type | tokens | llama.cpp MB/s | ours MB/s | ours / llama.cpp |"
echo "|---|---|---:|---:|---:|---:|"
for v in llama-spm llama-bpe gpt-2 qwen2 deepseek-llm bert-bge nomic-bert-moe; do
    model="$src/models/ggml-vocab-$v.gguf"
    read -r _ n_ref _ t_ref < <(nice "$ref" bench "$model" "$text" "$reps")
    read -r _ n_ours _ t_ours < <(nice "$ours" "$model" "$text" "$reps")
    [[ "$n_ref" == "$n_ours" ]] || { echo "bench-tokenizer: $v: $n_ref tokens vs $n_ours" >&2; exit 1; }
    case $v in llama-spm) type=SPM ;; bert-bge) type=WPM ;; nomic-bert-moe) type=UGM ;; *) type=BPE ;; esac
    awk -v v="$v" -v ty="$type" -v n="$n_ref" -v b="$bytes" -v r="$t_ref" -v o="$t_ours" \
        'BEGIN { printf "| %s | %s | %d | %.1f | %.1f | %.2f |\n", v, ty, n, b/r/1e6, b/o/1e6, r/o }'
done
