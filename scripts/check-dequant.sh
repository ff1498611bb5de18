#!/usr/bin/env bash
# Check dequantisation against gguf-py's gguf.quants.dequantize, bit for bit.
#
# Usage: scripts/check-dequant.sh [--help]
#
# Runs scripts/dequant_reference.py (gguf==0.19.0 from scripts/venv.sh), which writes a file
# of random blocks of every type gguf-py dequantises (Inf, NaN and subnormal scales
# included) and gguf-py's output for it and for every tensor of SmolLM2-135M; then runs
# tests/dequant.rs against those with GGUF_DEQUANT_REF set.
# Environment: GGUF_SMOLLM2 (the model; default: scripts/fetch-models.sh).

set -euo pipefail
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
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
GGUF_DEQUANT_REF="$work" cargo test --quiet --test dequant
echo "dequantisation check passed"
