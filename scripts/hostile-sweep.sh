#!/usr/bin/env bash
# The hostile sweep (issue 25): every command of `gguf` over hostile inputs, each run under an
# address-space limit (RLIMIT_AS, as prlimit sets it: 1 GiB) and a time limit (timeout, 20 s). It fails when a run
#   - exits with anything but 0, 1 or 2 (for `hash`, also its documented 3-5), or is killed,
#     times out, panics or runs out of memory;
#   - prints a raw control character (C0 but tab/newline, DEL, C1), bidi control or line
#     separator on stderr or stdout (JSON writes each as \uXXXX);
#   - touches a file outside its own output folder.
# The inputs: crafted files (empty, /dev/zero and a link to it, a directory, a link loop, a 3 GB
# sparse string, counts of 2^62, nesting 300 deep, shard names claiming 2^64-1 and 99999
# shards, hostile names and texts, big-endian, v1, a page-amplifying array, a tensor past the
# end) and 6 `gguf mutate` variants of the minimal llama; with --all-mutations, all 39 (CI
# runs the default). Then the model level: hostile vocabularies, texts and chat templates
# (each kind of issue 37, at sizes past the tokenizer's and the sandbox's bounds) and wrongly
# typed hyperparameters, through tokenize, detokenize, template, check and fit. Uses target/debug/gguf (or $GGUF_BIN) as built by `cargo test`; runs in
# parallel on every core. Usage: bash scripts/hostile-sweep.sh [--all-mutations]
set -euo pipefail
cd "$(dirname "$0")/.."

gguf="$(realpath "${GGUF_BIN:-target/debug/gguf}")"
[[ -x "$gguf" ]] || { echo "hostile-sweep: $gguf is not built (cargo build -p gguf-cli)" >&2; exit 1; }
root="$PWD"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
inputs="$work/inputs"
mkdir -p "$inputs" "$work/runs"

