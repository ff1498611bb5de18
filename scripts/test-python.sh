#!/usr/bin/env bash
# The Python package's tests (python/): build, install, pytest.
#
# Usage: scripts/test-python.sh [PYTEST ARGS...]
#
# Makes (once) a virtual environment of its own, target/python-venv, with maturin, pytest,
# numpy, gguf==0.19.0 (gguf-py, the reference) and dask[distributed] from PyPI; builds
# the gguf CLI the tests compare with, then python/ with maturin (in target/, beside the CLI)
# and installs it there as `pip install ./python` does; runs
# pytest python/tests. Exits with pytest's status, except that "no tests ran" (5) is a failure.
#
# Environment: GGUF_SMOLLM2  SmolLM2's path (scripts/test.sh sets it; its tests skip, saying
#                            so, without it)
#              GGUF_LLAMA_TOOLS  llama.cpp's tools (scripts/test.sh sets it): the tokenizer,
#                            loader and fit tests compare with llama.cpp (skip without it)
#              PYTHON        the interpreter to build the venv from (default: python3)
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
fi

venv="$PWD/target/python-venv"
[[ -x "$venv/bin/python" ]] || "${PYTHON:-python3}" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check \
    'maturin>=1.5,<2' pytest numpy gguf==0.19.0 'dask[distributed]'
cargo build -q --release --bin gguf
export GGUF_BIN="$PWD/target/release/gguf"
# maturin is found on PATH by its build backend. The Rust build shares target/ with the release
# CLI just built (python/Cargo.lock has the workspace's versions, and both use the default
# release profile), so the crates both use with the same features are reused.
PATH="$venv/bin:$PATH" CARGO_TARGET_DIR="$PWD/target" \
    "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-build-isolation \
    --force-reinstall --no-deps ./python

# llama.cpp's source and tools (vectors, llama-tokenize): with GGUF_LLAMA_TOOLS set, as
# scripts/test.sh sets it, the tests that need them fail rather than skip without them.
if [[ -n "${GGUF_LLAMA_TOOLS:-}" ]]; then
    export GGUF_REQUIRE_LLAMA=1 GGUF_LLAMA_SRC="${GGUF_LLAMA_SRC:-$(dirname "$GGUF_LLAMA_TOOLS")/src}"
fi

rc=0
"$venv/bin/python" -m pytest -q -p no:cacheprovider python/tests "$@" || rc=$?
if [[ $rc -eq 5 ]]; then
    echo "test-python.sh: pytest collected no tests" >&2
    exit 1
fi
exit $rc
