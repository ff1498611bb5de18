#!/usr/bin/env python3
"""Run the parsers generated from grammar/gguf.ksy and compare them with `gguf dump --json`.

Usage: check.py --build DIR --gguf BIN [--cases-dir DIR] [--js-generated DIR] FILE...

  --build DIR         folder that holds python/gguf_file.py (and javascript/GgufFile.js) as
                      compile.js wrote them; the JavaScript parses are written under it too
  --gguf BIN          the gguf binary whose `dump --json` is the reference
  --cases-dir DIR     also run every *.gguf in DIR that `gguf dump --json` accepts; for the
                      cases it rejects, whether the grammar rejects them too is reported but
                      not counted
  --node NODE         node executable (default: node)
  --no-js             run only the Python parser

Every FILE is checked in both languages. A file that `gguf dump --json` accepts passes in a
language when that language's generated parser reads it and yields the same version, byte order,
alignment, tensor-data offset, file size, every key with its type and value (arrays in full,
nested arrays included) and every tensor's name, dims, type, relative and absolute offset. A FILE
named on the command line that `gguf dump` rejects passes when the generated parser rejects it
too. Tensor byte sizes (`n_bytes`) are compared where the grammar defines them (at most 4 dims)
and, in JavaScript, where the result is exact (below 2^53).

Prints one line per file and language that fails (with the first differences), then
`N passed, M failed` counted per file per language; exits 1 on any failure.
"""

import argparse
import json
import math
import os
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_DIFFS = 8

# ---------------------------------------------------------------------------------------------
# The Python parse, turned into the native JSON document


def load_generated(build):
    # The generated module is gguf_file.py (ksy id gguf_file), so putting its folder first on
    # sys.path cannot shadow gguf-py's `gguf` package.
    sys.path.insert(0, os.path.join(build, "python"))
    import gguf_file  # noqa: E402

    return gguf_file.GgufFile


def text(s):
    """A GGUF string as the native JSON writes it: its text, or {"bytes_hex"} when not UTF-8."""
    data = s.data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return {"bytes_hex": data.hex()}


def u64_or_none(v):
    """A sum or product the grammar computes exactly; past u64 the native JSON says null."""
    return v if v is not None and v < 1 << 64 else None


class Native:
    """Builds the native JSON document from a parse by the generated Python parser."""

    def __init__(self, GgufFile):
        self.type_name = {int(e): e.name for e in GgufFile.ValueType}
        # Kaitai identifiers are lower case; ggml spells the k-quants q2_K ... q8_K.
        self.ggml_name = {
            int(e): (e.name[:-2] + "_K" if e.name.endswith("_k") else e.name)
            for e in GgufFile.GgmlType
        }

    def value(self, t, v):
        if t == 8:
            return text(v)
        if t == 9:
            return self.array(v)
        if t == 7:
            return v != 0  # one byte: 0 false, anything else true
        return v  # integers; floats stay Python floats (see canon)

    def elements(self, t, els):
        if t == 8:
            return [text(s) for s in els]
        if t == 9:
            return [self.array(a) for a in els]
        if t == 7:
            return [b != 0 for b in els]
        return list(els)

    def array(self, a):
        t = int(a.element_type)
        name = self.type_name[t]
        return {
            "element_type": name,
            "len": a.len,
            "value": self.elements(t, getattr(a, name + "_elements")),
        }

    def document(self, g, file_size):
        b = g.body
        metadata = []
        for kv in b.metadata_kv:
            t = int(kv.value_type)
            name = self.type_name[t]
            entry = {"key": text(kv.key), "type": name}
            v = getattr(kv, name + "_value")  # the one field the value type names
            if t == 9:
                entry.update(self.array(v))
            else:
                entry["value"] = self.value(t, v)
            metadata.append(entry)
        tensors = []
        for ti in b.tensor_infos:
            tid = int(ti.ggml_type)
            t = {"name": text(ti.name), "dims": list(ti.dims), "type_id": tid,
                 "offset": ti.offset, "data_offset": u64_or_none(ti.data_offset)}
            if tid in self.ggml_name:
                t["type"] = self.ggml_name[tid]
            if ti.n_dims <= 4:  # the grammar leaves n_bytes undefined past ggml's 4 dims
                t["n_bytes"] = u64_or_none(ti.n_bytes)
            tensors.append(t)
        return {
            "version": b.version,
            "endian": "big" if g.is_big_endian else "little",
            "alignment": b.alignment,
            "tensor_data_offset": b.tensor_data_offset,
            "file_size": file_size,
            "metadata": metadata,
            "tensors": tensors,
        }


# ---------------------------------------------------------------------------------------------
# Comparison

def canon_float(v, fmt):
    """Floats compare by their bits in the stored width; non-finite ones by name."""
    if isinstance(v, str):
        return v
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    if isinstance(v, float) and math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        try:
            return (fmt, struct.pack("<" + fmt, v))
        except (OverflowError, struct.error):
            return ("unpackable", v)
    return ("not a number", v)


