#!/usr/bin/env python3
"""Print a GGUF file as gguf-py's GGUFReader (gguf 0.19.0) reads it, in the crate's native JSON.

Usage: gguf_py_native.py [--pretty] [--pure] [-o OUT] FILE

The output is the document that `gguf dump --json FILE` prints, built from GGUFReader's fields
and tensors only, so that the two can be compared with scripts/compare_native.py:

  {"version", "endian", "alignment", "tensor_data_offset", "file_size",
   "metadata": [{"key", "type", "value"} | {"key", "type": "array", "element_type", "len",
                "value"}],
   "tensors": [{"name", "dims", "type", "type_id", "offset", "data_offset", "n_bytes"}]}

How the values are taken from gguf-py:

- metadata: every ReaderField in file order, less the three synthetic fields that GGUFReader
  puts first (GGUF.version, GGUF.tensor_count, GGUF.kv_count). Values are decoded from the
  field's raw `parts` (not `contents()`, which flattens nested arrays and raises on strings that
  are not UTF-8): nested arrays keep their structure, each inner array an object
  {"element_type", "len", "value"}; a string that is not valid UTF-8 is {"bytes_hex": "..."};
  a non-finite float is "nan", "inf" or "-inf"; a bool is whatever numpy's bool view of the
  byte gives (any non-zero byte is true).
- tensor_data_offset: GGUFReader.data_offset (aligned even when there are no tensors).
- tensors: ReaderTensor name, shape (ne0 first, file order), tensor_type (ggml's lowercase
  name: the enum name lowercased except a trailing _K), the relative offset as stored in the
  tensor info, data_offset (absolute) and n_bytes (gguf-py's block table: q8_1 blocks are 40
  bytes there where ggml has 36).

GGUFReader is run unchanged, except that by default the file's np.memmap is handed to it as a
plain ndarray view of the same mapping: numpy's memmap subclass costs a Python-level call on every
slice, which made GGUFReader take ~20 s on a 128k-token vocabulary. Same bytes, same parsing
code; --pure keeps the np.memmap.

Exit status: 0 on success, 1 when GGUFReader rejects the file (its exception on stderr), 2 on a
usage error.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import Any

import numpy as np

try:
    import gguf
    from gguf.constants import GGMLQuantizationType, GGUFEndian, GGUFValueType
except ImportError as e:  # pragma: no cover - environment problem
    sys.exit(f"gguf_py_native.py: cannot import gguf ({e}); run scripts/venv.sh and use .venv/bin/python")

SYNTHETIC_FIELDS = ("GGUF.version", "GGUF.tensor_count", "GGUF.kv_count")

# The spec's type names: GGUFValueType names lowercased (uint8 ... float64).
VALUE_TYPE_NAMES = {t: t.name.lower() for t in GGUFValueType}

SCALAR_TYPES = {
    GGUFValueType.UINT8, GGUFValueType.INT8, GGUFValueType.UINT16, GGUFValueType.INT16,
    GGUFValueType.UINT32, GGUFValueType.INT32, GGUFValueType.FLOAT32, GGUFValueType.BOOL,
    GGUFValueType.UINT64, GGUFValueType.INT64, GGUFValueType.FLOAT64,
}
FLOAT_TYPES = {GGUFValueType.FLOAT32, GGUFValueType.FLOAT64}


def ggml_type_name(t: GGMLQuantizationType) -> str:
    """ggml's name for a tensor type: 'f32', 'q4_0', 'q4_K', 'iq2_xxs', 'bf16', 'mxfp4'."""
    name = t.name.lower()
    if name.endswith("_k"):
        name = name[:-2] + "_K"
    return name


def load_reader(path: str, pure: bool) -> gguf.GGUFReader:
    if pure:
        return gguf.GGUFReader(path)
    real_memmap = np.memmap

    def plain_memmap(*args: Any, **kwargs: Any) -> np.ndarray:
        return real_memmap(*args, **kwargs).view(np.ndarray)

    np.memmap = plain_memmap  # type: ignore[misc,assignment]
    try:
        return gguf.GGUFReader(path)
    finally:
        np.memmap = real_memmap  # type: ignore[misc]


def decode_string(data: np.ndarray) -> Any:
    raw = data.tobytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return {"bytes_hex": raw.hex()}


def float_json(x: float) -> Any:
    if math.isfinite(x):
        return x
    if math.isnan(x):
        return "nan"
    return "inf" if x > 0 else "-inf"


def scalars_json(vtype: GGUFValueType, arr: np.ndarray) -> list[Any]:
    """A 1-d numpy array of one scalar type as JSON values, vectorised."""
    values = arr.tolist()  # Python ints / floats / bools, byte order already applied by numpy
    if vtype in FLOAT_TYPES and len(values) and not bool(np.isfinite(arr).all()):
        values = [float_json(v) for v in values]
    return values


