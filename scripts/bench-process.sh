#!/usr/bin/env bash
# Whole-process timings for benches/README.md: `gguf check` and `gguf dump --json >/dev/null`
# beside a bare C walk of the same header (benches/floor.c), each run as a fresh process.
#
# Usage: scripts/bench-process.sh [RUNS] [BASELINE]   (default 40 runs per command and file)
#
# BASELINE: another build of gguf (an older commit's target/release/gguf, say), timed in the
# same rounds as this one, so that a slip shows side by side in one run (a busy machine
# slows both alike). The startup cost comes first: `gguf --version` beside /bin/true.
#
# Files: the Llama 3 tokenizer (tests/corpus), a gemma3-style 262,144-token vocabulary
# written with gguf-py (as crates/gguf-tools/benches/decode.rs builds it), and SmolLM2-135M
# (scripts/fetch-models.sh). Prints one table row per file and command: the median wall time
# of RUNS runs and its ratio to the C walk's median (the walk maps the file; `floor-read`, floor.c built with -DREAD_INTO_MEMORY,
# copies the header into memory as gguf does: the floor for a reader that maps nothing); then,
# when valgrind is installed, the instructions each process executes (callgrind), which a busy
# machine does not disturb. Needs cc, the venv (scripts/venv.sh) and a release build, which
# it makes. Not part of the test suite: timings are not assertions.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
fi
runs="${1:-40}"
baseline="${2:-}"

out=target/bench
mkdir -p "$out"
cc -O2 -Wall -Wextra -o "$out/floor" benches/floor.c
cc -O2 -Wall -Wextra -DREAD_INTO_MEMORY -o "$out/floor-read" benches/floor.c
cargo build --release --quiet --bin gguf
source scripts/venv.sh
python="$GGUF_PYTHON"
smollm2="$(bash scripts/fetch-models.sh)"

vocab="$out/vocab-262k.gguf"
if [[ ! -f "$vocab" ]]; then
    "$python" - "$vocab" <<'PY'
import sys
import numpy as np
from gguf import GGUFWriter

n = 262_144
def token(i):
    return [f"\u2581tok{i}", f"piece{i}", f"{chr(0x4e00 + i % 20000)}{i % 97}", f"<0x{i % 256:02X}>"][i % 4]

w = GGUFWriter(sys.argv[1], "gemma3")
w.add_string("tokenizer.ggml.model", "llama")
w.add_array("tokenizer.ggml.tokens", [token(i) for i in range(n)])
w.add_array("tokenizer.ggml.scores", (-np.arange(n, dtype=np.float32) / 7).tolist())
w.add_array("tokenizer.ggml.token_type", [i % 6 for i in range(n)])
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
PY
fi

"$python" - "$runs" "$out/floor" target/release/gguf "$baseline" \
    tests/corpus/ggml-vocab-llama-bpe.gguf "$vocab" "$smollm2" <<'PY'
import os, statistics, subprocess, sys, time

runs, floor, gguf, baseline, files = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
devnull = open(os.devnull, "wb")

def wall_ms(argv):
    start = time.perf_counter()
    code = subprocess.run(argv, stdout=devnull).returncode
    if code not in (0, 1):
        sys.exit(f"{argv} exited {code}")
    return (time.perf_counter() - start) * 1000

def builds(label, args):
    """The command for this build and, when given, the baseline's, side by side."""
    rows = [(label, [gguf] + args)]
    if baseline:
        rows.append((f"{label} (baseline)", [baseline] + args))
    return rows

print(f"| file | command | median of {runs} | best | × C walk (median) | × C walk (best) |")
print("|---|---|---:|---:|---:|---:|")
for path in [None] + files:
    name = os.path.basename(path) if path else "(none)"
    if path is None:
        # Startup alone: what every command pays before it reads a byte.
        commands = [("/bin/true", ["/bin/true"])] + builds("gguf --version", ["--version"])
    else:
        commands = [
            ("C walk (benches/floor.c)", [floor, path]),
            ("C walk reading, not mapping (floor-read)", [floor + "-read", path]),
            *builds("gguf check", ["check", path]),
            *builds("gguf dump --json", ["dump", "--json", path]),
            *builds("gguf dump", ["dump", path]),
        ]
    for _, argv in commands:
        wall_ms(argv)  # warm the page cache
    # Round-robin, so that a busy machine slows every command alike.
    times = {label: [] for label, _ in commands}
    for _ in range(runs):
        for label, argv in commands:
            times[label].append(wall_ms(argv))
    base = statistics.median(times[commands[0][0]])
    base_best = min(times[commands[0][0]])
    for label, _ in commands:
        t, best = statistics.median(times[label]), min(times[label])
        print(
            f"| {name} | {label} | {t:.2f} ms | {best:.2f} ms | {t / base:.2f} | {best / base_best:.2f} |",
            flush=True,
        )
PY

if ! command -v valgrind >/dev/null; then
    echo "valgrind not installed: instruction counts skipped" >&2
    exit 0
fi
echo
echo "| file | command | instructions (callgrind) | × C walk |"
echo "|---|---|---:|---:|"
instructions() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
for path in tests/corpus/ggml-vocab-llama-bpe.gguf "$vocab" "$smollm2"; do
    base="$(instructions "$out/floor" "$path")"
    for command in "$out/floor" "$out/floor-read" "target/release/gguf check" "target/release/gguf dump --json" "target/release/gguf dump"; do
        # shellcheck disable=SC2086 # the command is words
        n="$(instructions $command "$path")"
        printf '| %s | %s | %s | %s |\n' "$(basename "$path")" "${command#target/release/}" "$n" \
            "$(awk -v n="$n" -v b="$base" 'BEGIN { printf "%.2f", n / b }')"
    done
done
