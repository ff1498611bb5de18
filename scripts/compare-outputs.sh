#!/usr/bin/env bash
# Speed work must not change output: runs two `gguf` binaries over the same files and
# commands and compares stdout, stderr and exit status byte for byte.
#
# Usage: scripts/compare-outputs.sh OLD_GGUF NEW_GGUF FILE...
#
# Commands per file (FILE stands for the file): dump (text, --summary, --json, --format
# gguf-py), check in every profile (text and --json, with and without --schema), map (text,
# --json, --html), snapshot, hash, stats, fit, scan, diff, mutate --list, tokenize and
# detokenize, and the commands that write a file (edit, convert-endian, split, merge, mutate
# --rule), whose written files are compared too. Prints each difference and the count of
# comparisons; exits 1 if any output differs. Build the old binary from the commit to compare
# against (e.g. in a `git worktree`), copy it aside, then build the new one.
set -euo pipefail

if [[ $# -lt 3 || "$1" == "-h" || "$1" == "--help" ]]; then
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
old="$1" new="$2"
shift 2
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Both run under the same name, so that messages naming the program agree.
mkdir "$work/old" "$work/new"
cp "$old" "$work/old/gguf"
cp "$new" "$work/new/gguf"

commands=("dump FILE" "dump --summary FILE" "dump --json FILE" "dump --format gguf-py FILE")
for profile in ggml ggml-data gguf-py spec strict llama.cpp; do
    for extra in "" " --json" " --schema" " --schema --json"; do
        commands+=("check --profile $profile$extra FILE")
    done
done
commands+=("map FILE" "map --json FILE" "map --html out/map.html FILE" "snapshot FILE"
    "hash --all FILE" "hash --uuid FILE" "stats FILE" "fit --ctx-size 512,4096 FILE"
    "fit --ctx-size 1024 --flash-attn --cache-type-k q8_0 --cache-type-v q8_0 FILE"
    "scan FILE" "scan --jsonl FILE" "scan --csv FILE" "diff FILE FILE" "mutate --list FILE"
    "tokenize FILE Hello,_world!_123_éè" "tokenize --ids FILE Hello,_world!" "detokenize FILE 1 2 3"
    "edit --set general.name=renamed --remove general.alignment -o out/edited.gguf FILE"
    "convert-endian -o out/swapped.gguf FILE big"
    "split --split-max-tensors 2 FILE out/shard" "mutate --rule bad-magic -o out/mutated.gguf FILE")

compared=0 differ=0
for file in "$@"; do
    file="$(realpath "$file")"
    for command in "${commands[@]}"; do
        for side in old new; do
            rm -rf "$work/$side/out" && mkdir "$work/$side/out"
            # shellcheck disable=SC2086 # the command's words split on purpose
            (cd "$work/$side" && set +e
             ./gguf ${command//FILE/$file} >stdout 2>stderr; echo "$?" >status)
            # Messages name the file by its path, the same on both sides.
        done
        compared=$((compared + 1))
        for part in stdout stderr status out; do
            if ! diff -r -q "$work/old/$part" "$work/new/$part" >/dev/null; then
                echo "differs: gguf $command ($part) on $file"
                differ=$((differ + 1))
                break
            fi
        done
    done
done
echo "$compared comparisons of stdout, stderr and exit status; $differ differ"
[[ $differ -eq 0 ]]
