#!/usr/bin/env bash
# The browser tests: the `gguf map --html` page and web/inspector.html in real headless Chromium.
#
# Usage: scripts/browser-tests.sh
#
# Needs Debian's chromium at /usr/bin/chromium (or $CHROMIUM; .ci/run installs it) and Node.js;
# installs playwright-core into scripts/browser/node_modules (npm ci, pinned by its lockfile).
# Without Chromium it says so and exits 0 unless $GGUF_REQUIRE_BROWSER is set (CI sets it).
# Pages and screenshots go to target/browser/ (look at the .png files after a change).
# Prints the measured figures: page size, first paint, bytes the inspector read, analysis times.
# The inspector's analysis panels are compared with crates/gguf-wasm's example `analyze` (the
# native build of the page's WebAssembly) and the CLI, over SmolLM2, fixtures, the real chat
# templates of llama.cpp's models/templates/ (the source scripts/build-llama-tools.sh caches)
# and hostile templates.
set -euo pipefail
cd "$(dirname "$0")/.."

chromium="${CHROMIUM:-/usr/bin/chromium}"
if [[ ! -x "$chromium" ]]; then
    echo "browser-tests.sh: SKIPPED: no Chromium at $chromium (apt-get install chromium)" >&2
    [[ -z "${GGUF_REQUIRE_BROWSER:-}" ]] || exit 1
    exit 0
fi
(cd scripts/browser && npm ci --no-audit --no-fund --silent)
cargo build --quiet --workspace --bin gguf --example analyze
gguf="$(pwd)/target/debug/gguf"
smollm2="${GGUF_SMOLLM2:-$(bash scripts/fetch-models.sh)}"
out=target/browser
mkdir -p "$out"
node scripts/browser/map.js "$gguf" "$out" tests/corpus/ggml-vocab-llama-bpe.gguf "$smollm2"
# The committed inspector must be what its sources and the grammar give.
bash scripts/build-inspector.sh --check
node scripts/browser/inspector.js "$gguf" "$out" tests/corpus/ggml-vocab-llama-bpe.gguf "$smollm2"
bash scripts/build-llama-tools.sh >/dev/null
templates="${GGUF_TOOLS_CACHE:-$HOME/.cache/gguf-grammar/llama.cpp-0.3.16}/src/models/templates"
node scripts/browser/analysis.js "$gguf" "$(pwd)/target/debug/examples/analyze" "$out" "$templates" "$smollm2"
