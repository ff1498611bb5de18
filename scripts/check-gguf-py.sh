#!/usr/bin/env bash
# Cross-check the gguf CLI against gguf-py, llama.cpp's own Python GGUF reader.
#
# Usage: scripts/check-gguf-py.sh [-v] [--keep DIR] [FILE...]
#
# Builds the CLI (cargo build --release --bin gguf), then for each FILE runs
#   A: target/release/gguf dump --json FILE
#   B: scripts/gguf_py_native.py FILE          (gguf==0.19.0's GGUFReader, in .venv)
# and compares the two documents with scripts/compare_native.py. Default files: every
# tests/corpus/*.gguf and SmolLM2-135M-Instruct.Q4_1.gguf (fetched and cached by
# scripts/fetch-models.sh). A file that both readers reject counts as passed.
#
# Prints one line per failing file, then "N passed, M failed"; exits 1 when M > 0
# (or when the build, the venv or an argument fails).
#
# Options:
#   -v, --verbose   also print passing files and up to 20 differences per failing file
#   --keep DIR      keep each file's two JSON documents in DIR (NAME.gguf.json, NAME.gguf-py.json)
#   -h, --help      this text
# Environment: GGUF_BIN         check this executable instead of building target/release/gguf
#              GGUF_PY_TIMEOUT  seconds allowed to gguf-py per file (default 900)
#              CARGO_TARGET_DIR, GGUF_MODEL_CACHE as for cargo and scripts/fetch-models.sh

set -euo pipefail

usage() { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; }

verbose=0
keep=""
files=()
orig_pwd="$(pwd)"
abspath() { case "$1" in /*) printf '%s\n' "$1" ;; *) printf '%s\n' "$orig_pwd/$1" ;; esac; }

while [[ $# -gt 0 ]]; do
    case "$1" in
        -h|--help) usage; exit 0 ;;
        -v|--verbose) verbose=1; shift ;;
        --keep)
            [[ $# -ge 2 ]] || { echo "check-gguf-py.sh: --keep needs a directory" >&2; exit 2; }
            keep="$(abspath "$2")"; shift 2 ;;
        --keep=*) keep="$(abspath "${1#--keep=}")"; shift ;;
        --) shift; for f in "$@"; do files+=("$(abspath "$f")"); done; break ;;
        -*) echo "check-gguf-py.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
        *) files+=("$(abspath "$1")"); shift ;;
    esac
done

cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo="$(pwd)"

bash scripts/venv.sh
py="$repo/.venv/bin/python"

if [[ -n "${GGUF_BIN:-}" ]]; then
    gguf_bin="$( (cd "$orig_pwd" && command -v "$GGUF_BIN") || true)"
    case "$gguf_bin" in ""|/*) ;; *) gguf_bin="$orig_pwd/$gguf_bin" ;; esac
    [[ -n "$gguf_bin" && -x "$gguf_bin" ]] || { echo "check-gguf-py.sh: GGUF_BIN=$GGUF_BIN is not an executable" >&2; exit 1; }
else
    echo "check-gguf-py.sh: cargo build --release --bin gguf" >&2
    if ! cargo build --release --quiet --bin gguf; then
        echo "check-gguf-py.sh: cargo build failed" >&2
        exit 1
    fi
    target_dir="${CARGO_TARGET_DIR:-target}"
    case "$target_dir" in /*) ;; *) target_dir="$repo/$target_dir" ;; esac
    gguf_bin="$target_dir/release/gguf"
    [[ -x "$gguf_bin" ]] || { echo "check-gguf-py.sh: $gguf_bin not found after the build" >&2; exit 1; }
fi

passed=0
failed=0
fail() { # fail FILE MESSAGE
    failed=$((failed + 1))
    echo "FAIL $1: $2"
}

if [[ ${#files[@]} -eq 0 ]]; then
    shopt -s nullglob
    files=("$repo"/tests/corpus/*.gguf)
    shopt -u nullglob
    if model="$(scripts/fetch-models.sh)"; then
        files+=("$model")
    else
        fail "SmolLM2-135M-Instruct.Q4_1.gguf" "scripts/fetch-models.sh failed"
    fi
fi

[[ -z "$keep" ]] || mkdir -p "$keep"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/check-gguf-py.XXXXXX")"
py_pid=""
cleanup() {
    if [[ -n "$py_pid" ]]; then kill "$py_pid" 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

timeout_cmd=()
if command -v timeout >/dev/null 2>&1; then
    timeout_cmd=(timeout "${GGUF_PY_TIMEOUT:-900}")
fi

first_line() { head -n 1 "$1" 2>/dev/null | cut -c 1-300; }

for f in "${files[@]}"; do
    shown="${f#"$repo"/}"
    if [[ ! -f "$f" ]]; then
        fail "$shown" "no such file"
        continue
    fi
    a="$tmp/a.json"; b="$tmp/b.json"
    rm -f "$a" "$b" "$tmp"/*.err
    start=$SECONDS

    # gguf-py is the slow side: run it alongside the CLI (two cores).
    "${timeout_cmd[@]}" "$py" scripts/gguf_py_native.py -o "$b" "$f" 2>"$tmp/b.err" &
    py_pid=$!
    a_rc=0
    "$gguf_bin" dump --json "$f" >"$a" 2>"$tmp/a.err" || a_rc=$?
    b_rc=0
    wait "$py_pid" || b_rc=$?
    py_pid=""

    if [[ -n "$keep" ]]; then
        base="$(basename "$f")"
        [[ ! -f "$a" ]] || cp "$a" "$keep/$base.json"
        [[ ! -f "$b" ]] || cp "$b" "$keep/${base%.gguf}.gguf-py.json"
    fi

    if [[ $a_rc -ne 0 && $b_rc -ne 0 ]]; then
        passed=$((passed + 1))
        [[ $verbose -eq 0 ]] || echo "ok   $shown (both reject; gguf: $(first_line "$tmp/a.err"); gguf-py: $(first_line "$tmp/b.err"))"
        continue
    fi
    if [[ $a_rc -ne 0 ]]; then
        fail "$shown" "gguf dump --json exited $a_rc, gguf-py accepts: $(first_line "$tmp/a.err")"
        continue
    fi
    if [[ $b_rc -ne 0 ]]; then
        if [[ $b_rc -eq 124 && ${#timeout_cmd[@]} -gt 0 ]]; then
            fail "$shown" "gguf-py timed out after ${GGUF_PY_TIMEOUT:-900} s, gguf accepts"
        else
            fail "$shown" "gguf-py rejects (exit $b_rc), gguf accepts: $(first_line "$tmp/b.err")"
        fi
        continue
    fi

    c_rc=0
    "$py" scripts/compare_native.py --summary "$a" "$b" >"$tmp/cmp.out" 2>"$tmp/cmp.err" || c_rc=$?
    case $c_rc in
        0)
            passed=$((passed + 1))
            [[ $verbose -eq 0 ]] || echo "ok   $shown ($((SECONDS - start)) s)"
            ;;
        1)
            fail "$shown" "$(first_line "$tmp/cmp.out") (A = gguf, B = gguf-py)"
            if [[ $verbose -ne 0 ]]; then
                "$py" scripts/compare_native.py "$a" "$b" | sed 's/^/    /' || true
            fi
            ;;
        *)
            fail "$shown" "cannot compare: $(first_line "$tmp/cmp.err")"
            ;;
    esac
done

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
