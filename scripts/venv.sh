#!/usr/bin/env bash
# Create (once) the Python virtual environment that the reference scripts use.
#
# Usage: scripts/venv.sh [--help]
#        source scripts/venv.sh
#
# Makes `.venv/` at the repository root with python3 -m venv and installs gguf==0.19.0
# (gguf-py, llama.cpp's own GGUF reader) into it. Running it again does nothing when the
# environment is already there with that version. It prints nothing unless something fails;
# then it prints the failing step's output on stderr and exits non-zero.
#
# When sourced, it leaves GGUF_VENV (the .venv path) and GGUF_PYTHON (its python) set in the
# calling shell and does not change the caller's shell options.
#
# Environment: PYTHON  the interpreter to build the venv from (default: python3).

_gguf_venv_main() {
    local repo venv py want log
    repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    venv="$repo/.venv"
    py="$venv/bin/python"
    want="0.19.0"

    if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
        sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
        return 0
    fi

    GGUF_VENV="$venv"
    GGUF_PYTHON="$py"
    export GGUF_VENV GGUF_PYTHON

    # Fast path: the venv exists and holds the wanted gguf (importlib.metadata does not import
    # the package, so this stays cheap).
    _gguf_venv_ok() {
        [[ -x "$py" ]] && "$py" - "$want" <<'EOF' >/dev/null 2>&1
import importlib.metadata as m, sys
sys.exit(0 if m.version("gguf") == sys.argv[1] else 1)
EOF
    }
    if _gguf_venv_ok; then
        return 0
    fi

    log="$(mktemp "${TMPDIR:-/tmp}/gguf-venv.XXXXXX")" || return 1
    local rc=0
    # Every step is chained by hand: `set -e` does not act inside a subshell whose status is
    # tested.
    (
        # Serialise concurrent first runs (two scripts started at once).
        if command -v flock >/dev/null 2>&1; then
            mkdir -p "$repo/.cache" || exit 1
            exec 9>"$repo/.cache/venv.lock" || exit 1
            flock 9 || exit 1
        fi
        if _gguf_venv_ok; then exit 0; fi
        base="${PYTHON:-python3}"
        command -v "$base" >/dev/null 2>&1 || { echo "venv.sh: $base not found"; exit 1; }
        if [[ ! -x "$py" ]]; then
            rm -rf "$venv" || exit 1
            if ! "$base" -m venv "$venv"; then
                # Debian without python3-venv has no ensurepip: make a venv without pip and let
                # the base interpreter's pip install into it.
                rm -rf "$venv" || exit 1
                "$base" -m venv --without-pip "$venv" || exit 1
            fi
        fi
        pipargs=(--disable-pip-version-check --no-input -q install "gguf==$want")
        if "$py" -m pip --version >/dev/null 2>&1; then
            "$py" -m pip "${pipargs[@]}" || exit 1
        else
            "$base" -m pip --python "$py" "${pipargs[@]}" || exit 1
        fi
        _gguf_venv_ok || { echo "venv.sh: gguf==$want is not importable from $py"; exit 1; }
    ) >"$log" 2>&1 || rc=$?
    if [[ $rc -ne 0 ]]; then
        echo "venv.sh: creating $venv failed (exit $rc):" >&2
        cat "$log" >&2
    fi
    rm -f "$log"
    return $rc
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
    set -euo pipefail
    _gguf_venv_main "$@"
else
    # Sourced: the caller's positional parameters are not ours.
    _gguf_venv_main
fi
