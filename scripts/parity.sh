#!/usr/bin/env bash
# Parity of `gguf dump --format gguf-py FILE` with gguf-py's own `gguf-dump --json --json-array FILE`.
#
# Usage: scripts/parity.sh [--help] [FILE...]
#
# Without arguments it checks every real file in tests/corpus/, SmolLM2-135M (fetched by
# scripts/fetch-models.sh) and every case of tests/conformance/ that gguf-py accepts (by its recorded
# verdict), less the deliberate differences listed below. For each file both documents are parsed and
# compared: the same metadata keys in the same order with the same index, type, offset, array_types
# and value; the same tensors with the same index, shape, type and offset; the same filename and
# endian. float32 values (fields whose innermost type is FLOAT32) compare by their f32 bit pattern, NaN
# equal to NaN; everything else exactly. When gguf-dump fails on a file (a string value that is not
# UTF-8), `gguf dump --format gguf-py` must fail too. Prints one line per mismatch, then
# "N passed, M failed"; exit status 1 on any failure.
#
# gguf-dump is slow on large vocabularies (~35 s for the 128k-token Llama 3 header), so its output is
# cached in .cache/gguf-dump-0.19.0/, keyed by the file's sha256 and the path it was given.
# gguf==0.19.0 comes from scripts/venv.sh's .venv.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
fi

source scripts/venv.sh
cargo build --quiet --bin gguf
gguf="${CARGO_TARGET_DIR:-target}/debug/gguf"

# Conformance cases gguf-py accepts and we reject on purpose (tests/conformance/README.md, "Parity with ggml and
# gguf-py"; crates/gguf-cli/tests/conformance.rs holds the same list): there is no dump of ours to compare.
deviations=(string-length-past-eof)

files=("$@")
if [[ ${#files[@]} -eq 0 ]]; then
    files=(tests/corpus/*.gguf)
    files+=("$(bash scripts/fetch-models.sh)")
    while IFS= read -r case; do
        files+=("tests/conformance/cases/$case")
    done < <("$GGUF_PYTHON" - "${deviations[@]}" <<'PY'
import json
import sys
for case in json.load(open("tests/conformance/verdicts.json"))["cases"]:
    if case["gguf_py"] and case["gguf_py"]["ok"]:
        if case["name"] in sys.argv[1:]:
            print(f"skipped {case['name']}: a deliberate difference (tests/conformance/README.md)", file=sys.stderr)
        else:
            print(case["file"])
PY
)
fi

cache=.cache/gguf-dump-0.19.0
mkdir -p "$cache"
work="$(mktemp -d "${TMPDIR:-/tmp}/gguf-parity.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# One line per file for the comparer: path, reference JSON (or .err), our JSON (or .err).
list="$work/list"
: >"$list"
for i in "${!files[@]}"; do
    file="${files[$i]}"
    key="$( { sha256sum <"$file"; printf '%s' "$file"; } | sha256sum | cut -c1-32)"
    ref="$cache/$key.json"
    if [[ ! -s "$ref" && ! -s "$cache/$key.err" ]]; then
        if ! "$GGUF_VENV/bin/gguf-dump" --json --json-array "$file" >"$work/ref" 2>"$work/ref.err"; then
            tail -n 1 "$work/ref.err" >"$cache/$key.err"
        else
            mv "$work/ref" "$ref"
        fi
    fi
    [[ -s "$ref" ]] || ref="$cache/$key.err"
    ours="$work/$i.json"
    if ! "$gguf" dump --format gguf-py "$file" >"$ours" 2>"$work/$i.err"; then
        ours="$work/$i.err"
    fi
    printf '%s\t%s\t%s\n' "$file" "$ref" "$ours" >>"$list"
done

"$GGUF_PYTHON" - "$list" <<'EOF'
import json
import math
import struct
import sys


def bits(x, as_f32):
    """The value's bit pattern as float32 (rounded) or float64: -0.0 differs from 0.0."""
    return struct.pack("<f", x) if as_f32 else struct.pack("<d", x)


def same(a, b, as_f32):
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return bits(a, as_f32) == bits(b, as_f32)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return type(a) is type(b) and a == b
    return type(a) is type(b) and a == b


def diff(ref, ours):
    """The first difference between gguf-dump's document and ours, or None."""
    if list(ref) != list(ours):
        return f"top-level fields {list(ref)} != {list(ours)}"
    for field in ("filename", "endian"):
        if ref[field] != ours[field]:
            return f"{field}: {ref[field]!r} != {ours[field]!r}"
    for section in ("metadata", "tensors"):
        r, o = ref[section], ours[section]
        if list(r) != list(o):
            missing = [k for k in r if k not in o][:3]
            extra = [k for k in o if k not in r][:3]
            return f"{section} keys differ: missing {missing}, extra {extra}, or order"
        for name in r:
            a, b = r[name], o[name]
            if list(a) != list(b):
                return f"{section}[{name!r}] fields {list(a)} != {list(b)}"
            types = [a["type"]] + a.get("array_types", [])
            as_f32 = section == "metadata" and types[-1] == "FLOAT32"
            for k in a:
                x, y = a[k], b[k]
                if k == "value" and isinstance(x, list) and isinstance(y, list):
                    if len(x) != len(y):
                        return f"{section}[{name!r}].value: {len(x)} != {len(y)} elements"
                    for i, (p, q) in enumerate(zip(x, y)):
                        if not same(p, q, as_f32):
                            return f"{section}[{name!r}].value[{i}]: {p!r} != {q!r}"
                elif k == "value":
                    if not same(x, y, as_f32):
                        return f"{section}[{name!r}].value: {x!r} != {y!r}"
                elif x != y or type(x) is not type(y):
                    return f"{section}[{name!r}].{k}: {x!r} != {y!r}"
    return None


passed = failed = 0
for line in open(sys.argv[1]):
    path, ref, ours = line.rstrip("\n").split("\t")
    problem = None
    if ref.endswith(".err") and ours.endswith(".err"):
        pass  # both refuse the file
    elif ref.endswith(".err"):
        problem = "gguf-dump fails (%s) but gguf dump succeeds" % open(ref).read().strip()
    elif ours.endswith(".err"):
        problem = "gguf dump fails: %s" % open(ours).read().strip()
    else:
        try:
            problem = diff(json.load(open(ref)), json.load(open(ours)))
        except (ValueError, KeyError, TypeError) as e:
            problem = "cannot compare: %s: %s" % (type(e).__name__, e)
    if problem:
        failed += 1
        print(f"FAIL {path}: {problem}")
    else:
        passed += 1
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
EOF
