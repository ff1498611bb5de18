#!/usr/bin/env bash
# Check `gguf convert-endian` against gguf-py's gguf-convert-endian, byte for byte.
#
# Usage: scripts/check-convert-endian.sh [--help]
#
# Files: every tests/corpus file, a generated file (gguf-py's writer) with random tensors
# of each type gguf-convert-endian converts plus metadata of every value type, and
# SmolLM2-135M. Each is converted to big-endian by both tools (gguf-convert-endian works in
# place on a copy) and compared with cmp, then both results back to little-endian, compared
# again and with the original. SmolLM2 holds q4_1 tensors, which gguf-convert-endian
# refuses: gguf must refuse too (exit 1, no output written, input untouched).
# Environment: GGUF_SMOLLM2 (default: scripts/fetch-models.sh).

set -euo pipefail
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
fi
cd "$(dirname "$0")/.."

model="${GGUF_SMOLLM2:-$(bash scripts/fetch-models.sh)}"
# shellcheck source=venv.sh
source scripts/venv.sh
cargo build --quiet --release --bin gguf
gguf="$PWD/${CARGO_TARGET_DIR:-target}/release/gguf"
ref="$GGUF_VENV/bin/gguf-convert-endian"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$GGUF_PYTHON" - "$work/types.gguf" <<'PY'
import sys
import numpy as np
import gguf
from gguf import GGMLQuantizationType as T
from gguf.constants import GGML_QUANT_SIZES

rng = np.random.default_rng(5)
w = gguf.GGUFWriter(sys.argv[1], "llama")
w.add_uint8("t.u8", 7); w.add_int16("t.i16", -300); w.add_uint32("t.u32", 70000)
w.add_int64("t.i64", -(1 << 40)); w.add_float32("t.f32", 1.5); w.add_float64("t.f64", -2.25)
w.add_bool("t.bool", True); w.add_string("t.str", "héllo")
w.add_array("t.arr_u16", [1, 2, 65535]); w.add_array("t.arr_str", ["a", "bc"])
for qtype in [T.F32, T.F16, T.BF16, T.Q4_0, T.Q8_0, T.Q4_K, T.Q6_K, T.MXFP4, T.NVFP4]:
    block, size = GGML_QUANT_SIZES[qtype]
    raw = rng.integers(0, 256, size=(3, 2 * size), dtype=np.uint8)
    w.add_tensor(f"t.{qtype.name.lower()}", raw, raw_dtype=qtype)
w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
PY

checked=0
for f in tests/corpus/*.gguf "$work/types.gguf"; do
    cp "$f" "$work/ref-be.gguf"
    echo YES | "$ref" "$work/ref-be.gguf" big >/dev/null 2>&1
    "$gguf" convert-endian "$f" big -o "$work/our-be.gguf"
    cmp "$work/ref-be.gguf" "$work/our-be.gguf"
    cp "$work/ref-be.gguf" "$work/ref-le.gguf"
    echo YES | "$ref" "$work/ref-le.gguf" little >/dev/null 2>&1
    cp "$work/our-be.gguf" "$work/our-le.gguf"
    "$gguf" convert-endian "$work/our-le.gguf" little --in-place
    cmp "$work/ref-le.gguf" "$work/our-le.gguf"
    cmp "$f" "$work/our-le.gguf"
    checked=$((checked + 1))
done

# Refusal: gguf-py refuses SmolLM2 (q4_1); so must gguf, writing nothing.
cp "$model" "$work/smol.gguf"
if echo YES | "$ref" "$work/smol.gguf" big >/dev/null 2>&1; then
    echo "gguf-convert-endian unexpectedly converted SmolLM2" >&2
    exit 1
fi
cmp "$model" "$work/smol.gguf"
status=0
"$gguf" convert-endian "$model" big -o "$work/smol-be.gguf" 2>"$work/err" || status=$?
if [[ "$status" != 1 || -e "$work/smol-be.gguf" ]] || ! grep -q "q4_1" "$work/err"; then
    echo "gguf convert-endian did not refuse SmolLM2 as gguf-py does (exit $status)" >&2
    exit 1
fi
status=0
"$gguf" convert-endian "$work/smol.gguf" big --in-place 2>/dev/null || status=$?
[[ "$status" == 1 ]] && cmp "$model" "$work/smol.gguf"
echo "convert-endian check passed: $checked files both ways, SmolLM2 refused as by gguf-py"