def decode_value(parts: list[np.ndarray], i: int, vtype: GGUFValueType) -> tuple[Any, int]:
    """Decode one value of type vtype whose first part is parts[i]; return (json, next index).

    The part layout is the one GGUFReader._get_field_parts builds: a string is [length, bytes];
    a scalar is [1-element array]; an array is [element type, count] followed by the parts of
    each element in order (for nested arrays, the inner arrays' own parts, recursively).
    """
    if vtype == GGUFValueType.STRING:
        return decode_string(parts[i + 1]), i + 2
    if vtype in SCALAR_TYPES:
        return scalars_json(vtype, parts[i])[0], i + 1
    if vtype == GGUFValueType.ARRAY:
        etype = GGUFValueType(int(parts[i][0]))
        n = int(parts[i + 1][0])
        i += 2
        if etype == GGUFValueType.STRING:
            values = [decode_string(p) for p in parts[i + 1:i + 2 * n:2]]
            i += 2 * n
        elif etype in SCALAR_TYPES:
            values = scalars_json(etype, np.concatenate(parts[i:i + n])) if n else []
            i += n
        elif etype == GGUFValueType.ARRAY:
            values = []
            for _ in range(n):
                inner, i = decode_value(parts, i, etype)
                values.append(inner)
        else:  # GGUFReader raises before storing such a field
            raise ValueError(f"unknown array element type {etype}")
        return {"element_type": VALUE_TYPE_NAMES[etype], "len": n, "value": values}, i
    raise ValueError(f"unknown value type {vtype}")


def metadata_json(reader: gguf.GGUFReader) -> list[dict[str, Any]]:
    fields = list(reader.fields.values())
    names = tuple(f.name for f in fields[:3])
    if names != SYNTHETIC_FIELDS:
        raise AssertionError(f"GGUFReader's first fields are {names}, expected {SYNTHETIC_FIELDS}")
    out = []
    for field in fields[3:]:
        # parts: [key length, key bytes, value type, value parts...]
        vtype = GGUFValueType(int(field.parts[2][0]))
        value, end = decode_value(field.parts, 3, vtype)
        if end != len(field.parts):
            raise AssertionError(f"{field.name}: decoded {end} of {len(field.parts)} parts")
        item: dict[str, Any] = {"key": field.name, "type": VALUE_TYPE_NAMES[vtype]}
        if vtype == GGUFValueType.ARRAY:
            item.update(value)
        else:
            item["value"] = value
        out.append(item)
    return out


def tensors_json(reader: gguf.GGUFReader) -> list[dict[str, Any]]:
    out = []
    for t in reader.tensors:
        # field.parts: [name length, name bytes, n_dims, dims, type, relative offset]
        rel_offset = int(t.field.parts[5][0])
        out.append({
            "name": t.name,
            "dims": [int(d) for d in t.shape.tolist()],
            "type": ggml_type_name(t.tensor_type),
            "type_id": int(t.tensor_type),
            "offset": rel_offset,
            "data_offset": int(t.data_offset),
            "n_bytes": int(t.n_bytes),
        })
    return out


def native_json(reader: gguf.GGUFReader) -> dict[str, Any]:
    return {
        "version": int(reader.fields["GGUF.version"].parts[0][0]),
        "endian": "big" if reader.endianess == GGUFEndian.BIG else "little",
        "alignment": int(reader.alignment),
        "tensor_data_offset": int(reader.data_offset),
        "file_size": int(reader.data.shape[0]),
        "metadata": metadata_json(reader),
        "tensors": tensors_json(reader),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="gguf_py_native.py",
        description="Print a GGUF file as gguf-py's GGUFReader reads it, in gguf-grammar's native JSON "
                    "(the format of `gguf dump --json`).",
        epilog="Run it with the project's venv: scripts/venv.sh && .venv/bin/python scripts/gguf_py_native.py FILE",
    )
    ap.add_argument("file", metavar="FILE", help="GGUF file to read")
    ap.add_argument("-o", "--output", metavar="OUT", help="write the JSON to OUT instead of stdout")
    ap.add_argument("--pretty", action="store_true", help="indent the JSON (default: one line)")
    ap.add_argument("--pure", action="store_true",
                    help="give GGUFReader its own np.memmap (several times slower on big vocabularies)")
    args = ap.parse_args(argv)

    if not os.path.isfile(args.file):
        print(f"gguf_py_native.py: {args.file}: no such file", file=sys.stderr)
        return 2
    try:
        reader = load_reader(args.file, args.pure)
    except Exception as e:  # GGUFReader rejects the file: report it the way verdicts.json does
        print(f"gguf_py_native.py: {args.file}: GGUFReader: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    doc = native_json(reader)

    text = json.dumps(doc, ensure_ascii=False, allow_nan=False,
                      indent=1 if args.pretty else None,
                      separators=None if args.pretty else (",", ":"))
    data = (text + "\n").encode("utf-8")
    if args.output:
        with open(args.output, "wb") as f:
            f.write(data)
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
