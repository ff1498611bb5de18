#!/usr/bin/env python3
"""Deep-compare two GGUF documents in gguf-grammar's native JSON (`gguf dump --json`).

Usage: compare_native.py [--max N] [--summary] A.json B.json

Compares every top-level field, the metadata list in order (key, type, element_type, len, value,
nested arrays recursively) and the tensor list in order (name, dims, type, type_id, offset,
data_offset, n_bytes), and any field that only one side has. Rules:

- float32 values are compared as float32: each side is rounded to float32 (struct pack) and the
  bit patterns must match, so 1e-05 and 9.999999747378752e-06 are equal but 0.0 and -0.0 are
  not; float64 values are compared bit for bit. NaN equals NaN. Non-finite values must be the
  strings "nan", "inf", "-inf" (bare NaN/Infinity is not JSON and is refused).
- integers must be JSON integers (not booleans, not 1.0), booleans must be booleans.
- strings compare exactly; a string that is not UTF-8 is {"bytes_hex": "..."}.
- a tensor's `type` compares case-insensitively; its `n_bytes` may differ by exactly gguf-py's
  q8_1 block size (40 bytes per 32 elements where ggml has 36) when type_id is 9.
- each array's `len` must also match the length of its own `value` list.

Prints each difference as a path, e.g.
  metadata[27] tokenizer.ggml.tokens value[40213]: 'abc' != 'abd'
at most --max of them (default 20), then the total when more were found. With --summary it
prints a single line instead: "N differences; first: <path>: ...". Prints nothing when the
documents are equal.

Exit status: 0 equal, 1 different, 2 a file could not be read or is not JSON.
"""

from __future__ import annotations

import argparse
import json
import math
import struct
import sys
from typing import Any

INT_TYPES = {"uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64"}
FLOAT_TYPES = {"float32", "float64"}
NONFINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
Q8_1 = 9


class Diffs:
    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.lines: list[str] = []
        self.count = 0

    def add(self, path: str, msg: str) -> None:
        self.count += 1
        if len(self.lines) < self.keep:
            self.lines.append(f"{path}: {msg}" if path else msg)


def show(v: Any, limit: int = 80) -> str:
    if isinstance(v, str):
        s = repr(v)
    else:
        s = json.dumps(v, ensure_ascii=False)
    return s if len(s) <= limit else s[:limit - 3] + "..."


def join(path: str, part: str) -> str:
    """'metadata[3] some.key' + 'value' -> 'metadata[3] some.key value';
    'metadata[3] some.key value[1]' + 'len' -> '... value[1].len'."""
    if not path:
        return part
    if part.startswith("["):
        return path + part
    return path + ("." if path.endswith("]") else " ") + part


def presence(d: Diffs, path: str, a: dict[str, Any], b: dict[str, Any], k: str) -> None:
    """Report field k that one side lacks."""
    if k in a and k not in b:
        d.add(join(path, k), f"only in A: {show(a[k])}")
    elif k in b and k not in a:
        d.add(join(path, k), f"only in B: {show(b[k])}")
    elif k not in a and k not in b:
        d.add(join(path, k), "missing in both")


def is_int(v: Any) -> bool:
    return type(v) is int


def as_float(v: Any) -> float | None:
    """A JSON float value as a Python float; None when it is not one."""
    if isinstance(v, str):
        return NONFINITE.get(v)
    if type(v) in (int, float):
        return float(v)
    return None


def float_bits(x: float, f32: bool) -> bytes:
    if f32:
        try:
            return struct.pack("<f", x)
        except OverflowError:  # out of float32 range: compare as float64 then
            pass
    return struct.pack("<d", x)


def floats_equal(a: Any, b: Any, f32: bool) -> bool | None:
    """True/False, or None when a side is not a valid float value."""
    fa, fb = as_float(a), as_float(b)
    if fa is None or fb is None:
        return None
    if math.isnan(fa) or math.isnan(fb):
        return math.isnan(fa) and math.isnan(fb)
    return float_bits(fa, f32) == float_bits(fb, f32)


