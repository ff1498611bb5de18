#!/usr/bin/env bash
# llama.cpp as an executed reference, per release we hold (0.3.16, 0.3.36): build
# scripts/llama/loader.cpp against each cached libllama (scripts/llama/build-program.sh), run
# it on `gguf fixtures`' files, the kept inputs
# of tests/llama/ (the fixtures before their fix), the corpus (tests/corpus/), the conformance
# case llama-8-tokens.gguf, SmolLM2 and every `gguf mutate --all` mutation of the two valid
# fixtures, and compare every verdict, first error line, tokenization and greedy decode with
# that release's record, tests/llama/verdicts.json (0.3.16) or tests/llama/verdicts-0.3.36.json
# (scripts/llama_verdicts.py): any difference fails. Then `gguf check --profile
# llama.cpp-0.3.16` and `--profile llama.cpp` (0.3.36) must each agree with their release's
# verdict (loads, tokenizes and decodes, or not) on at least 99% of the files, every difference
# listed with its measured reason in tests/llama/differences.txt (scripts/llama_agreement.py).
# The valid fixtures must load, tokenize (the fixed string back from llama_detokenize) and
# decode in each release, as must every `gguf fixtures --all-archs` tiny model (each also
# written twice, identical, and read by gguf-py: scripts/check-gguf-py.sh), except those
# tests/llama/differences.txt lists as not run by a release, with the reason. First, the
# container verdicts of the ggml of each release we hold (0.3.16, 0.3.36) over
# tests/conformance/cases (record.py with scripts/llama/gguf-reader.cpp) must equal
# tests/conformance/verdicts-llama.cpp-RELEASE.json.
#
# Usage: scripts/check-llama-loader.sh [--update]   (--update: rewrite tests/llama/verdicts.json
# and tests/conformance/verdicts-llama.cpp-*.json)
# Environment: GGUF_BIN (default: build target/debug/gguf), GGUF_SMOLLM2 (default:
# scripts/fetch-models.sh's download).
set -euo pipefail
cd "$(dirname "$0")/.."

loader_0316="$(bash scripts/llama/build-program.sh --release 0.3.16 scripts/llama/loader.cpp)"
loader_0336="$(bash scripts/llama/build-program.sh --release 0.3.36 scripts/llama/loader.cpp)"
if [[ -z "${GGUF_BIN:-}" ]]; then
    cargo build --quiet --bin gguf
    GGUF_BIN="$(pwd)/target/debug/gguf"
fi
smollm2="${GGUF_SMOLLM2:-$(bash scripts/fetch-models.sh)}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The ggml of RELEASE (whose GGML_TYPE_COUNT is TYPE_COUNT): its container verdicts on the
# conformance cases, re-recorded (a few seconds) and compared with the recorded ones.
check_ggml_verdicts() {
    local release="$1" type_count="$2" reader
    local record="tests/conformance/verdicts-llama.cpp-$release.json" out="$work/conformance-$release.json"
    reader="$(bash scripts/llama/build-program.sh --release "$release" scripts/llama/gguf-reader.cpp)"
    python3 tests/conformance/record.py tests/conformance/cases --ggml "$reader" --python "" \
        --ggml-label "ggml of the llama.cpp vendored in llama-cpp-python $release (gguf_init_from_file, GGUF_VERSION 3, GGML_TYPE_COUNT $type_count) on a little-endian x86-64 host" \
        --out "$out" >/dev/null 2>&1
    # ggml's assertion messages name its source file: keep the path inside the source tree.
    sed -i "s|${GGUF_TOOLS_CACHE:-$HOME/.cache/gguf-grammar/llama.cpp-$release}/src/||g" "$out"
    if ((update)); then
        cp "$out" "$record"
    elif ! diff -u "$record" "$out" >&2; then
        echo "check-llama-loader.sh: ggml $release's verdicts on tests/conformance/cases differ from $record" >&2
        exit 1
    fi
}
update=0
if [[ "${1:-}" == "--update" ]]; then
    update=1
