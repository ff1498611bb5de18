#!/usr/bin/env python3
"""Compare the spans of `gguf map --json FILE` with gguf-py's reader (GGUFReader).

Usage: check-map.py GGUF_BIN FILE...

gguf-py records, for every header field, key/value and tensor info, its absolute offset and
the numpy arrays ("parts") it read in order. For each file this checks that the map's rows
match them: the header fields, each kv (offset, length, the key's and type tag's offsets, the
key text), each string value and each string-array element (offset, length, text), each
tensor info (offset, length, name, every dim's offset) and the start of the tensor data.
Prints one line per difference and `N passed, M failed`; exits 1 when M > 0.
"""

import json
import subprocess
import sys

from gguf import GGUFReader


def map_rows(gguf_bin, path):
    out = subprocess.run([gguf_bin, "map", "--json", path], check=True, capture_output=True)
    lines = out.stdout.decode().split("\n")  # not splitlines(): U+2028 may occur in a string
    return {row["path"]: row for row in map(json.loads, filter(None, lines))}


def check(gguf_bin, path):
    rows = map_rows(gguf_bin, path)
    reader = GGUFReader(path)
    problems = []

    def expect(row_path, offset, length=None, value=None):
        row = rows.get(row_path)
        if row is None:
            problems.append(f"no row {row_path}")
            return
        got = (row["offset"], row["length"] if length is not None else None,
               row["value"] if value is not None else None)
        want = (offset, length, value)
        if got != want:
            problems.append(f"{row_path}: map {got}, gguf-py {want}")

    def quoted(name):
        return '"' + name.replace('"', '\\"') + '"'

    kv_index = 0
    for field in reader.fields.values():
        starts = [field.offset]
        for part in field.parts:
            starts.append(starts[-1] + part.nbytes)
        if field.name.startswith("GGUF."):
            expect("header." + field.name[5:], field.offset, field.parts[0].nbytes)
            continue
        base = f"kv[{kv_index}] {quoted(field.name)}"
        kv_index += 1
        expect(base, field.offset, starts[-1] - field.offset)
        expect(base + ".key", starts[1], field.parts[1].nbytes, field.name)
        expect(base + ".type", starts[2], 4)
        kind = int(field.parts[2][0])
        if kind == 8:  # string
            text = bytes(field.parts[4]).decode("utf-8")
            expect(base + ".value", starts[4], field.parts[4].nbytes, text)
        elif kind == 9:  # array
            expect(base + ".len", starts[4], field.parts[4].nbytes)
            if int(field.parts[3][0]) == 8:  # of strings: parts are len, bytes per element
                for i in range(0, len(field.parts) - 5, 2):
                    n = i // 2
                    if n % 997 and n > 16:  # every element is slow on big vocabularies
                        continue
                    text = bytes(field.parts[6 + i]).decode("utf-8")
                    length = field.parts[5 + i].nbytes + field.parts[6 + i].nbytes
                    expect(f"{base}[{n}]", starts[5 + i], length, text)
        else:
            expect(base + ".value", starts[3], field.parts[3].nbytes)

    for index, tensor in enumerate(reader.tensors):
        field = tensor.field
        starts = [field.offset]
        for part in field.parts:
            starts.append(starts[-1] + part.nbytes)
        base = f"tensor[{index}] {quoted(tensor.name)}"
        expect(base, field.offset, starts[-1] - field.offset)
        expect(base + ".name", starts[1], field.parts[1].nbytes, tensor.name)
        for d in range(len(field.parts[3])):
            expect(f"{base}.dims[{d}]", starts[3] + d * field.parts[3].itemsize, field.parts[3].itemsize)
        expect(base + ".offset", starts[5], 8)
    expect("tensor_data", reader.data_offset)
    return problems


def main():
    gguf_bin, files = sys.argv[1], sys.argv[2:]
    failed = 0
    for path in files:
        problems = check(gguf_bin, path)
        if problems:
            failed += 1
            print(f"FAIL {path}: {len(problems)} differences", *problems[:20], sep="\n  ")
    print(f"{len(files) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
