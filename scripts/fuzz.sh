#!/usr/bin/env bash
# Run the cargo-fuzz targets in fuzz/ one after another.
#
# Usage: scripts/fuzz.sh [--seconds N] [--keep-corpus] [TARGET...]
#
# Targets (default: all): raw (any bytes: no panic, allocation bounded by the input, accepted
# files written back byte for byte), chunked (streaming reader in arbitrary chunks equals the
# one-shot parse), built (arbitrary-built documents round-trip, convert, truncate), tokenizer
# (any vocabulary and text: gguf-tokenizer loads, encodes, decodes or refuses, within its
# bounds), template (any template source and messages: gguf-template's sandbox renders or
# refuses, within its bounds).
#
# Each target runs N seconds (default 60) at nice 10 on one core, starting from the committed
# seed corpus fuzz/corpus/TARGET; new inputs go to a temporary folder, so the tree stays clean
# unless --keep-corpus merges them (minimised, libFuzzer -merge=1) into fuzz/corpus/TARGET.
# A crash is written to fuzz/artifacts/TARGET/ and makes the script exit 1; copy the
# reproducer to fuzz/regressions/TARGET/ once fixed, where tests/fuzz_replay.rs replays it.
# Prints per target: runs, executions per second, CPU seconds.
#
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`); without either it
# says so and exits 0, so that CI passes on machines without them. Builds go to fuzz/target.

set -euo pipefail
usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; }
cd "$(dirname "$0")/.."

seconds=60
keep=0
targets=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        -h|--help) usage; exit 0 ;;
        --seconds)
            [[ $# -ge 2 && "$2" =~ ^[0-9]+$ ]] || { echo "fuzz.sh: --seconds needs a number" >&2; exit 2; }
            seconds="$2"; shift 2 ;;
        --keep-corpus) keep=1; shift ;;
        raw|chunked|built|tokenizer|template) targets+=("$1"); shift ;;
        *) echo "fuzz.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[[ ${#targets[@]} -gt 0 ]] || targets=(raw chunked built tokenizer template)

if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "fuzz.sh: no nightly toolchain: fuzzing skipped" >&2
    exit 0
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "fuzz.sh: cargo-fuzz not installed (cargo install cargo-fuzz): fuzzing skipped" >&2
    exit 0
fi

fuzz=(nice -n 10 cargo +nightly fuzz)
"${fuzz[@]}" build --target-dir fuzz/target >&2

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
status=0
for target in "${targets[@]}"; do
    mkdir -p "$work/$target" "fuzz/artifacts/$target"
    log="$work/$target.log"
    set +e
    /usr/bin/env time -f '%U %S' -o "$work/$target.time" \
        "${fuzz[@]}" run --target-dir fuzz/target "$target" "$work/$target" "fuzz/corpus/$target" -- \
        -max_total_time="$seconds" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="fuzz/artifacts/$target/" >"$log" 2>&1
    result=$?
    set -e
    runs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')"
    rate="$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')"
    cpu="$(awk '{printf "%.0f", $1 + $2}' "$work/$target.time" 2>/dev/null || echo '?')"
    echo "fuzz $target: $runs runs, $rate exec/s, $cpu CPU seconds"
    if [[ $result -ne 0 ]]; then
        echo "fuzz $target: FAILED (exit $result); last lines of the log:" >&2
        tail -n 40 "$log" >&2
        status=1
    elif [[ $keep -eq 1 ]]; then
        "${fuzz[@]}" run --target-dir fuzz/target "$target" "fuzz/corpus/$target" "$work/$target" -- \
            -merge=1 -max_len=16384 >/dev/null 2>&1
    fi
done
exit "$status"
