#!/usr/bin/env python3
"""Rewrite a GGUF file's header in another version's widths and/or byte order.

Usage: reencode.py IN OUT --version {1,2,3} --endian {little,big}

Makes test inputs that no converter writes: gguf-py writes v3 only and converts byte order with
gguf-convert-endian, but nothing writes v1 (u32 counts, string and array lengths and dims). This
reads IN (any version, either byte order, detected as gguf-py does), and writes OUT with every
count, length and dim in the new version's width and every number in the new byte order; keys,
values, tensor infos and their order are unchanged. Tensor data is copied byte for byte after the
new header, padded to the same alignment, so relative tensor offsets stay valid. Changing the
byte order of a file that has tensors is refused: their data would need swapping per ggml type.

Standalone (stdlib only) and deliberately independent of grammar/gguf.ksy, which the outputs
are used to test.
"""

import argparse
import struct
import sys

SCALAR = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "B", 10: "Q", 11: "q", 12: "d"}


class Reader:
    def __init__(self, data):
        self.d = data
        self.pos = 0
        if data[:4] != b"GGUF":
            raise ValueError("not a GGUF file")
        le_version = struct.unpack_from("<I", data, 4)[0]
        self.e = ">" if le_version & 0xFFFF == 0 else "<"
        self.pos = 4
        self.version = self.num("I")
        if self.version not in (1, 2, 3):
            raise ValueError(f"version {self.version}")
        self.count_fmt = "I" if self.version == 1 else "Q"

    def num(self, fmt):
        v = struct.unpack_from(self.e + fmt, self.d, self.pos)[0]
        self.pos += struct.calcsize(fmt)
        return v

    def raw(self, n):
        if self.pos + n > len(self.d):
            raise ValueError("truncated")
        b = self.d[self.pos:self.pos + n]
        self.pos += n
        return b

    def count(self):
        return self.num(self.count_fmt)

    def string(self):
        return self.raw(self.count())

    def value(self, t):
        if t in SCALAR:
            return self.num(SCALAR[t])
        if t == 8:
            return self.string()
        if t == 9:
            et = self.num("I")
            n = self.count()
            return (et, [self.value(et) for _ in range(n)])
        raise ValueError(f"value type {t}")


class Writer:
    def __init__(self, version, endian):
        self.e = ">" if endian == "big" else "<"
        self.count_fmt = "I" if version == 1 else "Q"
        self.parts = [b"GGUF", struct.pack(self.e + "I", version)]
        self.size = 8

    def put(self, b):
        self.parts.append(b)
        self.size += len(b)

    def num(self, fmt, v):
        self.put(struct.pack(self.e + fmt, v))

    def count(self, n):
        self.num(self.count_fmt, n)

    def string(self, b):
        self.count(len(b))
        self.put(b)

    def value(self, t, v):
        if t in SCALAR:
            self.num(SCALAR[t], v)
        elif t == 8:
            self.string(v)
        else:
            et, items = v
            self.num("I", et)
            self.count(len(items))
            if et in SCALAR:
                self.put(struct.pack(self.e + SCALAR[et] * len(items), *items))
            else:
                for x in items:
                    self.value(et, x)

    def header(self, kvs, tensors):
        """Counts, kvs [(key, type, value)] and tensor infos [(name, dims, ggml type, offset)]."""
        self.count(len(tensors))
        self.count(len(kvs))
        for key, t, v in kvs:
            self.string(key)
            self.num("I", t)
            self.value(t, v)
        for name, dims, ggml_type, offset in tensors:
            self.string(name)
            self.num("I", len(dims))
            for d in dims:
                self.count(d)
            self.num("I", ggml_type)
            self.num("Q", offset)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--version", type=int, choices=(1, 2, 3), required=True)
    ap.add_argument("--endian", choices=("little", "big"), required=True)
    a = ap.parse_args()

    with open(a.input, "rb") as f:
        data = f.read()
    r = Reader(data)
    n_tensors = r.count()
    n_kv = r.count()
    kvs = []
    alignment = 32
    for _ in range(n_kv):
        key = r.string()
        t = r.num("I")
        v = r.value(t)
        kvs.append((key, t, v))
        if key == b"general.alignment" and t == 4 and v > 0 and alignment == 32:
            alignment = v
    infos = []
    for _ in range(n_tensors):
        name = r.string()
        n_dims = r.num("I")
        dims = [r.count() for _ in range(n_dims)]
        infos.append((name, dims, r.num("I"), r.num("Q")))
    old_data_start = r.pos + (alignment - r.pos % alignment) % alignment

    out_e = ">" if a.endian == "big" else "<"
    if infos and out_e != r.e:
        sys.exit("reencode.py: refusing to change the byte order of a file with tensors")

    w = Writer(a.version, a.endian)
    w.header(kvs, infos)
    tail = data[old_data_start:] if old_data_start <= len(data) else b""
    if tail or infos:
        w.put(b"\0" * ((alignment - w.size % alignment) % alignment))
        w.put(tail)
    with open(a.output, "wb") as f:
        f.write(b"".join(w.parts))


if __name__ == "__main__":
    main()
