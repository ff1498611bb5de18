#!/usr/bin/env bash
# gguf-py 0.19.0's own scripts with gguf_grammar.GGUFReader swapped in for gguf.GGUFReader:
# gguf_dump (every output mode), gguf_hash, gguf_new_metadata, gguf_set_metadata and
# gguf_convert_endian (on copies) must print, exit and write exactly what they do with
# gguf-py's reader (scripts/gguf_py_scripts.py runs them and lists the known differences).
#
# Usage: scripts/check-gguf-py-scripts.sh [--all]
#
# Files: every conformance case gguf-py reads (tests/conformance/verdicts.json; not
# string-length-past-eof, which gguf-py reads only by accident), the two smallest corpus
# vocabularies (llama-spm, bert-bge) and SmolLM2; about 3 minutes on 2 shared cores, most of
# it gguf-py's reader. --all adds the other ten corpus vocabularies (gguf-py takes about a
# minute on the Llama 3 one alone). Needs the venv of scripts/test-python.sh, which it runs
# first when the package is not installed there.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
fi
py="$PWD/target/python-venv/bin/python"
if ! [[ -x "$py" ]] || ! "$py" -c "import gguf_grammar, gguf" 2>/dev/null; then
    bash scripts/test-python.sh -q -k test_native >/dev/null
fi
smollm2="$(bash scripts/fetch-models.sh)"

files=()
while IFS= read -r f; do files+=("$f"); done < <("$py" - <<'PY'
import json
cases = json.load(open("tests/conformance/verdicts.json"))["cases"]
for c in cases:
    if c["gguf_py"]["ok"] and c["name"] != "string-length-past-eof":
        print("tests/conformance/cases/" + c["file"])
PY
)
if [[ "${1:-}" == "--all" ]]; then
    files+=(tests/corpus/*.gguf)
else
    files+=(tests/corpus/ggml-vocab-llama-spm.gguf tests/corpus/ggml-vocab-bert-bge.gguf)
fi
files+=("$smollm2")
exec "$py" scripts/gguf_py_scripts.py "${files[@]}"
