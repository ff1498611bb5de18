#!/usr/bin/env bash
# Check `gguf edit` against gguf-py on a real model.
#
# Usage: scripts/check-edit.sh [--help]
#
# Builds the CLI (cargo build --release --bin gguf), then on SmolLM2-135M (fetched and
# cached by scripts/fetch-models.sh) sets tokenizer.chat_template to a longer string with
#   gguf edit MODEL --set tokenizer.chat_template=... -o OUT
# and checks with gguf==0.19.0 (scripts/venv.sh) that OUT reads with the new value, the
# same other keys and values, and every tensor's bytes unchanged (sha256 per tensor); then
# that `gguf check --profile ggml OUT` accepts it, and that a bad value (a string for a u32
# key) fails with exit status 2 and leaves the output untouched.
#
# Prints "edit check passed" and exits 0, or says what differs and exits 1.
# Environment: GGUF_SMOLLM2 (the model; default: scripts/fetch-models.sh), CARGO_TARGET_DIR.

set -euo pipefail
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
fi
cd "$(dirname "$0")/.."

model="${GGUF_SMOLLM2:-$(bash scripts/fetch-models.sh)}"
# shellcheck source=venv.sh
source scripts/venv.sh
cargo build --quiet --release --bin gguf
gguf="${CARGO_TARGET_DIR:-target}/release/gguf"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
out="$work/edited.gguf"

template="$("$GGUF_PYTHON" - "$model" <<'EOF'
import sys
from gguf import GGUFReader
field = GGUFReader(sys.argv[1]).fields["tokenizer.chat_template"]
print(field.contents() + "{# edited by gguf edit: a longer template #}", end="")
EOF
)"
"$gguf" edit "$model" --set "tokenizer.chat_template=$template" -o "$out"

"$GGUF_PYTHON" - "$model" "$out" "$template" <<'EOF'
import hashlib, sys
from gguf import GGUFReader

before, after, template = GGUFReader(sys.argv[1]), GGUFReader(sys.argv[2]), sys.argv[3]
problems = []
got = after.fields["tokenizer.chat_template"].contents()
if got != template:
    problems.append("chat_template not the new value")
if list(before.fields) != list(after.fields):
    problems.append("the keys differ")
for name, field in before.fields.items():
    if name.startswith("GGUF.") or name == "tokenizer.chat_template":
        continue
    if field.contents() != after.fields[name].contents():
        problems.append(f"{name} changed")
digest = lambda t: hashlib.sha256(t.data.tobytes()).hexdigest()
old = {t.name: digest(t) for t in before.tensors}
new = {t.name: digest(t) for t in after.tensors}
if old != new:
    problems.append(f"{sum(old.get(k) != v for k, v in new.items())} tensors differ")
if after.data_offset == before.data_offset:
    problems.append("the data start did not move: the test does not test re-alignment")
for p in problems:
    print("check-edit:", p, file=sys.stderr)
print(f"gguf-py: new template read back, {len(new)} tensors hashed equal, "
      f"data start {before.data_offset} -> {after.data_offset}", file=sys.stderr)
sys.exit(1 if problems else 0)
EOF

if "$gguf" check --help >/dev/null 2>&1; then
    "$gguf" check --profile ggml "$out" >&2
fi

cp "$out" "$work/before-bad-edit.gguf"
status=0
"$gguf" edit "$out" --set "llama.block_count=thirty" --in-place 2>/dev/null || status=$?
if [[ $status -ne 2 ]]; then
    echo "check-edit: a bad value gave exit status $status, not 2" >&2
    exit 1
fi
cmp -s "$out" "$work/before-bad-edit.gguf" || { echo "check-edit: a failed edit changed the file" >&2; exit 1; }
if [[ -n "$(find "$work" -name '.*.tmp')" ]]; then
    echo "check-edit: a temporary file was left behind" >&2
    exit 1
fi
echo "edit check passed"
