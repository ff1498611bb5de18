#!/usr/bin/env bash
# Execute the Kaitai Struct grammar (grammar/gguf.ksy) against GGUF files and compare it with
# the Rust parser.
#
# Usage: scripts/grammar-check.sh [FILE...]
#
# Compiles grammar/gguf.ksy with the npm package kaitai-struct-compiler (the compiler's
# JavaScript build, driven by scripts/grammar/compile.js) to Python and to JavaScript, runs both
# generated parsers over each file (runtimes: PyPI kaitaistruct, npm kaitai-struct), turns each
# parse into the crate's native JSON and compares it with `gguf dump --json FILE`: version, byte
# order, alignment, tensor-data offset, file size, every key/type/value and every tensor's name,
# dims, ggml type, offsets and byte size. With no FILE it runs over tests/corpus/*.gguf, the
# SmolLM2 model that scripts/fetch-models.sh caches, big-endian (gguf-py's gguf-convert-endian)
# and v1 (scripts/grammar/reencode.py) copies of some of them, the small files that
# scripts/grammar/make_edge_cases.py writes, and every case in tests/conformance/cases/ that
# `gguf dump --json` accepts. A FILE that `gguf dump` rejects passes when the grammar rejects
# it too. Prints `N passed, M failed` (one check per file per language); exits 1 on any failure.
#
# Installs what it needs, once: node packages under scripts/grammar/node_modules (npm ci), the
# kaitaistruct runtime into .venv/ (made by scripts/venv.sh), and builds target/release/gguf
# with cargo. Generated parsers and derived files go to target/grammar/.
#
# Environment: GGUF_BIN  use this gguf binary instead of building one
#              NODE, PYTHON  interpreters to use (default: node; python3 for the venv)

set -euo pipefail

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
fi

say() { echo "grammar-check: $*" >&2; }
die() { say "$*"; exit 2; }

t0=$SECONDS

# Files named on the command line are made absolute before the script changes directory.
files=()
for f in "$@"; do
    [[ -f "$f" ]] || die "no such file: $f"
    files+=("$(cd "$(dirname "$f")" && pwd)/$(basename "$f")")
done

cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo="$(pwd)"
here="$repo/scripts/grammar"
node="${NODE:-node}"
kaitaistruct_version="0.11"

command -v "$node" >/dev/null 2>&1 || die "node not found (install Node.js 18 or later)"
command -v npm >/dev/null 2>&1 || die "npm not found"

# --- node packages: the compiler, the JavaScript runtime, a YAML reader -----------------------
# The stamp records the lock file node_modules was installed from; a changed lock reinstalls.
stamp="$here/node_modules/.grammar-check-lock"
if ! cmp -s "$here/package-lock.json" "$stamp" 2>/dev/null; then
    say "installing node packages (npm ci) into scripts/grammar/node_modules"
    (cd "$here" && npm ci --no-audit --no-fund --loglevel=error >&2)
    cp "$here/package-lock.json" "$stamp"
fi

# --- Python: .venv with the kaitaistruct runtime ---------------------------------------------
if [[ -f "$repo/scripts/venv.sh" ]]; then
    bash "$repo/scripts/venv.sh"
elif [[ ! -x "$repo/.venv/bin/python" ]]; then
    say "creating .venv"
    "${PYTHON:-python3}" -m venv "$repo/.venv"
fi
py="$repo/.venv/bin/python"
[[ -x "$py" ]] || die "$py missing after creating the virtual environment"
has_kaitaistruct() {
    "$py" - "$kaitaistruct_version" <<'EOF' >/dev/null 2>&1
import importlib.metadata as m, sys
sys.exit(0 if m.version("kaitaistruct") == sys.argv[1] else 1)
EOF
}
if ! has_kaitaistruct; then
    say "installing kaitaistruct==$kaitaistruct_version into .venv"
    mkdir -p "$repo/.cache"
    (
        # Same lock as scripts/venv.sh: one installer at a time in .venv.
        if command -v flock >/dev/null 2>&1; then
            exec 9>"$repo/.cache/venv.lock"
            flock 9
        fi
        has_kaitaistruct && exit 0
        pipargs=(--disable-pip-version-check --no-input -q install "kaitaistruct==$kaitaistruct_version")
        if "$py" -m pip --version >/dev/null 2>&1; then
            "$py" -m pip "${pipargs[@]}"
        else
            "${PYTHON:-python3}" -m pip --python "$py" "${pipargs[@]}"
        fi
    ) >&2
    has_kaitaistruct || die "kaitaistruct==$kaitaistruct_version is not importable from $py"