fi
check_ggml_verdicts 0.3.16 40
check_ggml_verdicts 0.3.36 43
"$GGUF_BIN" fixtures "$work/fixtures" >/dev/null

"$GGUF_BIN" fixtures --all-archs "$work/archs" >/dev/null
"$GGUF_BIN" fixtures --all-archs "$work/archs-again" >/dev/null
diff -r "$work/archs" "$work/archs-again" >/dev/null || { echo "check-llama-loader.sh: two runs of gguf fixtures --all-archs differ" >&2; exit 1; }
# gguf-py reads every key/value and tensor of each tiny model with our values.
bash scripts/check-gguf-py.sh "$work"/archs/*.gguf >/dev/null

cases=()
for f in "$work"/fixtures/*.gguf "$work"/archs/*.gguf; do
    cases+=("fixtures/$(basename "$f")=$f")
done
for f in tests/llama/*.gguf tests/corpus/*.gguf tests/conformance/cases/llama-8-tokens.gguf; do
    cases+=("$f=$f")
done
cases+=("$(basename "$smollm2")=$smollm2")
# Each valid fixture broken one rule at a time (container and model rules: gguf mutate --all).
for f in "$work"/fixtures/minimal-llama.gguf "$work"/fixtures/llama3-tiny.gguf; do
    name="$(basename "$f" .gguf)"
    "$GGUF_BIN" mutate "$f" --all "$work/mutations/$name" >/dev/null 2>&1
    for m in "$work/mutations/$name"/*.gguf; do
        cases+=("mutations/$(basename "$m")=$m")
    done
done

# Each tiny model broken one model-level rule at a time (the container rules are covered by
# the two fixtures above).
model_rules='block-count-0|tensor-missing|tensor-shape|key-missing|key-type|heads-not-dividing|kv-heads-not-dividing|architecture-unknown|byte-tokens-missing|special-token-past-vocab|tokenizer-pre-unknown'
for f in "$work"/archs/*.gguf; do
    name="$(basename "$f" .gguf)"
    "$GGUF_BIN" mutate "$f" --all "$work/mutations/$name" >/dev/null 2>&1
    for m in "$work/mutations/$name"/*.gguf; do
        if [[ "$(basename "$m")" =~ \.($model_rules)\.gguf$ ]]; then
            cases+=("mutations/$(basename "$m")=$m")
        fi
    done
done

# A variant the mutations do not make: llama4 with experts in every second block only
# (interleave_moe_layer_step 2), whose blocks 0 and 2 must then be dense.
mkdir -p "$work/variants"
"$GGUF_BIN" edit "$work/archs/tiny-llama4.gguf" --set llama4.interleave_moe_layer_step=2 \
    -o "$work/variants/llama4-moe-step-2.gguf" >/dev/null
cases+=("variants/llama4-moe-step-2.gguf=$work/variants/llama4-moe-step-2.gguf")

paths=()
for c in "${cases[@]}"; do
    paths+=("${c#*=}")
done
# Each release: its verdicts against its record, then ours (its profile) against them.
for release in 0.3.16 0.3.36; do
    case "$release" in
        0.3.16) loader="$loader_0316" record=tests/llama/verdicts.json profile=llama.cpp-0.3.16 ;;
        0.3.36) loader="$loader_0336" record=tests/llama/verdicts-0.3.36.json profile=llama.cpp ;;
    esac
    GGML_NO_BACKTRACE=1 "$loader" "${paths[@]}" >"$work/loader-$release.jsonl"
    python3 scripts/llama_verdicts.py "$@" --release "$release" "$record" "${cases[@]}" <"$work/loader-$release.jsonl"
    "$GGUF_BIN" check --profile "$profile" --json "${paths[@]}" >"$work/check-$release.json" || true
    python3 scripts/llama_agreement.py "$work/loader-$release.jsonl" "$work/check-$release.json" 0.99 \
        --reviewed tests/llama/differences.txt --release "$release" "${cases[@]}"
done
echo "llama loader: the valid fixtures load, tokenize and decode in each release, but for those tests/llama/differences.txt lists"
