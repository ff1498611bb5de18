#!/usr/bin/env bash
# `gguf mutate --all` against gguf-py: every mutation of the three fixtures and of three corpus
# files (a v2 file, a WordPiece vocabulary, a SentencePiece one), run through gguf-py's GGUFReader,
# whose accept/reject must equal the manifest's gguf-py verdict (the crate's validator's
# prediction): zero disagreements. `gguf mutate` itself exits 1 when a mutation does not
# provoke the diagnostic its rule names.
#
# Usage: scripts/check-mutations.sh [-v]   Environment: GGUF_BIN (default: build target/release/gguf)
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/venv.sh
py="$(pwd)/.venv/bin/python"
if [[ -z "${GGUF_BIN:-}" ]]; then
    cargo build --release --quiet --bin gguf
    GGUF_BIN="$(pwd)/target/release/gguf"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$GGUF_BIN" fixtures "$work/fixtures"
sources=(
    "$work/fixtures/minimal-llama.gguf"
    "$work/fixtures/llama3-tiny.gguf"
    "$work/fixtures/truncated-metadata.gguf"
    tests/corpus/ggml-vocab-aquila.gguf
    tests/corpus/ggml-vocab-bert-bge.gguf
    tests/corpus/ggml-vocab-phi-3.gguf
)
manifests=()
for f in "${sources[@]}"; do
    name="$(basename "$f" .gguf)"
    "$GGUF_BIN" mutate "$f" --all "$work/mutations/$name"
    manifests+=("$work/mutations/$name/manifest.json")
done
"$py" scripts/gguf_py_verdicts.py "$@" "${manifests[@]}"
