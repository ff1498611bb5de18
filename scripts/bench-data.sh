#!/usr/bin/env bash
# Tensor-data throughput beside the references, in one run.
#
# Usage: scripts/bench-data.sh [--help]
#
# Dequantisation: gguf-py 0.19.0's gguf.quants.dequantize (best of 3) and
# `cargo bench --bench data` (criterion's mean) on 2^22 values of q4_K and of q8_0 (random
# blocks, scale 0.0625), as GB/s of f32 written and the ratio. Hashing: `gguf hash`,
# llama.cpp's llama-gguf-hash (whole-model hash only, --no-layer) and sha256sum on
# SmolLM2-135M from the page cache (best of 3), as GB/s of the file's size.
# Environment: GGUF_SMOLLM2, GGUF_LLAMA_TOOLS (defaults: the fetch and build scripts).

set -euo pipefail
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
fi
cd "$(dirname "$0")/.."

model="${GGUF_SMOLLM2:-$(bash scripts/fetch-models.sh)}"
tools="${GGUF_LLAMA_TOOLS:-$(bash scripts/build-llama-tools.sh)}"
# shellcheck source=venv.sh
source scripts/venv.sh
target="${CARGO_TARGET_DIR:-target}"

echo "== dequantisation, 2^22 values, GB/s of f32 written"
cargo bench --quiet --bench data -- --noplot >/dev/null 2>&1
"$GGUF_PYTHON" - "$target/criterion" <<'PY'
import json, sys, time
import numpy as np
import gguf
from gguf import GGMLQuantizationType as T
from gguf.constants import GGML_QUANT_SIZES

values = 1 << 22
rng = np.random.default_rng(1)
for qtype, name, scales in [(T.Q4_K, "q4_K", [0, 2]), (T.Q8_0, "q8_0", [0])]:
    block, size = GGML_QUANT_SIZES[qtype]
    raw = rng.integers(0, 256, size=(values // block, size), dtype=np.uint8)
    for at in scales:
        raw[:, at:at + 2] = [0x00, 0x2C]
    data = raw.reshape(1024, -1)
    best = min(
        (lambda t0: (gguf.quants.dequantize(data, qtype), time.perf_counter() - t0)[1])(time.perf_counter())
        for _ in range(3)
    )
    est = json.load(open(f"{sys.argv[1]}/dequant/{name}/new/estimates.json"))
    ours = est["mean"]["point_estimate"] / 1e9
    gb = values * 4 / 1e9
    print(f"{name:5}  gguf-py {gb / best:6.2f} GB/s   gguf-grammar {gb / ours:6.2f} GB/s   {best / ours:5.1f}x")
PY

echo "== hashing SmolLM2 ($(stat -c %s "$model") bytes), whole-model hash, GB/s"
cargo build --quiet --release --bin gguf
gguf="$target/release/gguf"
size="$(stat -c %s "$model")"
cat "$model" >/dev/null
best() { # best of 3 wall-clock seconds of "$@"
    local b=999 t
    for _ in 1 2 3; do
        t="$( { /usr/bin/env TIMEFORMAT=%R bash -c 'time "$@" >/dev/null' _ "$@"; } 2>&1 | tail -1)"
        b="$(awk -v a="$b" -v t="$t" 'BEGIN { print (t < a ? t : a) }')"
    done
    echo "$b"
}
for alg in xxh64 sha1 sha256; do
    ours="$(best "$gguf" hash --"$alg" --no-layer "$model")"
    ref="$(best "$tools/llama-gguf-hash" --"$alg" --no-layer "$model")"
    awk -v a="$alg" -v s="$size" -v o="$ours" -v r="$ref" \
        'BEGIN { printf "%-7s gguf hash %6.2f GB/s   llama-gguf-hash %6.2f GB/s\n", a, s/o/1e9, s/r/1e9 }'
done
sum="$(best sha256sum "$model")"
awk -v s="$size" -v t="$sum" 'BEGIN { printf "sha256sum (whole file)                         %6.2f GB/s\n", s/t/1e9 }'
ours="$(best "$gguf" hash --all "$model")"
ref="$(best "$tools/llama-gguf-hash" --all "$model")"
awk -v s="$size" -v o="$ours" -v r="$ref" \
    'BEGIN { printf "--all (per tensor + model, 3 hashes): gguf hash %.2f s, llama-gguf-hash %.2f s\n", o, r }'