fi

# --- the reference: gguf dump --json -----------------------------------------------------------
target="${CARGO_TARGET_DIR:-$repo/target}"
if [[ -n "${GGUF_BIN:-}" ]]; then
    gguf="$GGUF_BIN"
else
    say "cargo build --release --bin gguf"
    cargo build --release --quiet --bin gguf >&2
    gguf="$target/release/gguf"
fi
[[ -x "$gguf" ]] || die "$gguf is not an executable"

# --- compile the grammar -----------------------------------------------------------------------
build="$target/grammar"
rm -rf "$build/python" "$build/javascript"
mkdir -p "$build"
"$node" "$here/compile.js" "$repo/grammar/gguf.ksy" "$build" python javascript

# --- the files -----------------------------------------------------------------------------------
cases=()
if [[ ${#files[@]} -eq 0 ]]; then
    shopt -s nullglob
    files=("$repo"/tests/corpus/*.gguf)
    shopt -u nullglob
    [[ ${#files[@]} -gt 0 ]] || say "note: no tests/corpus/*.gguf"
    if [[ -f "$repo/scripts/fetch-models.sh" ]]; then
        model="$(bash "$repo/scripts/fetch-models.sh")" || die "scripts/fetch-models.sh failed"
        files+=("$model")
    else
        say "note: scripts/fetch-models.sh is absent: SmolLM2 not checked"
    fi
    # Inputs no converter in the corpus wrote: big-endian copies of a v2 and a v3 real file made
    # by gguf-py's gguf-convert-endian, and v1 copies made by scripts/grammar/reencode.py
    # (nothing else writes v1). Made once into target/grammar/derived/, remade when the source
    # or the tool changes.
    derived="$target/grammar/derived"
    mkdir -p "$derived"
    derive() { # derive SOURCE OUT KIND...
        local src="$1" out="$derived/$2" tmp
        shift 2
        if [[ ! -f "$src" ]]; then
            say "note: $src is absent: $(basename "$out") not made"
            return 0
        fi
        if [[ ! -f "$out" || "$src" -nt "$out" || "$here/reencode.py" -nt "$out" ]]; then
            tmp="$out.tmp"
            if [[ "$1" == "convert-endian" ]]; then
                if [[ ! -x "$repo/.venv/bin/gguf-convert-endian" ]]; then
                    say "note: no gguf-convert-endian in .venv (gguf-py): $(basename "$out") not made"
                    return 0
                fi
                cp "$src" "$tmp"
                # It asks for a typed YES before rewriting the file in place.
                printf 'YES\n' | "$repo/.venv/bin/gguf-convert-endian" "$tmp" big >/dev/null 2>&1 \
                    || die "gguf-convert-endian failed on a copy of $src"
            else
                "$py" "$here/reencode.py" "$src" "$tmp" "$@" || die "reencode.py failed on $src"
            fi
            mv "$tmp" "$out"
        fi
        files+=("$out")
    }
    derive "$repo/tests/corpus/ggml-vocab-aquila.gguf" aquila-v2-be.gguf convert-endian
    derive "$repo/tests/corpus/ggml-vocab-llama-spm.gguf" llama-spm-v3-be.gguf convert-endian
    derive "$repo/tests/corpus/ggml-vocab-llama-spm.gguf" llama-spm-v1-le.gguf \
        --version 1 --endian little
    derive "$repo/tests/corpus/ggml-vocab-aquila.gguf" aquila-v1-be.gguf --version 1 --endian big
    if [[ -n "${model:-}" ]]; then
        derive "$model" smollm2-v1-le.gguf --version 1 --endian little
    fi
    # Corners neither corpus reaches: nesting limit, alignment lookup, every type in v1/v2/v3
    # and both byte orders (scripts/grammar/make_edge_cases.py; cheap, made every run).
    rm -rf "$derived/edge"
    "$py" "$here/make_edge_cases.py" "$derived/edge" || die "make_edge_cases.py failed"
    files+=("$derived"/edge/*.gguf)
    if [[ -d "$repo/tests/conformance/cases" ]]; then
        cases=(--cases-dir "$repo/tests/conformance/cases")
    else
        say "note: tests/conformance/cases is absent"
    fi
fi

say "setup took $((SECONDS - t0))s"
rc=0
NODE="$node" "$py" "$here/check.py" --build "$build" --gguf "$gguf" --node "$node" \
    "${cases[@]}" "${files[@]}" || rc=$?
say "done in $((SECONDS - t0))s"
exit $rc
