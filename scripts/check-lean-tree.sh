#!/usr/bin/env bash
# Checks that the README's "Dependencies of the library" list is every crate that
# `cargo tree -e normal -p gguf-grammar` resolves with default features, and that with none
# it is the same list without memmap2 and libc: the list the README promises is the list
# cargo resolves.
#
# Usage: scripts/check-lean-tree.sh [--help]
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
fi

# The crate names cargo resolves, one a line, sorted, the library itself left out.
resolved() {
    cargo tree -q -e normal -p gguf-grammar --prefix none "$@" |
        awk '{ print $1 }' | grep -vx gguf-grammar | sort -u
}
readme_list() {
    awk '$0 == "<!-- tree-default -->" { on = 1; next } $0 == "<!-- /tree-default -->" { on = 0 } on' README.md |
        tr ', ' '\n\n' | grep -v '^$' | sort -u
}
status=0
if ! diff <(readme_list) <(resolved) >&2; then
    echo "check-lean-tree.sh: README's list differs from cargo tree (above: < README, > cargo)" >&2
    status=1
fi
if ! diff <(readme_list | grep -vx -e memmap2 -e libc) <(resolved --no-default-features) >&2; then
    echo "check-lean-tree.sh: without default features cargo resolves more or less than the README's list without memmap2 and libc (above: < README, > cargo)" >&2
    status=1
fi
[[ $status == 0 ]] && echo "check-lean-tree.sh: the README's dependency list is cargo's" >&2
exit $status
