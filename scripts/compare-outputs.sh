#!/usr/bin/env bash
# Speed work must not change output: runs two `gguf` binaries over the same files and
# commands and compares stdout, stderr and exit status byte for byte.
#
# Usage: scripts/compare-outputs.sh OLD_GGUF NEW_GGUF FILE...
#
# Commands per file: dump (text, --summary, --json, --format gguf-py) and check in every
# profile, text and --json, with and without --schema. Prints each difference and the count
# of comparisons; exits 1 if any output differs. Build the old binary from the commit to
# compare against (e.g. in a `git worktree`), copy it aside, then build the new one.
set -euo pipefail

if [[ $# -lt 3 || "$1" == "-h" || "$1" == "--help" ]]; then
    sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
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

commands=("dump" "dump --summary" "dump --json" "dump --format gguf-py")
for profile in ggml ggml-data gguf-py spec strict; do
    for extra in "" " --json" " --schema" " --schema --json"; do
        commands+=("check --profile $profile$extra")
    done
done

compared=0 differ=0
for file in "$@"; do
    for command in "${commands[@]}"; do
        for side in old new; do
            # shellcheck disable=SC2086 # the command's words split on purpose
            (cd "$work/$side" && set +e
             ./gguf $command "$file" >out 2>err; echo "$?" >status)
        done
        compared=$((compared + 1))
        for part in out err status; do
            if ! cmp -s "$work/old/$part" "$work/new/$part"; then
                echo "differs: gguf $command $file ($part)"
                differ=$((differ + 1))
                break
            fi
        done
    done
done
echo "$compared comparisons of stdout, stderr and exit status; $differ differ"
[[ $differ -eq 0 ]]
