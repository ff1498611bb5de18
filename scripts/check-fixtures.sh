#!/usr/bin/env bash
# `gguf fixtures` against the references: run twice, the SHA-256s are identical and match
# SHA256SUMS (sha256sum -c); the valid fixtures pass `gguf check --schema`; gguf-py reads every
# key/value and tensor descriptor with our values (scripts/check-gguf-py.sh); gguf-py's
# dequantisation of every tensor equals the documented pattern (scripts/check_fixture_data.py);
# gguf-py accepts/rejects each file as manifest.json says (scripts/gguf_py_verdicts.py).
#
# Usage: scripts/check-fixtures.sh      Environment: GGUF_BIN (default: build target/release/gguf)
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/venv.sh
py="$(pwd)/.venv/bin/python"
if [[ -z "${GGUF_BIN:-}" ]]; then
    cargo build --release --quiet --bin gguf
    GGUF_BIN="$(pwd)/target/release/gguf"
fi
export GGUF_BIN

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$GGUF_BIN" fixtures "$work/a"
"$GGUF_BIN" fixtures "$work/b"
(cd "$work/a" && sha256sum -c --quiet SHA256SUMS)
if ! cmp -s "$work/a/SHA256SUMS" "$work/b/SHA256SUMS" || ! diff -r "$work/a" "$work/b"; then
    echo "check-fixtures.sh: two runs of gguf fixtures differ" >&2
    exit 1
fi
echo "fixtures: two runs identical:"
cat "$work/a/SHA256SUMS"

"$GGUF_BIN" check --schema "$work/a/minimal-llama.gguf" "$work/a/llama3-tiny.gguf"
echo "fixtures: the valid ones pass gguf check --schema"
bash scripts/check-gguf-py.sh "$work"/a/*.gguf
"$py" scripts/check_fixture_data.py "$work/a"
"$py" scripts/gguf_py_verdicts.py "$work/a/manifest.json"
