#!/usr/bin/env bash
# Chat templates: our renderer (crates/gguf-template) against transformers' and llama.cpp's.
#
# Usage: scripts/check-templates.sh [-v]
#
# Every template in llama.cpp 0.3.36's models/templates/ and those of 0.3.16's that differ (named
# 0316-NAME; the cached sources, 0.3.36's templates taken from its sdist when not cached), every
# template embedded in tests/corpus/*.gguf and in SmolLM2, times the fixed conversations in
# tests/templates/conversations.json, rendered three ways: by crates/gguf-template (example
# render-cases), by transformers' own renderer (scripts/template_reference.py, transformers and
# jinja2 pinned below, installed into .venv) and by llama.cpp's common_chat_templates_apply
# with use_jinja (scripts/llama/chat-template-ref.cpp, built by scripts/llama/build-program.sh
# against the cached build tree, the binary cached under ~/.cache/gguf-grammar). Fails when
# ours differs from transformers anywhere, or when the transformers/llama.cpp differences are
# not exactly those listed in tests/templates/reference-differences.json. -v lists them.
# transformers and our renderer get the same fixed `now`; llama.cpp gets it for its handlers'
# date_string, but its minja reads the clock for strftime_now, so a run across midnight can
# differ on the templates that call it.
# transformers' renderings must also be those tests/templates/transformers.json records (what
# `cargo test -p gguf-template` replays without Python), at its recorded `now`.
# Also: each template's family (crates/gguf-template's port of llm_chat_detect_template) equals
# llama.cpp's own, and our lint's verdict on whether llama.cpp's engine parses it equals
# llama.cpp's; the parse verdicts of tests/templates/llama-cpp-syntax.json are still those of
# transformers and llama.cpp; the renders crates/gguf-cli/tests/cli_template.rs expects
# (tests/templates/cli-expected.json) are transformers'; and `gguf edit --chat-template-config`
# writes the keys gguf-py's gguf_new_metadata writes.
set -euo pipefail
cd "$(dirname "$0")/.."
verbose=()
[[ "${1:-}" == "-v" ]] && verbose=(-v)

transformers_version="5.25.0"
jinja2_version="3.1.6"

source scripts/venv.sh
if ! "$GGUF_PYTHON" - "$transformers_version" "$jinja2_version" <<'PY' >/dev/null 2>&1
import importlib.metadata as m, sys
sys.exit(0 if (m.version("transformers"), m.version("jinja2")) == tuple(sys.argv[1:3]) else 1)
PY
then
    "$GGUF_PYTHON" -m pip --disable-pip-version-check --no-input -q install \
        "transformers==$transformers_version" "jinja2==$jinja2_version"
fi

llama="${GGUF_TOOLS_CACHE:-$HOME/.cache/gguf-grammar/llama.cpp-0.3.16}"
ref="$(bash scripts/llama/build-program.sh scripts/llama/chat-template-ref.cpp)"

smollm2="${GGUF_SMOLLM2:-$(bash scripts/fetch-models.sh)}"
cargo build --quiet --manifest-path crates/gguf-template/Cargo.toml --example render-cases
ours_bin="$(cargo metadata --quiet --format-version 1 --manifest-path crates/gguf-template/Cargo.toml --no-deps \
    | "$GGUF_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/debug/examples/render-cases"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# The templates of both releases: 0.3.36's, and 0.3.16's where they differ.
llama0336="${GGUF_LLAMA_0336:-$HOME/.cache/gguf-grammar/llama.cpp-0.3.36}"
templates0336="$llama0336/src/models/templates"
if [[ ! -d "$templates0336" ]]; then
    "$GGUF_PYTHON" -m pip --disable-pip-version-check --no-input -q download --no-deps \
        --no-binary :all: --no-build-isolation llama-cpp-python==0.3.36 -d "$tmp/sdist" >/dev/null 2>&1 || true
    sdist="$(ls "$tmp"/sdist/llama_cpp_python-0.3.36.tar.gz "$llama0336"/llama_cpp_python-0.3.36.tar.gz 2>/dev/null | head -1)"
    [[ -n "$sdist" ]] || { echo "check-templates.sh: no llama-cpp-python 0.3.36 sdist" >&2; exit 1; }
    tar -xzf "$sdist" -C "$tmp" llama_cpp_python-0.3.36/vendor/llama.cpp/models/templates
    templates0336="$tmp/llama_cpp_python-0.3.36/vendor/llama.cpp/models/templates"
