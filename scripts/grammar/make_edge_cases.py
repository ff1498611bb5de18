#!/usr/bin/env python3
"""Write small GGUF files for corners that neither the real corpus nor the conformance corpus
reaches, for scripts/grammar-check.sh to run the grammar over.

Usage: make_edge_cases.py OUT_DIR

Each file is named for what it exercises. `*-reject.gguf` files must be rejected by both the
Rust parser and the grammar; the others must be read identically.
"""

import os
import struct
import sys

from reencode import Writer  # same directory

U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)


def gguf(version, endian, kvs, tensors=(), data=b"", alignment=32):
    """kvs: [(key bytes, type, value)], values as reencode.Writer takes them;
    tensors: [(name, dims, ggml type, offset)]; data: the tensor data after the padding."""
    w = Writer(version, endian)
    w.header(kvs, tensors)
    end = w.size
    w.put(b"\0" * ((alignment - w.size % alignment) % alignment))
    w.put(data)
    return b"".join(w.parts), end


def nested(depth):
    """An array value nested `depth` arrays deep, the innermost holding one u32."""
    v = (U32, [7])
    for _ in range(depth - 1):
        v = (ARR, [v])
    return v


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    files = {}

    # 256 nested arrays are allowed, 257 are not (the array at depth 256 is refused).
    files["nest-256"] = gguf(3, "little", [(b"test.deep", ARR, nested(256))])[0]
    files["nest-257-reject"] = gguf(3, "little", [(b"test.deep", ARR, nested(257))])[0]

    # The end of the tensor infos falls exactly on the alignment: no padding at all.
    for pad in range(64):
        data, end = gguf(3, "little", [(b"test.pad", STR, b"x" * pad)],
                         [(b"w", [8], 0, 0)], b"\0" * 32)
        if end % 32 == 0:
            files["infos-end-aligned"] = data
            break

    # general.alignment twice: the first one counts.
    files["alignment-duplicate"] = gguf(
        3, "little",
        [(b"general.alignment", U32, 64), (b"general.alignment", U32, 8)],
        [(b"w", [8], 0, 0)], b"\0" * 32, alignment=64)[0]
    # The first general.alignment is a u64: ignored (32), even though a u32 one follows.
    files["alignment-first-not-u32"] = gguf(
        3, "little",
        [(b"general.alignment", U64, 16), (b"general.alignment", U32, 64)],
        [(b"w", [8], 0, 0)], b"\0" * 32)[0]

    # Every value type, arrays of every type, nested arrays with strings that are not UTF-8,
    # NaN payloads and signed zeros, 64-bit extremes; v1 and v2, both byte orders, with tensors.
    every = [
        (b"u8", U8, 255), (b"i8", I8, -128), (b"u16", U16, 65535), (b"i16", I16, -32768),
        (b"u32", U32, 2**32 - 1), (b"i32", I32, -(2**31)), (b"f32", F32, -0.0),
        (b"bool", BOOL, 1), (b"str", STR, "grüße 🦙".encode()), (b"u64", U64, 2**64 - 1),
        (b"i64", I64, -(2**63)), (b"f64", F64, 5e-324),
        (b"arr.u8", ARR, (U8, [0, 1, 255])), (b"arr.i8", ARR, (I8, [-1, 127])),
        (b"arr.u16", ARR, (U16, [1, 65535])), (b"arr.i16", ARR, (I16, [-2, 300])),
        (b"arr.u32", ARR, (U32, [3, 2**32 - 1])), (b"arr.i32", ARR, (I32, [-3, 2**31 - 1])),
        (b"arr.f32", ARR, (F32, [float("nan"), float("-inf"), -0.0, 0.1])),
        (b"arr.bool", ARR, (BOOL, [0, 1, 0])),
        (b"arr.str", ARR, (STR, [b"", b"ok", b"\xff\xfe", b"\xed\xa0\x80"])),
        (b"arr.u64", ARR, (U64, [2**53 + 1, 2**64 - 1])),
        (b"arr.i64", ARR, (I64, [-(2**53) - 1, 2**63 - 1])),
        (b"arr.f64", ARR, (F64, [float("inf"), -0.0, 1e308])),
        (b"arr.arr", ARR, (ARR, [(STR, [b"a", b"\xc3("]), (ARR, [(I8, [-5])]), (U64, [])])),
        (b"arr.empty", ARR, (STR, [])),
        (b"\xffkey", U8, 1),
    ]
    for version in (1, 2, 3):
        big_dim = 2**32 - 1 if version == 1 else 2**40  # v1 dims are u32
        tensors = [(b"a", [4, 2], 0, 0), (b"\xc3(", [32], 8, 32), (b"c", [big_dim, 0], 1, 96)]
        for endian in ("little", "big"):
            files[f"every-type-v{version}-{endian}"] = gguf(
                version, endian, every, tensors, b"\0" * 128)[0]

    # A string length past 32 bits whose low 32 bits fit the file: a runtime that narrows
    # lengths to 32 bits reads a short, valid-looking string (kaitai-struct 0.11's JavaScript
    # did: 2^32+1 read as 1); one past 2^31 it could not map at all ("Invalid typed array
    # length"). gguf, ggml and gguf-py reject all of them: the bytes are not there.
    def head(n_tensors, n_kvs):
        return b"GGUF" + struct.pack("<IQQ", 3, n_tensors, n_kvs)
    kv_u8 = b"k" + struct.pack("<I", U8) + b"\x01"
    for length, tag in ((2**32 + 1, "2p32"), (3 * 10**9, "3e9")):
        files[f"key-len-{tag}-reject"] = head(0, 1) + struct.pack("<Q", length) + kv_u8
        files[f"value-len-{tag}-reject"] = (
            head(0, 1) + struct.pack("<Q", 1) + b"v" + struct.pack("<IQ", STR, length) + b"x" * 8)
        files[f"tensor-name-len-{tag}-reject"] = (
            head(1, 0) + struct.pack("<Q", length) + b"t" + struct.pack("<IQIQ", 1, 32, 0, 0)
            + b"\0" * 31 + b"\0" * 128)

    for name, data in files.items():
        with open(os.path.join(out, name + ".gguf"), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
