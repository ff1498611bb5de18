#!/usr/bin/env bash
# Packs every published crate of the workspace as `cargo publish` would, in dependency order,
# each verified by building it from its .crate (against the others' .crate files); prints each
# package's file count and size. Then unpacks the library's .crate into a scratch folder and runs
# its doctests there: every doctest must work with only the files that ship (the bundled
# tests/corpus files do not). Dependencies are reused from this checkout's target folder.
set -euo pipefail
cd "$(dirname "$0")/.."

# gguf-wasm is built into web/inspector.html and not published.
# --allow-dirty: the test command also runs on a working tree with uncommitted changes.
cargo package --workspace --exclude gguf-wasm --allow-dirty

version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
crate="target/package/gguf-grammar-$version.crate"
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
echo "package-check: every published crate packs and builds; the doctests of $crate pass" >&2
