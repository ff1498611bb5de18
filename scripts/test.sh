#!/usr/bin/env bash
# The whole test suite (what .ci/run runs): formatting, lints, the Rust tests, and the
# cross-checks that need Python (gguf-py) or Node (Kaitai) and the SmolLM2 download.
set -euo pipefail
cd "$(dirname "$0")/.."

# llama.cpp's reference programs: no gdb backtrace on an abort or an uncaught exception (ggml
# attaches gdb for each, about 2 s; stderr's first lines are the record).
export GGML_NO_BACKTRACE=1

# Each step's wall time, printed as a table when the suite ends (pass or fail), so that a CI
# log shows where the time goes.
timings=()
step_name=""
step_start=$SECONDS
end_step() {
    [[ -n "$step_name" ]] && timings+=("$(printf '%6d s  %s' $((SECONDS - step_start)) "${step_name:0:90}")")
    step_name=""
}
step() {
    end_step
    printf '\n== %s\n' "$*" >&2
    step_name="$*"
    step_start=$SECONDS
}
report_timings() {
    end_step
    printf '\n== wall time per step (total %d s)\n' "$SECONDS" >&2
    printf '%s\n' "${timings[@]}" >&2
}
trap report_timings EXIT

step "cargo fmt --check"
cargo fmt --all -- --check
step "cargo clippy (the workspace; the lean library); no standard-library API newer than rust-version"
cargo clippy --workspace --all-targets -- -D warnings -W clippy::incompatible_msrv
cargo clippy -p gguf-grammar --lib --no-default-features -- -D warnings
step "cargo doc (broken links are errors): the workspace, the library with no feature and with each alone"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps
for feature in "" mmap write validate data; do
    RUSTDOCFLAGS="-D warnings" cargo doc -p gguf-grammar --no-deps --no-default-features ${feature:+--features "$feature"}
done
step "the lean library: no feature, each feature alone (build and tests of the library's own code)"
for feature in "" mmap write validate data; do
    cargo test -p gguf-grammar --lib --no-default-features ${feature:+--features "$feature"} --quiet
done
cargo build -p gguf-grammar --example first_steps --no-default-features --features write
step "the library's dependencies with default features are the ones the README lists"
bash scripts/check-lean-tree.sh
step "SmolLM2-135M (download once, sha256-checked)"
GGUF_SMOLLM2="$(bash scripts/fetch-models.sh)"
export GGUF_SMOLLM2
step "llama.cpp's llama-gguf-split and llama-gguf-hash (built once into ~/.cache/gguf-grammar)"
GGUF_LLAMA_TOOLS="${GGUF_LLAMA_TOOLS:-$(bash scripts/build-llama-tools.sh)}"
export GGUF_LLAMA_TOOLS
step "cargo test (dev profile: overflow checks and debug assertions on; includes the fuzz-corpus replay)"
cargo test --workspace --all-targets
cargo test --workspace --doc
step "hostile sweep: every command x hostile inputs under prlimit and timeout (exit 0/1/2, no panic, escaped output)"
bash scripts/hostile-sweep.sh
step "cargo package: every published crate packs and builds from its .crate; the library's doctests pass from its .crate alone"
bash scripts/package-check.sh
step "native JSON vs gguf-py"
bash scripts/check-gguf-py.sh
step "gguf dump --format gguf-py vs gguf-py's gguf-dump (corpus, SmolLM2, conformance)"
bash scripts/parity.sh
step "Kaitai grammar (Python and JavaScript) vs gguf dump --json"
bash scripts/grammar-check.sh
step "gguf edit against gguf-py"
bash scripts/check-edit.sh
step "gguf map spans vs gguf-py's reader (corpus, SmolLM2)"
cargo build --quiet --bin gguf
(source scripts/venv.sh && "$GGUF_PYTHON" scripts/check-map.py target/debug/gguf tests/corpus/*.gguf "$GGUF_SMOLLM2")
step "gguf map --html and web/inspector.html in headless Chromium"
bash scripts/browser-tests.sh
step "gguf fixtures: deterministic, schema-valid, read and dequantised by gguf-py as documented"
bash scripts/check-fixtures.sh
step "llama.cpp as an executed reference: fixtures, corpus, SmolLM2 and mutations loaded, tokenized and decoded; gguf check --profile llama.cpp agrees"
bash scripts/check-llama-loader.sh
step "gguf mutate: gguf-py accepts/rejects every mutation as the manifest predicts"
bash scripts/check-mutations.sh
step "dequantisation vs gguf-py (random blocks of every type, SmolLM2)"
bash scripts/check-dequant.sh
step "gguf-tokenizer vs llama.cpp: test-tokenizer-0 vectors, generated texts, token round trips, every models/ vocabulary"
bash scripts/check-tokenizer.sh
step "gguf hash vs llama.cpp's llama-gguf-hash (SmolLM2, corpus)"
bash scripts/check-hash.sh
step "gguf convert-endian vs gguf-py's gguf-convert-endian (corpus, every convertible type, SmolLM2 refused)"
bash scripts/check-convert-endian.sh
step "Python package (python/): maturin build, pip install, pytest python/tests against gguf-py"
bash scripts/test-python.sh
step "gguf-fit: memory estimate vs llama.cpp's own figures (weights, KV, output byte-equal; compute within its bound)"
bash scripts/check-fit.sh
step "chat templates: crates/gguf-template vs transformers and llama.cpp (every reference template x conversation)"
bash scripts/check-templates.sh
step "gguf-py's own scripts with gguf_grammar.GGUFReader swapped in (conformance, 2 corpus files, SmolLM2)"
bash scripts/check-gguf-py-scripts.sh
step "remote headers over HTTP ranges against nginx"
bash scripts/check-remote.sh
