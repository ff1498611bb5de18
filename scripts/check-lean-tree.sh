#!/usr/bin/env bash
# Checks that the README's "Dependencies of the library" block is what
# `cargo tree -e normal -p gguf-grammar` prints (with default features, and with none),
# versions left out: the list the README promises is the list cargo resolves.
#
# Usage: scripts/check-lean-tree.sh [--help]
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
fi

tree() {
    cargo tree -q -e normal -p gguf-grammar "$@" | sed -E 's/ v[0-9][^ ]*//; s/ \(\/[^)]*\)//'
}
readme_block() {
    awk -v name="$1" '$0 == "<!-- " name " -->" { on = 1; next }
        on && /^```/ { if (inside) exit; inside = 1; next }
        inside' README.md
}
status=0
for which in default none; do
    args=()
    [[ $which == none ]] && args=(--no-default-features)
    if ! diff <(readme_block "tree-$which") <(tree "${args[@]}") >&2; then
        echo "check-lean-tree.sh: README's tree-$which block differs from cargo tree (above: < README, > cargo)" >&2
        status=1
    fi
done
[[ $status == 0 ]] && echo "check-lean-tree.sh: the README's dependency trees are cargo's" >&2
exit $status
