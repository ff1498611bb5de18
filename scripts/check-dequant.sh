#!/usr/bin/env bash
# Check dequantisation against gguf-py's gguf.quants.dequantize and llama.cpp 0.3.36's ggml
# (to_float), bit for bit.
#
# Usage: scripts/check-dequant.sh [--help] [--record]
#
# Runs scripts/dequant_reference.py (gguf==0.19.0 from scripts/venv.sh), which writes a file
# of random blocks of every type gguf-py dequantises (Inf, NaN and subnormal scales
# included) and gguf-py's output for it and for every tensor of SmolLM2-135M, and a file of
# random blocks of mxfp4, nvfp4, q1_0 and q2_0 that scripts/llama/dequant-ref.cpp (built
# against 0.3.36 by scripts/llama/build-program.sh) dequantises with ggml; then runs
# tests/dequant.rs against those with GGUF_DEQUANT_REF set, and fails when the recording in
# tests/dequant/ (which `cargo test` checks without gguf-py or ggml) differs; --record
# rewrites it. Environment: GGUF_SMOLLM2 (the model; default: scripts/fetch-models.sh).

set -euo pipefail
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
fi
cd "$(dirname "$0")/.."

GGUF_SMOLLM2="${GGUF_SMOLLM2:-$(bash scripts/fetch-models.sh)}"
export GGUF_SMOLLM2
# shellcheck source=venv.sh
source scripts/venv.sh
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$GGUF_PYTHON" scripts/dequant_reference.py "$work" "$GGUF_SMOLLM2"
dequant_ref="$(bash scripts/llama/build-program.sh --release 0.3.36 scripts/llama/dequant-ref.cpp)"
"$GGUF_PYTHON" scripts/dequant_reference.py --ggml "$work"
"$dequant_ref" "$work/random-ggml.gguf" "$work/random-ggml.f32" >"$work/random-ggml.tsv"
"$GGUF_PYTHON" scripts/dequant_reference.py --ggml-digests "$work"
GGUF_DEQUANT_REF="$work" cargo test --quiet -p gguf-grammar --test dequant
echo "equal to ggml 0.3.36's to_float, bit for bit: $(awk -F'\t' '{printf "%s%s %s values", sep, $1, $3; sep=", "}' "$work/random-ggml.tsv")"
# The recording in tests/dequant/ (what `cargo test` compares with when the references are not run)
# must be what gguf-py and ggml give now; --record rewrites it.
recorded=tests/dequant
if [[ "${1:-}" == "--record" ]]; then
    cp "$work/random.gguf" "$work/random.gguf.jsonl" "$work/random-ggml.gguf" "$work/random-ggml.gguf.jsonl" \
        "$work/$(basename "$GGUF_SMOLLM2").jsonl" "$recorded/"
    "$GGUF_PYTHON" scripts/dequant_reference.py --excerpt "$GGUF_SMOLLM2" "$recorded/smollm2-excerpt.gguf"
fi
for f in random.gguf random.gguf.jsonl random-ggml.gguf random-ggml.gguf.jsonl "$(basename "$GGUF_SMOLLM2").jsonl"; do
    cmp "$work/$f" "$recorded/$f" || { echo "check-dequant.sh: $recorded/$f differs from the references' output (--record rewrites it)" >&2; exit 1; }
done
# gguf tensor --format npy: numpy loads the shape and the bits gguf-py's dequantisation gives,
# for one tensor of each type in SmolLM2 (f32, q4_1, q8_0) and in the random file.
cargo build --quiet --release --bin gguf
"$GGUF_PYTHON" - "${CARGO_TARGET_DIR:-target}/release/gguf" "$work" "$GGUF_SMOLLM2" <<'PY'
import subprocess, sys
import numpy as np
import gguf
exe, work, model = sys.argv[1:]
checked = 0
for path in [model, f"{work}/random.gguf"]:
    seen = set()
    for t in gguf.GGUFReader(path).tensors:
        if t.tensor_type in seen:
            continue
        seen.add(t.tensor_type)
        out = f"{work}/t.npy"
        subprocess.run([exe, "tensor", path, t.name, "--format", "npy", "-o", out], check=True)
        ours = np.load(out)
        with np.errstate(all="ignore"):
            ref = gguf.quants.dequantize(t.data, t.tensor_type)
        assert ours.dtype == np.float32 and ours.shape == ref.shape, (t.name, ours.shape, ref.shape)
        assert np.array_equal(ours.view(np.uint32), ref.view(np.uint32)), t.name
        checked += 1
print(f"gguf tensor --format npy matches gguf-py on {checked} tensors")
PY
# gguf stats: min and max exactly, mean and standard deviation to 1e-6 (relative), NaN and
# infinity counts exactly, against numpy over gguf-py's values, for SmolLM2 and the random file.
"$GGUF_PYTHON" - "${CARGO_TARGET_DIR:-target}/release/gguf" "$work" "$GGUF_SMOLLM2" <<'PY'
import math, subprocess, sys
import numpy as np
import gguf
exe, work, model = sys.argv[1:]
checked = 0
for path in [model, f"{work}/random.gguf"]:
    lines = subprocess.run([exe, "stats", path], check=True, capture_output=True, text=True).stdout.splitlines()
    rows = [l.split("\t") for l in lines[1:]]
    tensors = gguf.GGUFReader(path).tensors
    assert len(rows) == len(tensors), path
    for row, t in zip(rows, tensors):
        with np.errstate(all="ignore"):
            v = gguf.quants.dequantize(t.data, t.tensor_type).ravel()
        finite = v[np.isfinite(v)]
        assert row[0] == t.name and int(row[2]) == v.size, (row, t.name)
        assert (int(row[7]), int(row[8])) == (int(np.isnan(v).sum()), int(np.isinf(v).sum())), (row, t.name)
        if finite.size == 0:
            assert row[3] == "-", row
            continue
        assert np.float32(row[3]) == finite.min() and np.float32(row[4]) == finite.max(), (row, t.name)
        f64 = finite.astype(np.float64)
        for got, want in [(float(row[5]), f64.mean()), (float(row[6]), f64.std())]:
            assert math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-12), (row, t.name, got, want)
        checked += 1
print(f"gguf stats matches numpy on {checked} tensors")
PY
echo "dequantisation check passed"
