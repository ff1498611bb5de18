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
# Then gguf-py's scripts (gguf_dump in three modes, gguf_hash, gguf_new_metadata,
# gguf_set_metadata and gguf_convert_endian, on copies) with each reader, whole-process wall
# time and peak RSS, on the Llama 3 tokenizer, SmolLM2 and a gemma3-style 262,144-token
# vocabulary (written with gguf-py into target/bench/, as scripts/bench-process.sh writes it);
# `--scripts` runs only that second table.
# Needs the venv of scripts/test-python.sh (run that first: it builds and installs the package).
set -euo pipefail
cd "$(dirname "$0")/.."

only_scripts=""
[[ "${1:-}" == "--scripts" ]] && { only_scripts=1; shift; }
runs="${1:-5}"
py="$PWD/target/python-venv/bin/python"
[[ -x "$py" ]] || { echo "bench-python.sh: run scripts/test-python.sh first (it makes $py)" >&2; exit 2; }
mkdir -p target/bench
synthetic=target/bench/synthetic-300kv-2000t.gguf
[[ -f "$synthetic" ]] || "$py" scripts/bench_python.py --make-synthetic "$synthetic"
smollm2="$(bash scripts/fetch-models.sh)"

vocab=target/bench/vocab-262k.gguf
if [[ ! -f "$vocab" ]]; then
    "$py" - "$vocab" <<'PY'
import sys
import numpy as np
from gguf import GGUFWriter

n = 262_144
def token(i):
    return [f"\u2581tok{i}", f"piece{i}", f"{chr(0x4e00 + i % 20000)}{i % 97}", f"<0x{i % 256:02X}>"][i % 4]

w = GGUFWriter(sys.argv[1], "gemma3")
w.add_string("tokenizer.ggml.model", "llama")
w.add_array("tokenizer.ggml.tokens", [token(i) for i in range(n)])
w.add_array("tokenizer.ggml.scores", (-np.arange(n, dtype=np.float32) / 7).tolist())
w.add_array("tokenizer.ggml.token_type", [i % 6 for i in range(n)])
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
PY
fi

if [[ -n "$only_scripts" ]]; then
    "$py" scripts/bench_gguf_py_scripts.py tests/corpus/ggml-vocab-llama-bpe.gguf "$smollm2" "$vocab"
    exit 0
fi
echo "| file | reader | open | all contents | all shapes | peak RSS | RSS growth |"
echo "|---|---|---|---|---|---|---|"
for file in tests/corpus/ggml-vocab-llama-bpe.gguf "$smollm2" "$synthetic"; do
    for reader in gguf gguf_grammar; do
        n=1; [[ "$reader" == gguf_grammar ]] && n="$runs"
        "$py" scripts/bench_python.py "$reader" "$file" "$n"
    done
done
echo
"$py" scripts/bench_gguf_py_scripts.py tests/corpus/ggml-vocab-llama-bpe.gguf "$smollm2" "$vocab"
