#!/usr/bin/env bash
# Check `gguf hash` against llama.cpp's llama-gguf-hash, byte for byte and exit status.
#
# Usage: scripts/check-hash.sh [--help]
#
# On SmolLM2-135M and every tests/corpus file, runs both tools with no option, --xxh64,
# --sha1, --sha256, --uuid, --all, --all --uuid --no-layer, and with --check against
# manifests: the tool's own --all output (Ok), one with a tensor hash changed (Mismatch),
# one with the model hash changed, another file's (Missing Entry), a uuid-only manifest
# (llama-gguf-hash looks UUIDs up under "sha256"), and with --uuid/--xxh64 selections. Each
# pair of outputs is compared with cmp and the exit statuses must be equal. A manifest
# without a known type (4) and a missing manifest (5) compare exit statuses only: the
# reference prints those errors on stdout, gguf on stderr.
# Environment: GGUF_LLAMA_TOOLS (default: scripts/build-llama-tools.sh), GGUF_SMOLLM2.

set -euo pipefail
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
fi
cd "$(dirname "$0")/.."

tools="${GGUF_LLAMA_TOOLS:-$(bash scripts/build-llama-tools.sh)}"
ref="$tools/llama-gguf-hash"
model="${GGUF_SMOLLM2:-$(bash scripts/fetch-models.sh)}"
cargo build --quiet --release --bin gguf
gguf="$PWD/${CARGO_TARGET_DIR:-target}/release/gguf"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

compared=0
# same OUTPUT_MODE ARGS...: run both, compare exit statuses and (OUTPUT_MODE=out) stdout.
same() {
    local mode="$1"; shift
    local r=0 o=0
    "$ref" "$@" >"$work/ref.out" 2>/dev/null || r=$?
    "$gguf" hash "$@" >"$work/our.out" 2>"$work/our.err" || o=$?
    if [[ "$r" != "$o" ]]; then
        echo "exit status differs for [$*]: llama-gguf-hash $r, gguf $o" >&2
        cat "$work/our.err" >&2
        exit 1
    fi
    if [[ "$mode" == out ]] && ! cmp "$work/ref.out" "$work/our.out"; then
        echo "output differs for [$*]" >&2
        diff "$work/ref.out" "$work/our.out" | head -5 >&2
        exit 1
    fi
    compared=$((compared + 1))
}

files=("$model" tests/corpus/*.gguf)
other="${files[1]}"
for f in "${files[@]}"; do
    for opts in "" "--xxh64" "--sha1" "--sha256" "--uuid" "--all" "--all --uuid --no-layer"; do
        # shellcheck disable=SC2086
        same out $opts "$f"
    done
    "$ref" --all --uuid "$f" >"$work/good.manifest"
    same out --check "$work/good.manifest" "$f"
    same out --xxh64 --check "$work/good.manifest" "$f"
    same out --uuid --check "$work/good.manifest" "$f"
    same out --all --uuid --no-layer --check "$work/good.manifest" "$f"
    # a changed model hash, and (when there are tensors) a changed tensor hash
    sed '$ s/  [0-9a-f]/  0/' "$work/good.manifest" >"$work/bad-model.manifest"
    same out --check "$work/bad-model.manifest" "$f"
    same out --all --check "$work/bad-model.manifest" "$f"
    sed '1 s/  [0-9a-f]/  0/' "$work/good.manifest" >"$work/bad-layer.manifest"
    same out --check "$work/bad-layer.manifest" "$f"
    same out --all --check "$work/bad-layer.manifest" "$f"
    grep -v "  $f\$" "$work/good.manifest" >"$work/layers.manifest" || true
    [[ ! -s "$work/layers.manifest" ]] || same out --sha1 --check "$work/layers.manifest" "$f"
    grep "^uuid" "$work/good.manifest" >"$work/uuid.manifest"
    same out --check "$work/uuid.manifest" "$f"
    "$ref" --all "$other" >"$work/other.manifest"
    [[ "$f" == "$other" ]] || same out --check "$work/other.manifest" "$f"
    printf 'md5  0123  x\n\n' >"$work/unknown.manifest"
    same status --check "$work/unknown.manifest" "$f"
    same status --check "$work/missing.manifest" "$f"
done
echo "hash check passed: $compared comparisons on ${#files[@]} files"