def valid_string(v: Any) -> bool:
    return isinstance(v, str) or (
        isinstance(v, dict) and set(v) == {"bytes_hex"} and isinstance(v["bytes_hex"], str))


def compare_scalar(d: Diffs, path: str, vtype: str, a: Any, b: Any) -> None:
    if vtype in FLOAT_TYPES:
        eq = floats_equal(a, b, vtype == "float32")
        if eq is None:
            d.add(path, f"{show(a)} != {show(b)} (not a {vtype} value)")
        elif not eq:
            d.add(path, f"{show(a)} != {show(b)}")
    elif vtype in INT_TYPES:
        if not (is_int(a) and is_int(b)):
            d.add(path, f"{show(a)} != {show(b)} (not both integers)")
        elif a != b:
            d.add(path, f"{show(a)} != {show(b)}")
    elif vtype == "bool":
        if not (type(a) is bool and type(b) is bool):
            d.add(path, f"{show(a)} != {show(b)} (not both booleans)")
        elif a != b:
            d.add(path, f"{show(a)} != {show(b)}")
    elif vtype == "string":
        if not (valid_string(a) and valid_string(b)):
            d.add(path, f"{show(a)} != {show(b)} (not both strings)")
        elif a != b:
            d.add(path, f"{show(a)} != {show(b)}")
    else:
        if a != b or type(a) is not type(b):
            d.add(path, f"{show(a)} != {show(b)} (unknown type {vtype!r})")


def compare_values(d: Diffs, path: str, etype: str, a: list[Any], b: list[Any]) -> None:
    """Two equally typed value lists, element by element (fast path for equal lists)."""
    if etype in INT_TYPES or etype == "string" or etype == "bool":
        # List equality runs in C; it misses only True == 1 style confusions, checked next.
        if a == b:
            want = int if etype in INT_TYPES else bool if etype == "bool" else None
            if want is not None:
                if set(map(type, a)) <= {want} and set(map(type, b)) <= {want}:
                    return
            elif all(isinstance(x, str) for x in a) or all(valid_string(x) for x in a):
                return
    for i, (x, y) in enumerate(zip(a, b)):
        p = f"{path}[{i}]"
        if etype == "array":
            compare_array(d, p, x, y, nested=True)
        else:
            compare_scalar(d, p, etype, x, y)
    if len(a) != len(b):
        d.add(path, f"{len(a)} != {len(b)} elements")


def check_len(d: Diffs, path: str, side: str, obj: dict[str, Any]) -> None:
    n, v = obj.get("len"), obj.get("value")
    if isinstance(v, list) and n != len(v):
        d.add(path, f"{side}: len is {show(n)} but value has {len(v)} elements")


def compare_array(d: Diffs, path: str, a: Any, b: Any, nested: bool) -> None:
    """Array objects: {"element_type", "len", "value"} (plus "key"/"type" at the top level)."""
    if not (isinstance(a, dict) and isinstance(b, dict)):
        d.add(path, f"{show(a)} != {show(b)} (not both array objects)")
        return
    fields = ["element_type", "len", "value"]
    extra = sorted((set(a) | set(b)) - set(fields) - ({"key", "type"} if not nested else set()))
    for k in extra:
        if k not in a or k not in b:
            presence(d, path, a, b, k)
        elif a[k] != b[k]:
            d.add(join(path, k), f"{show(a[k])} != {show(b[k])}")
    for k in fields:
        if k not in a or k not in b:
            presence(d, path, a, b, k)
    ea, eb = a.get("element_type"), b.get("element_type")
    if ea != eb:
        d.add(join(path, "element_type"), f"{show(ea)} != {show(eb)}")
        return
    if "len" in a and "len" in b and not (is_int(a["len"]) and is_int(b["len"]) and a["len"] == b["len"]):
        d.add(join(path, "len"), f"{show(a['len'])} != {show(b['len'])}")
    check_len(d, path, "A", a)
    check_len(d, path, "B", b)
    va, vb = a.get("value"), b.get("value")
    if not (isinstance(va, list) and isinstance(vb, list)):
        if "value" in a and "value" in b:
            d.add(join(path, "value"), f"{show(va)} != {show(vb)} (not both lists)")
        return
    compare_values(d, join(path, "value"), str(ea), va, vb)


