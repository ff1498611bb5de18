#!/usr/bin/env bash
# Side-by-side benchmark of gguf-py 0.19.0's GGUFReader and gguf_grammar.GGUFReader: open,
# read every field's contents, read every tensor's shape; peak RSS of each run.
#
# Usage: scripts/bench-python.sh [RUNS]
#
# Files: the Llama 3 tokenizer (tests/corpus/ggml-vocab-llama-bpe.gguf), SmolLM2 (fetched
# by scripts/fetch-models.sh) and a generated 300-key/2,000-tensor file (target/bench/). Each
# reader runs in a fresh process per file; gguf_grammar's times are the best of RUNS (default
# 5), gguf-py's of one run (it takes seconds). Prints a Markdown table (times in ms; peak RSS
# of the process, and its growth past the imports).
# Needs the venv of scripts/test-python.sh (run that first: it builds and installs the package).
set -euo pipefail
cd "$(dirname "$0")/.."

runs="${1:-5}"
py="$PWD/target/python-venv/bin/python"
[[ -x "$py" ]] || { echo "bench-python.sh: run scripts/test-python.sh first (it makes $py)" >&2; exit 2; }
mkdir -p target/bench
synthetic=target/bench/synthetic-300kv-2000t.gguf
[[ -f "$synthetic" ]] || "$py" scripts/bench_python.py --make-synthetic "$synthetic"
smollm2="$(bash scripts/fetch-models.sh)"

echo "| file | reader | open | all contents | all shapes | peak RSS | RSS growth |"
echo "|---|---|---|---|---|---|---|"
for file in tests/corpus/ggml-vocab-llama-bpe.gguf "$smollm2" "$synthetic"; do
    for reader in gguf gguf_grammar; do
        n=1; [[ "$reader" == gguf_grammar ]] && n="$runs"
        "$py" scripts/bench_python.py "$reader" "$file" "$n"
    done
done
