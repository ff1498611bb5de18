#!/usr/bin/env bash
# Packs the crate as `cargo publish` would, unpacks the .crate into a scratch folder and runs
# its doctests there: every doctest must work with only the files that ship (the bundled
# tests/corpus files do not). Dependencies are reused from this checkout's target folder.
set -euo pipefail
cd "$(dirname "$0")/.."

version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
crate="target/package/gguf-grammar-$version.crate"
# --allow-dirty: the test command also runs on a working tree with uncommitted changes.
cargo package -p gguf-grammar --allow-dirty --no-verify --quiet
# Outside the repository: inside it, cargo would take the unpacked crate for a stray member
# of this workspace.
unpacked="$(mktemp -d)"
trap 'rm -rf "$unpacked"' EXIT
tar -xzf "$crate" -C "$unpacked"
if ls "$unpacked/gguf-grammar-$version/tests/corpus/"*.gguf >/dev/null 2>&1; then
    echo "package-check: tests/corpus/*.gguf should not ship" >&2
    exit 1
fi
(cd "$unpacked/gguf-grammar-$version" && CARGO_TARGET_DIR="$OLDPWD/target" cargo test --doc --quiet)
echo "package-check: the doctests of $crate pass"