def compare_metadata(d: Diffs, a: Any, b: Any) -> None:
    if not (isinstance(a, list) and isinstance(b, list)):
        d.add("metadata", f"{show(a)} != {show(b)} (not both lists)")
        return
    for i, (x, y) in enumerate(zip(a, b)):
        if not (isinstance(x, dict) and isinstance(y, dict)):
            d.add(f"metadata[{i}]", f"{show(x)} != {show(y)}")
            continue
        key = x.get("key")
        path = f"metadata[{i}] {key}" if isinstance(key, str) else f"metadata[{i}]"
        for k in ("key", "type"):
            if k not in x or k not in y:
                presence(d, path, x, y, k)
            elif x[k] != y[k] or not isinstance(x[k], str):
                d.add(join(path, k), f"{show(x[k])} != {show(y[k])}")
        ta, tb = x.get("type"), y.get("type")
        if ta != tb:
            continue
        if ta == "array":
            compare_array(d, path, x, y, nested=False)
            continue
        for k in sorted((set(x) | set(y)) - {"key", "type", "value"}):
            if k not in x or k not in y:
                presence(d, path, x, y, k)
            elif x[k] != y[k]:
                d.add(join(path, k), f"{show(x[k])} != {show(y[k])}")
        if "value" not in x or "value" not in y:
            presence(d, path, x, y, "value")
            continue
        compare_scalar(d, join(path, "value"), str(ta), x["value"], y["value"])
    if len(a) != len(b):
        d.add("metadata", f"{len(a)} != {len(b)} entries")
        longer, side = (a, "A") if len(a) > len(b) else (b, "B")
        for i in range(min(len(a), len(b)), len(longer)):
            item = longer[i]
            key = item.get("key") if isinstance(item, dict) else None
            d.add(f"metadata[{i}]", f"only in {side}: {show(key)}")