fi
mkdir -p "$tmp/templates"
cp "$templates0336"/*.jinja "$tmp/templates/"
for f in "$llama/src/models/templates"/*.jinja; do
    cmp -s "$f" "$tmp/templates/$(basename "$f")" || cp "$f" "$tmp/templates/0316-$(basename "$f")"
done
recorded_now="$("$GGUF_PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["now"])' tests/templates/transformers.json)"
"$GGUF_PYTHON" scripts/template_reference.py cases "$tmp/templates" tests/corpus/*.gguf \
    --conversations tests/templates/conversations.json --now "$recorded_now" -o "$tmp/recorded-cases.json"
"$GGUF_PYTHON" scripts/template_reference.py transformers "$tmp/recorded-cases.json" -o "$tmp/recorded-transformers.json" 2>/dev/null
"$GGUF_PYTHON" scripts/template_reference.py record "$tmp/recorded-cases.json" "$tmp/recorded-transformers.json" -o "$tmp/record.json"
if ! cmp -s "$tmp/record.json" tests/templates/transformers.json; then
    echo "check-templates.sh: transformers' renderings differ from tests/templates/transformers.json" \
        "(re-record: scripts/template_reference.py record)" >&2
    exit 1
fi
# The three-way comparison with llama.cpp's engine covers the templates of the release built
# here (0.3.16's minja; tests/templates/reference-differences.json explains each difference);
# 0.3.36's templates are compared with transformers above.
"$GGUF_PYTHON" scripts/template_reference.py cases "$llama/src/models/templates" tests/corpus/*.gguf "$smollm2" \
    --conversations tests/templates/conversations.json -o "$tmp/cases.json"
"$ref" "$tmp/cases.json" "$tmp/llama.json"
# The parse verdicts tests/templates/llama-cpp-syntax.json records (the rules of the lint
# template-llama-cpp-syntax), from llama.cpp here and from transformers below.
"$GGUF_PYTHON" scripts/template_reference.py syntax-cases tests/templates/llama-cpp-syntax.json -o "$tmp/syntax.json"
"$ref" "$tmp/syntax.json" "$tmp/syntax-llama.json" 2>/dev/null
# --cli-expected: the renders crates/gguf-cli/tests/cli_template.rs expects are transformers' too.
"$GGUF_PYTHON" scripts/template_reference.py transformers "$tmp/cases.json" -o "$tmp/transformers.json" \
    --cli-expected tests/templates/cli-expected.json \
    --syntax tests/templates/llama-cpp-syntax.json --syntax-llama "$tmp/syntax-llama.json" 2>/dev/null
"$ours_bin" "$tmp/cases.json" "$tmp/ours.json"
"$GGUF_PYTHON" scripts/template_reference.py compare "$tmp/cases.json" "$tmp/ours.json" "$tmp/transformers.json" \
    "$tmp/llama.json" --differences tests/templates/reference-differences.json "${verbose[@]}"

# The comparison must be able to fail: one byte changed in one of our renders is caught.
"$GGUF_PYTHON" - "$tmp/ours.json" "$tmp/ours-mutated.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1], encoding="utf-8"))
key = next(k for k, v in doc["results"].items() if v.get("ok"))
doc["results"][key]["ok"] = doc["results"][key]["ok"][:-1] + "#"
json.dump(doc, open(sys.argv[2], "w", encoding="utf-8"))
PY
if "$GGUF_PYTHON" scripts/template_reference.py compare "$tmp/cases.json" "$tmp/ours-mutated.json" \
    "$tmp/transformers.json" "$tmp/llama.json" --differences tests/templates/reference-differences.json \
    >/dev/null 2>&1; then
    echo "check-templates.sh: the comparison did not catch a changed render" >&2
    exit 1
fi

# gguf edit --chat-template-config writes the template keys gguf-py's gguf_new_metadata writes
# (one named template, so that its tokenizer.chat_templates, a Python set, has one order).
cargo build --quiet --bin gguf
cat > "$tmp/tokenizer_config.json" <<'JSON'
{"chat_template": [{"name": "tool use", "template": "{{ 'tools' }}"}, {"name": "default", "template": "{% for m in messages %}{{ m.content }}{% endfor %}"}]}
JSON
# The input has an old named template, which both remove.
target/debug/gguf edit tests/conformance/cases/llama-8-tokens.gguf -o "$tmp/in.gguf" \
    --set "tokenizer.chat_template.old=string:{{ 'old' }}" --set "tokenizer.chat_template=string:x"
"$(dirname "$GGUF_PYTHON")/gguf-new-metadata" "$tmp/in.gguf" "$tmp/py.gguf" \
    --chat-template-config "$tmp/tokenizer_config.json" >/dev/null 2>&1
target/debug/gguf edit "$tmp/in.gguf" -o "$tmp/ours.gguf" \
    --chat-template-config "$tmp/tokenizer_config.json"
"$GGUF_PYTHON" - "$tmp/py.gguf" "$tmp/ours.gguf" <<'PY'
import sys
from gguf import GGUFReader
def fields(path):
    r = GGUFReader(path)
    return [(k, f.contents()) for k, f in r.fields.items() if not k.startswith("GGUF.")]
py, ours = fields(sys.argv[1]), fields(sys.argv[2])
t = lambda fs: [kv for kv in fs if kv[0].startswith("tokenizer.chat_template")]
if t(py) != t(ours) or sorted(map(repr, py)) != sorted(map(repr, ours)):
    sys.exit(f"check-templates.sh: gguf edit --chat-template-config differs from gguf_new_metadata:\n{t(py)}\n{t(ours)}")
print(f"gguf edit --chat-template-config: the template keys of gguf_new_metadata ({len(t(py))} keys, in its order)")
PY