# The crafted files.
cp tests/conformance/cases/llama-8-tokens.gguf "$inputs/minimal.gguf"
mkdir "$work/mutations"
"$gguf" mutate "$inputs/minimal.gguf" --all "$work/mutations" >/dev/null 2>&1
if [[ "${1:-}" == --all-mutations ]]; then
    mv "$work/mutations"/*.gguf "$inputs/"
else
    for rule in truncate-first-kv duplicate-key string-length-past-end tensor-past-eof \
        unknown-ggml-type alignment-0; do
        mv "$work/mutations/minimal.$rule.gguf" "$inputs/"
    done
fi
"$gguf" convert-endian "$inputs/minimal.gguf" big -o "$inputs/big-endian.gguf"
python3 - "$inputs" <<'PY'
import os, struct, sys
d = sys.argv[1]
def s(b): return struct.pack('<Q', len(b)) + b
def header(kvs=b'', n_kv=0, tensors=b'', n_t=0): return b'GGUF' + struct.pack('<IQQ', 3, n_t, n_kv) + tensors + kvs
def kv_str(k, v): return s(k) + struct.pack('<I', 8) + s(v)
def write(name, data, size=None):
    with open(os.path.join(d, name), 'wb') as f:
        f.write(data)
        if size: f.truncate(size)
write('empty.gguf', b'')
write('sparse-string.gguf', header(s(b'general.name') + struct.pack('<I', 8) + struct.pack('<Q', 3_000_000_000), 1), 3_000_100_000)
write('kv-count-huge.gguf', header(b'', 1 << 62))
write('tensor-count-huge.gguf', header(b'', 0, b'', 1 << 62))
write('array-huge.gguf', header(s(b'a') + struct.pack('<IIQ', 9, 0, 1 << 62), 1))
deep = s(b'deep') + struct.pack('<I', 9) + struct.pack('<IQ', 9, 1) * 300 + struct.pack('<IQ', 0, 0)
write('nested-300.gguf', header(deep, 1))
hostile = '\x1b]0;pwned\x07\x1b[2J\r\u009b31m\u202e\u2066\u2028'.encode()
write('hostile-text.gguf', header(kv_str(b'general.architecture', b'llama' + hostile) + kv_str(b'general.name', b'=HYPERLINK("http://evil/")' + hostile) + kv_str(b'evil.' + hostile, b'\xff\xfe' + hostile), 3))
write(b'name-\x1b[31m\xff.gguf'.decode('utf-8', 'surrogateescape'), header(kv_str(b'general.name', b'x'), 1))
write('m-00001-of-18446744073709551615.gguf', header(kv_str(b'general.name', b'x'), 1))
write('q-00001-of-99999.gguf', header(kv_str(b'general.name', b'x') + s(b'split.count') + struct.pack('<IH', 2, 65535), 2))
n = 50_000
write('alternating.gguf', header(s(b'a') + struct.pack('<IIQ', 9, 0, n) + bytes(i & 1 for i in range(n)), 1))
# A tensor claiming 2^40 f32 values, its data past the end of the file.
t = s(b'big') + struct.pack('<I', 1) + struct.pack('<Q', 1 << 40) + struct.pack('<IQ', 0, 0)
write('tensor-past-eof.gguf', header(kv_str(b'general.architecture', b'llama'), 1, t, 1))
v1 = b'GGUF' + struct.pack('<III', 1, 0, 1) + struct.pack('<I', 1) + b'k' + struct.pack('<I', 4) + struct.pack('<I', 7)
write('v1.gguf', v1)
PY
# The model level: vocabularies, texts (NAME.txt beside NAME.gguf) and templates.
models="$work/models"
mkdir -p "$models"
python3 - "$models" <<'PY'
import json, os, struct, sys
d = sys.argv[1]
def s(b): return struct.pack('<Q', len(b)) + b
def val(v):
    if isinstance(v, bool): return struct.pack('<I?', 7, v)
    if isinstance(v, tuple) and isinstance(v[0], int): return struct.pack('<I', v[0]) + v[1]
    if isinstance(v, int): return struct.pack('<II', 4, v)
    if isinstance(v, str): v = v.encode()
    if isinstance(v, bytes): return struct.pack('<I', 8) + s(v)
    kind, items = v
    if kind == 'str': return struct.pack('<IIQ', 9, 8, len(items)) + b''.join(s(i) for i in items)
    if kind == 'f32': return struct.pack('<IIQ', 9, 6, len(items)) + struct.pack(f'<{len(items)}f', *items)
    if kind == 'i32': return struct.pack('<IIQ', 9, 5, len(items)) + struct.pack(f'<{len(items)}i', *items)
def gguf(name, kvs, text=None):
    body = b''.join(s(k.encode()) + val(v) for k, v in kvs.items())
    with open(os.path.join(d, name + '.gguf'), 'wb') as f:
        f.write(b'GGUF' + struct.pack('<IQQ', 3, 0, len(kvs)) + body)
    if text is not None:
        with open(os.path.join(d, name + '.txt'), 'wb') as f: f.write(text)
def vocab(model, tokens, types=None, pre=None, merges=None, extra={}):
    kv = {'general.architecture': 'llama', 'tokenizer.ggml.model': model,
          'tokenizer.ggml.tokens': ('str', tokens),
          'tokenizer.ggml.scores': ('f32', [-float(i) for i in range(len(tokens))]),
          'tokenizer.ggml.token_type': ('i32', types or [1] * len(tokens))}
    if pre: kv['tokenizer.ggml.pre'] = pre
    if merges is not None: kv['tokenizer.ggml.merges'] = ('str', merges)
    kv.update(extra)
    return kv
byte_tokens = [bytes([0xC4, 0x80 + i]) if i < 64 else b'<0x%02X>' % i for i in range(256)]
ascii = [bytes([c]) for c in range(33, 127)]
# 1. One BPE token of 30,000 x U+4E2D.
gguf('bpe-long-token', vocab('gpt2', ascii + ['\u4e2d'.encode() * 30000], merges=[]), '\u4e2d'.encode() * 1000)
# 2. 100k control tokens, and a text of them.
specials = [b'<c%d>' % i for i in range(100000)]
gguf('many-controls', vocab('gpt2', ascii + specials, [1] * len(ascii) + [3] * len(specials), merges=[]), b''.join(specials[::50]) * 20)
# 3. superbpe's look-ahead on 100,000 digits.
gguf('superbpe-digits', vocab('gpt2', ascii, pre='superbpe', merges=[]), b'7' * 100000)
# 4. A control token that overlaps itself, 100,000 long.
gguf('self-overlap', vocab('gpt2', ascii + [b'x' * 100000], [1] * len(ascii) + [3], merges=[]), b'x' * 300000)
# 5. WordPiece with one 100 KB word; Unigram with a 100,000-byte token; RWKV on 100 KB.
gguf('wpm-long-word', vocab('bert', [b'[PAD]', b'[UNK]', b'[CLS]', b'[SEP]'] + ascii + [b'##' + c for c in ascii]), b'a' * 100000)
gguf('ugm-long-token', vocab('t5', [b'<pad>', b'</s>', b'<unk>'] + ascii + [b'\xe2\x96\x81' + b'a' * 100000]), b'a' * 100000)
gguf('rwkv-long-text', vocab('rwkv', [b'\\x%02x' % i for i in range(256)] + [b'ab', b'abc']), b'abc' * 40000)
# 6. A large text (8 MB) on a small SentencePiece vocabulary.
gguf('spm-large-text', vocab('llama', [b'<unk>', b'<s>', b'</s>'] + [b'<0x%02X>' % i for i in range(256)] + [b'\xe2\x96\x81a', b'a'], [2, 3, 3] + [6] * 256 + [1, 1]), b'a a\n' * 2000000)
# 7-10. Templates: deep expressions, loops over large lists, values that grow, many names.
deep = "{{ " + "not " * 50000 + "1 }}"
templates = {
    'template-deep-not': deep,
    'template-deep-plus': "{{ " + "1+" * 50000 + "1 }}",
    'template-deep-attr': "{{ x" + ".a" * 50000 + " }}",
    'template-deep-filter': "{{ 'a'" + "|string" * 50000 + " }}",
    'template-sort-loop': "{% for i in range(100000) %}{{ (range(100000)|list|sort)[0] }}{% endfor %}",
    'template-replace-growth': "{% set ns = namespace(s='a') %}{% for i in range(64) %}{% set ns.s = ns.s|replace('a','aa') %}{% endfor %}{{ ns.s|length }}",
    'template-alternating': "{% set ns = namespace(a='x', b='y') %}{% for i in range(64) %}{% set ns.a = ns.b ~ ns.b %}{% set ns.b = ns.a %}{% endfor %}{{ ns.b|length }}",
    'template-macro-doubling': "{% macro d(x, n) %}{% if n > 0 %}{{ d(x ~ x, n - 1) }}{% else %}{{ x|length }}{% endif %}{% endmacro %}{{ d('ab', 60) }}",
    'template-format-width': "{{ '%1500000000s' % 'a' }}{{ '{:>1500000000}'.format('a') }}",
    'template-builtins': "{{ strftime_now('%c' * 50000000) }}{{ 'a'|indent(1000000000) }}{{ range(10)|slice(100000000)|list|length }}{{ ('a' * 99999999)|list|length }}",
}
for name, src in templates.items():
    gguf(name, vocab('gpt2', ascii, merges=[], extra={'tokenizer.chat_template': src}))
gguf('template-100-names', vocab('gpt2', ascii, merges=[], extra=dict(
    [('tokenizer.chat_templates', ('str', [b'n%d' % i for i in range(100)]))] +
    [('tokenizer.chat_template.n%d' % i, "{% for i in range(100000000) %}{{ i }}{% endfor %}") for i in range(100)])))
# 12. Hyperparameters of the wrong type (u64, u8) where llama.cpp reads u32.
gguf('wrong-key-types', {'general.architecture': 'llama', 'llama.context_length': (10, struct.pack('<Q', 2**64 - 1)),
    'llama.block_count': (10, struct.pack('<Q', 1)), 'llama.embedding_length': 8,
    'llama.attention.head_count': (0, struct.pack('<B', 2)), 'llama.feed_forward_length': 16,
    'llama.attention.layer_norm_rms_epsilon': (6, struct.pack('<f', 1e-5))})
json.dump([{"role": "system", "content": "s"}, {"role": "user", "content": "u" * 1000}], open(os.path.join(d, 'messages.json'), 'w'))
PY
ln -s /dev/zero "$inputs/zero-link.gguf"
ln -s loop-b.gguf "$inputs/loop-a.gguf"
ln -s loop-a.gguf "$inputs/loop-b.gguf"
mkdir "$inputs/folder.gguf"

# The commands; IN is the input, OUT a path in the run's own folder.
commands=(
    "dump IN" "dump --json IN" "dump --summary IN" "dump --format gguf-py IN"
    "check IN" "check --json IN" "check --schema --profile llama.cpp IN"
    "map IN" "map --json IN" "map IN --html OUT/page.html"
    "snapshot IN" "mutate --list IN" "mutate IN --rule duplicate-key -o OUT/m.gguf"
    "hash --all IN" "stats IN" "tensor IN output_norm.weight" "fit IN"
    "tokenize IN hello" "detokenize IN 1 2 3" "diff IN $inputs/minimal.gguf" "scan IN"
    "diff --json IN $inputs/minimal.gguf" "scan --jsonl IN" "template --json IN"
    "edit IN --set general.name=string:x -o OUT/e.gguf" "convert-endian IN big -o OUT/c.gguf"
    "split --split-max-tensors 1 IN OUT/s" "merge IN OUT/merged.gguf"
)
files=("$inputs"/* /dev/zero)
# The model level's commands, over its inputs; TXT is the input's text, MSG the messages.
model_commands=(
    "tokenize IN -f TXT" "tokenize --json IN -f TXT" "detokenize IN 1 2 3 4 5 6 7 8 9 10"
    "template --json IN" "template --render --messages MSG IN"
    "check --profile llama.cpp IN" "check --json --schema IN" "fit IN"
)
model_files=("$models"/*.gguf)

# One run: job number, command, input. Writes a line to its folder's `failure` on a failure.
run_one() {
    local n="$1" command="$2" input="$3" dir="$work/runs/$1"
    mkdir -p "$dir/out"
    local -a words args
    read -r -a words <<<"$command"
    local word
    for word in "${words[@]}"; do
        case "$word" in
            IN) args+=("$input") ;;
            TXT) args+=("${input%.gguf}.txt") ;;
            MSG) args+=("$models/messages.json") ;;
            *) args+=("${word//OUT/$dir/out}") ;;
        esac
    done
    local line="${args[*]}"
    local code=0
    # `ulimit -v` is prlimit's RLIMIT_AS without one more process per run.
    (cd "$dir/out" && ulimit -v $((1024 << 10)) && exec timeout 20 "$gguf" $max_header_flag "${args[@]}" \
        </dev/null >"$dir/stdout" 2>"$dir/stderr") || code=$?
    local why=""
    case "$code" in
        0 | 1 | 2) ;;
        3 | 4 | 5) [[ "$command" == hash* ]] || why="exit $code" ;;
        124) why="timed out" ;;
        *) why="exit $code" ;;
    esac
    grep -q "panicked" "$dir/stderr" && why="$why panicked"
    # Memory the limit refused, even when the command reports it and exits 2.
    grep -qiE "out of memory|memory allocation of" "$dir/stderr" && why="$why out-of-memory"
    # C0 but tab and newline, DEL, C1 (as UTF-8); then bidi controls and separators.
    local controls=$'[\x01-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]' bidi=$'\xe2\x80[\xa8-\xae]|\xe2\x81[\xa6-\xa9]|\xd8\x9c|\xe2\x80[\x8e\x8f]'
    LC_ALL=C grep -qaE "$controls|$bidi" "$dir/stderr" && why="$why raw-control-on-stderr"
    case "$command" in
        *--json* | *"-o OUT"* | *--html* | "dump --format"*) ;;
        # Data, not messages: raw off a terminal, as documented.
        "tensor"* | "detokenize"*) ;;
        *) LC_ALL=C grep -qaE "$controls|$bidi" "$dir/stdout" && why="$why raw-control-on-stdout" ;;
    esac
    # JSON allows C1, bidi and separators raw; our JSON escapes them as it escapes C0 and DEL.
    if [[ "$command" == *--json* ]]; then
        LC_ALL=C grep -qaE "$controls|$bidi" "$dir/stdout" && why="$why raw-control-in-json"
    fi
    if [[ -n "$why" ]]; then
        printf '%s: gguf %s\n  %s\n' "$why" "$line" "$(head -c 300 "$dir/stderr" | LC_ALL=C tr -c '[:print:]\n' '?')" >"$dir/failure"
    fi
    rm -f "$dir/stdout"
}
export -f run_one
export gguf work models

# A 16 MiB header cap keeps the runs cheap (the 256 MiB default is tested in
# crates/gguf-cli/tests/hostile_bounds.rs); a binary from before the flag runs without it.
max_header=()
"$gguf" --help | grep -q -- --max-header && max_header=(--max-header 16777216)
export max_header_flag="${max_header[*]}"

touch "$work/stamp"
# Inputs identified by size and modification time (the sparse file is not read through).
sums_before="$(find "$inputs" -printf '%p %s %T@\n' | sort)"
start=$(date +%s%N)
{
    for command in "${commands[@]}"; do
        for f in "${files[@]}"; do
            printf '%s\0%s\0%s\0' "$((i = ${i:-0} + 1))" "$command" "$f"
        done
    done
    for command in "${model_commands[@]}"; do
        for f in "${model_files[@]}"; do
            [[ "$command" == *TXT* && ! -e "${f%.gguf}.txt" ]] && continue
            printf '%s\0%s\0%s\0' "$((i = ${i:-0} + 1))" "$command" "$f"
        done
    done
} | xargs -0 -n 3 -P "$(nproc)" bash -c 'run_one "$@"' _
elapsed_ms=$((($(date +%s%N) - start) / 1000000))

failures=0
for f in "$work"/runs/*/failure; do
    [[ -e "$f" ]] || continue
    cat "$f" >&2
    failures=$((failures + 1))
done
# Nothing written outside the runs' own folders; the inputs unchanged.
touched="$(find "$work" "$root/tests" -newer "$work/stamp" -not -path "$work/runs/*" -not -path "$work/runs" -type f 2>/dev/null || true)"
if [[ -n "$touched" ]]; then
    echo "hostile-sweep: written outside the output folders:" >&2
    echo "$touched" >&2
    failures=$((failures + 1))
fi
sums_after="$(find "$inputs" -printf '%p %s %T@\n' | sort)"
if [[ "$sums_before" != "$sums_after" ]]; then
    echo "hostile-sweep: an input changed" >&2
    failures=$((failures + 1))
fi
runs="$(find "$work/runs" -mindepth 1 -maxdepth 1 -type d | wc -l)"
printf 'hostile-sweep: %d runs (%d commands x %d inputs; %d model-level commands x %d models) in %d.%03d s, %d failed\n' \
    "$runs" "${#commands[@]}" "${#files[@]}" "${#model_commands[@]}" "${#model_files[@]}" \
    $((elapsed_ms / 1000)) $((elapsed_ms % 1000)) "$failures" >&2
[[ "$failures" == 0 ]]