def canon(t, v):
    if t == "float32":
        return canon_float(v, "f")
    if t == "float64":
        return canon_float(v, "d")
    if t == "array" and isinstance(v, dict):
        return canon_array(v)
    if t == "bool" and not isinstance(v, bool):
        return ("not a bool", v)
    return v


def canon_array(a):
    et = a.get("element_type")
    vals = a.get("value")
    if isinstance(vals, list) and et in ("float32", "float64", "array", "bool"):
        vals = [canon(et, x) for x in vals]
    return {"element_type": et, "len": a.get("len"), "value": vals}


def show(v):
    if isinstance(v, tuple) and len(v) == 2 and isinstance(v[1], bytes):
        (x,) = struct.unpack("<" + v[0], v[1])
        return f"{x!r} (0x{v[1][::-1].hex()})"
    s = json.dumps(v) if not isinstance(v, tuple) else repr(v)
    return s if len(s) <= 120 else s[:117] + "..."


def diff_values(path, a, b, out):
    """Appends differences between two canonical values (Rust's first) to out."""
    if len(out) >= MAX_DIFFS:
        return
    if isinstance(a, dict) and isinstance(b, dict) and "element_type" in a and "element_type" in b:
        for k in ("element_type", "len"):
            if a.get(k) != b.get(k):
                out.append(f"{path}.{k}: gguf {show(a.get(k))}, kaitai {show(b.get(k))}")
        diff_values(path, a.get("value"), b.get("value"), out)
        return
    if isinstance(a, list) and isinstance(b, list):
        if a == b:
            return
        if len(a) != len(b):
            out.append(f"{path}: gguf has {len(a)} elements, kaitai {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                diff_values(f"{path}[{i}]", x, y, out)
                if len(out) >= MAX_DIFFS:
                    return
        return
    if a != b or isinstance(a, bool) != isinstance(b, bool):
        out.append(f"{path}: gguf {show(a)}, kaitai {show(b)}")


def compare(rust, kai):
    out = []
    for k in ("version", "endian", "alignment", "tensor_data_offset", "file_size"):
        if rust.get(k) != kai.get(k):
            out.append(f"{k}: gguf {show(rust.get(k))}, kaitai {show(kai.get(k))}")
    rm, km = rust.get("metadata", []), kai.get("metadata", [])
    if len(rm) != len(km):
        out.append(f"metadata: gguf has {len(rm)} KVs, kaitai {len(km)}")
    for i, (r, k) in enumerate(zip(rm, km)):
        name = r.get("key")
        p = f"metadata[{i}] {json.dumps(name)}"
        if r.get("key") != k.get("key"):
            out.append(f"{p}.key: gguf {show(r.get('key'))}, kaitai {show(k.get('key'))}")
        t = r.get("type")
        if t != k.get("type"):
            out.append(f"{p}.type: gguf {show(t)}, kaitai {show(k.get('type'))}")
            continue
        if t == "array":
            diff_values(p, canon_array(r), canon_array(k), out)
        else:
            diff_values(p + ".value", canon(t, r.get("value")), canon(t, k.get("value")), out)
        if len(out) >= MAX_DIFFS:
            return out
    rt, kt = rust.get("tensors", []), kai.get("tensors", [])
    if len(rt) != len(kt):
        out.append(f"tensors: gguf has {len(rt)}, kaitai {len(kt)}")
    for i, (r, k) in enumerate(zip(rt, kt)):
        p = f"tensors[{i}] {json.dumps(r.get('name'))}"
        for f in ("name", "dims", "type_id", "offset", "data_offset", "type", "n_bytes"):
            if f not in k and f in ("type", "n_bytes"):
                continue  # an id the grammar's enum does not name; a size it cannot compute
            if r.get(f) != k.get(f):
                out.append(f"{p}.{f}: gguf {show(r.get(f))}, kaitai {show(k.get(f))}")
        if len(out) >= MAX_DIFFS:
            return out
    return out


# ---------------------------------------------------------------------------------------------
# Driver


class Broken(Exception):
    """gguf dump neither printed a document nor rejected the file (a crash, bad JSON)."""


def rust_dump(gguf, path):
    """(document, None) when gguf dump reads the file, (None, message) when it rejects it."""
    p = subprocess.run([gguf, "dump", "--json", path], capture_output=True)
    msg = p.stderr.decode("utf-8", "replace").strip().splitlines()
    if p.returncode == 1:
        return None, (msg[0] if msg else "")
    if p.returncode != 0:
        raise Broken(f"gguf dump --json exited {p.returncode}: {msg[-1] if msg else ''}")
    try:
        return json.loads(p.stdout), None
    except ValueError as e:
        raise Broken(f"gguf dump --json printed no valid JSON: {e}") from None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--gguf", required=True)
    ap.add_argument("--cases-dir")
    ap.add_argument("--node", default="node")
    ap.add_argument("--no-js", action="store_true")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()

    t_start = time.monotonic()
    # The generated parser recurses a few frames per nested array, and the grammar allows 256
    # levels: more than Python's default limit of 1000 frames.
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    GgufFile = load_generated(args.build)
    from kaitaistruct import KaitaiStream

    native = Native(GgufFile)

    # The reference first: it decides which conformance cases take part.
    work = []  # (path, rust document or None, rust error, counted)
    paths = [(f, True) for f in args.files]
    if args.cases_dir:
        paths += [(os.path.join(args.cases_dir, name), False)
                  for name in sorted(os.listdir(args.cases_dir)) if name.endswith(".gguf")]
    broken = []  # (file, message): counted as failed in every language
    for f, named in paths:
        try:
            doc, err = rust_dump(args.gguf, f)
        except Broken as e:
            broken.append((f, str(e)))
            continue
        work.append((f, doc, err, named or doc is not None))
    t_rust = time.monotonic()

    # The JavaScript parser runs in its own process while this one runs the Python parser.
    js_dir = None
    js_proc = None
    if not args.no_js:
        js_dir = tempfile.mkdtemp(prefix="js-", dir=args.build)
        env = dict(os.environ, NODE_PATH=os.path.join(HERE, "node_modules"))
        js_proc = subprocess.Popen(
            [args.node, os.path.join(HERE, "dump.js"), os.path.join(args.build, "javascript"),
             js_dir] + [w[0] for w in work],
            env=env,
        )

    results = []  # (file, lang, ok, lines)
    rejected = []  # (file, lang, grammar also rejects) for cases gguf dump rejects

    def judge(f, lang, rust, err, kai, counted):
        if not counted:
            rejected.append((f, lang, "error" in kai))
            return
        if rust is None:
            if "error" in kai:
                results.append((f, lang, True, []))
            else:
                results.append((f, lang, False, [f"gguf dump rejects it ({err}), kaitai reads it"]))
            return
        if "error" in kai:
            results.append((f, lang, False, [f"kaitai rejects it: {kai['error']}"]))
            return
        d = compare(rust, kai)
        results.append((f, lang, not d, d))

    py_seconds = {}
    for f, rust, err, counted in work:
        t0 = time.monotonic()
        try:
            with open(f, "rb") as fh:
                g = GgufFile(KaitaiStream(fh))
                kai = native.document(g, os.fstat(fh.fileno()).st_size)
        except Exception as e:  # the parser's rejection, whatever its exception type
            kai = {"error": f"{type(e).__name__}: {e}"}
        py_seconds[f] = time.monotonic() - t0
        judge(f, "python", rust, err, kai, counted)
    t_py = time.monotonic()

    if js_proc is not None:
        rc = js_proc.wait()
        if rc != 0:
            print(f"grammar-check: dump.js exited {rc}", file=sys.stderr)
            return 2
        for i, (f, rust, err, counted) in enumerate(work):
            with open(os.path.join(js_dir, f"{i}.json"), encoding="utf-8") as fh:
                kai = json.load(fh)
            judge(f, "javascript", rust, err, kai, counted)
            os.remove(os.path.join(js_dir, f"{i}.json"))
        os.rmdir(js_dir)
    t_js = time.monotonic()

    for f, msg in broken:
        for lang in ("python",) if args.no_js else ("python", "javascript"):
            results.append((f, lang, False, [msg]))
    passed = sum(1 for r in results if r[2])
    failed = len(results) - passed
    for f, lang, ok, lines in results:
        if not ok:
            print(f"FAIL {f} [{lang}]")
            for line in lines[:MAX_DIFFS]:
                print(f"    {line}")
    if rejected:
        langs = sorted({lang for _, lang, _ in rejected}, reverse=True)
        n = len({f for f, _, _ in rejected})
        agree = ", ".join(
            f"{lang} {sum(1 for _, l, ok in rejected if l == lang and ok)}/{n}" for lang in langs)
        print(f"not compared: {n} conformance cases that gguf dump rejects; "
              f"the grammar rejects them too in {agree}")
        for f, lang, ok in rejected:
            if not ok:
                print(f"    note: {f} [{lang}]: gguf dump rejects it, the grammar reads it")
    slow = sorted(py_seconds.items(), key=lambda kv: -kv[1])[:1]
    timing = (f"timing: gguf dump {t_rust - t_start:.1f}s, python {t_py - t_rust:.1f}s"
              + (f" (slowest {os.path.basename(slow[0][0])} {slow[0][1]:.1f}s)" if slow else "")
              + (f", javascript +{t_js - t_py:.1f}s after python" if js_proc else ""))
    print(f"files: {sum(1 for w in work if w[3])} compared ({len(results)} checks), {timing}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