def q8_1_sizes_ok(t: dict[str, Any], na: Any, nb: Any) -> bool:
    dims = t.get("dims")
    if not (is_int(na) and is_int(nb) and isinstance(dims, list) and all(is_int(x) for x in dims)):
        return False
    n = math.prod(dims)
    if n % 32:
        return False
    return {na, nb} == {n // 32 * 36, n // 32 * 40}


TENSOR_FIELDS = ["name", "dims", "type", "type_id", "offset", "data_offset", "n_bytes"]


def compare_tensors(d: Diffs, a: Any, b: Any) -> None:
    if not (isinstance(a, list) and isinstance(b, list)):
        d.add("tensors", f"{show(a)} != {show(b)} (not both lists)")
        return
    for i, (x, y) in enumerate(zip(a, b)):
        if not (isinstance(x, dict) and isinstance(y, dict)):
            d.add(f"tensors[{i}]", f"{show(x)} != {show(y)}")
            continue
        name = x.get("name")
        path = f"tensors[{i}] {name}" if isinstance(name, str) else f"tensors[{i}]"
        for k in TENSOR_FIELDS + sorted((set(x) | set(y)) - set(TENSOR_FIELDS)):
            if k not in x or k not in y:
                presence(d, path, x, y, k)
                continue
            va, vb = x[k], y[k]
            if k == "type":
                if not (isinstance(va, str) and isinstance(vb, str) and va.lower() == vb.lower()):
                    d.add(join(path, k), f"{show(va)} != {show(vb)}")
            elif k == "name":
                if not (valid_string(va) and valid_string(vb) and va == vb):
                    d.add(join(path, k), f"{show(va)} != {show(vb)}")
            elif k == "dims":
                if not (isinstance(va, list) and isinstance(vb, list) and va == vb
                        and all(is_int(v) for v in va + vb)):
                    d.add(join(path, k), f"{show(va)} != {show(vb)}")
            elif k in ("type_id", "offset", "data_offset", "n_bytes"):
                if not (is_int(va) and is_int(vb) and va == vb):
                    if k == "n_bytes" and x.get("type_id") == Q8_1 and y.get("type_id") == Q8_1 \
                            and q8_1_sizes_ok(x, va, vb):
                        continue
                    d.add(join(path, k), f"{show(va)} != {show(vb)}")
            elif va != vb:
                d.add(join(path, k), f"{show(va)} != {show(vb)}")
    if len(a) != len(b):
        d.add("tensors", f"{len(a)} != {len(b)} tensors")
        longer, side = (a, "A") if len(a) > len(b) else (b, "B")
        for i in range(min(len(a), len(b)), len(longer)):
            item = longer[i]
            name = item.get("name") if isinstance(item, dict) else None
            d.add(f"tensors[{i}]", f"only in {side}: {show(name)}")


TOP_FIELDS = ["version", "endian", "alignment", "tensor_data_offset", "file_size", "metadata", "tensors"]


def compare(a: Any, b: Any, keep: int) -> Diffs:
    d = Diffs(keep)
    if not (isinstance(a, dict) and isinstance(b, dict)):
        d.add("", "documents are not both JSON objects")
        return d
    for k in TOP_FIELDS + sorted((set(a) | set(b)) - set(TOP_FIELDS)):
        if k not in a or k not in b:
            presence(d, "", a, b, k)
            continue
        va, vb = a[k], b[k]
        if k == "metadata":
            compare_metadata(d, va, vb)
        elif k == "tensors":
            compare_tensors(d, va, vb)
        elif k == "endian":
            if not (va == vb and va in ("little", "big")):
                d.add(k, f"{show(va)} != {show(vb)}")
        elif k in TOP_FIELDS:
            if not (is_int(va) and is_int(vb) and va == vb):
                d.add(k, f"{show(va)} != {show(vb)}")
        elif va != vb:
            d.add(k, f"{show(va)} != {show(vb)}")
    return d


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (non-finite floats must be \"nan\", \"inf\", \"-inf\")")


def load(path: str) -> Any:
    with open(path, "rb") as f:
        return json.loads(f.read().decode("utf-8"), parse_constant=_refuse_constant)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="compare_native.py",
        description="Deep-compare two GGUF documents in gguf-grammar's native JSON (`gguf dump --json`).",
        epilog="Exit status: 0 equal, 1 different, 2 unreadable input.")
    ap.add_argument("a", metavar="A.json")
    ap.add_argument("b", metavar="B.json")
    ap.add_argument("--max", type=int, default=20, metavar="N", help="differences to print (default 20)")
    ap.add_argument("--summary", action="store_true",
                    help="print one line: the number of differences and the first one")
    args = ap.parse_args(argv)

    docs = []
    for p in (args.a, args.b):
        try:
            docs.append(load(p))
        except (OSError, UnicodeDecodeError, ValueError) as e:
            print(f"compare_native.py: {p}: {e}", file=sys.stderr)
            return 2
    d = compare(docs[0], docs[1], max(args.max, 1))
    if d.count == 0:
        return 0
    if args.summary:
        noun = "difference" if d.count == 1 else "differences"
        print(f"{d.count} {noun}; first: {d.lines[0]}")
    else:
        for line in d.lines[:args.max]:
            print(line)
        if d.count > args.max:
            print(f"... {d.count} differences in all, first {args.max} shown")
    return 1


if __name__ == "__main__":
    sys.exit(main())
