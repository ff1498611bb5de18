"""The native API (gguf_grammar.open / parse) against the CLI: `gguf dump --json`,
`gguf dump --summary` and `gguf check --json` on the corpus, SmolLM2 and every conformance
case that parses."""

import json
import math
import re
import subprocess

import numpy as np
import pytest
from conftest import CASES, CORPUS, GGUF_BIN, VERDICTS, gguf_bin, smollm2

import gguf_grammar
from gguf_grammar import GGUFValueType


def parsed_cases():
    """The conformance cases `gguf dump --json` reads (the others are parse errors: test_errors.py)."""
    if not GGUF_BIN.exists():
        return []
    run = lambda f: subprocess.run([GGUF_BIN, "dump", "--json", CASES / f], capture_output=True)  # noqa: E731
    return [c["file"] for c in VERDICTS if run(c["file"]).returncode == 0]


PARSED_CASES = parsed_cases()


def cli(*args):
    run = subprocess.run([str(gguf_bin()), *map(str, args)], capture_output=True, text=True)
    return run


def as_json(value, tag):
    """A native value in the form `gguf dump --json` prints it."""
    if tag == GGUFValueType.ARRAY:
        return {"element_type": _name(value.element_type), "len": len(value), "value": [as_json(v, value.element_type) for v in value]}
    if isinstance(value, bytes):
        return {"bytes_hex": value.hex()}
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def _name(tag):
    return {0: "uint8", 1: "int8", 2: "uint16", 3: "int16", 4: "uint32", 5: "int32", 6: "float32", 7: "bool",
            8: "string", 9: "array", 10: "uint64", 11: "int64", 12: "float64"}[int(tag)]


def same_json(ours, theirs, tag):
    """Equal, float32 compared at float32 precision (the CLI prints the shortest f32 form)."""
    if isinstance(ours, dict) and isinstance(theirs, dict) and "element_type" in ours:
        return ours["len"] == theirs["len"] and ours["element_type"] == theirs["element_type"] and all(
            same_json(a, b, _tag(ours["element_type"]))
            for a, b in zip(ours["value"], theirs["value"])
        )
    if tag == GGUFValueType.FLOAT32 and isinstance(ours, float):
        return np.float32(ours) == np.float32(theirs)
    return ours == theirs and type(ours) is type(theirs)


def text(j):
    """A JSON string, or the bytes of {"bytes_hex": ...}."""
    return bytes.fromhex(j["bytes_hex"]) if isinstance(j, dict) else j


def _tag(name):
    return next(t for t in range(13) if _name(t) == name)


def files():
    return [p for p in CORPUS] + ["SmolLM2"] + [CASES / f for f in PARSED_CASES]


@pytest.mark.parametrize("path", files(), ids=str)
def test_document_equals_gguf_dump_json(path):
    path = smollm2() if path == "SmolLM2" else path
    expected = json.loads(cli("dump", "--json", path).stdout)
    doc = gguf_grammar.open(path)
    assert (doc.version, doc.endian, doc.alignment, doc.tensor_data_offset) == (
        expected["version"], expected["endian"], expected["alignment"], expected["tensor_data_offset"])
    first = {}
    for kv in expected["metadata"]:
        first.setdefault(text(kv["key"]).decode("utf-8", "surrogateescape") if isinstance(kv["key"], dict) else kv["key"], kv)
    assert list(doc.metadata) == list(first)
    for key, kv in first.items():
        tag = _tag(kv["type"])
        assert doc.metadata.type_of(key) == tag
        ours = as_json(doc.metadata[key], tag)
        if tag == GGUFValueType.ARRAY:
            theirs = {k: kv[k] for k in ("element_type", "len", "value")}
        else:
            theirs = kv["value"]
        assert same_json(ours, theirs, tag), key
    got = [(t.name, list(t.shape), int(t.type), t.relative_offset, t.data_offset, t.n_bytes) for t in doc.tensors]
    want = [(text(t["name"]), t["dims"], t["type_id"], t["offset"], t["data_offset"], t["n_bytes"]) for t in expected["tensors"]]
    assert got == want
    assert json.loads(doc.to_json()) == expected


def test_numeric_arrays_are_zero_copy_numpy():
    doc = gguf_grammar.open(CORPUS[0].parent / "ggml-vocab-llama-spm.gguf")
    scores = doc.metadata["tokenizer.ggml.scores"]
    arr = scores.to_numpy()
    assert arr.dtype == np.dtype("<f4") and len(arr) == len(scores) == 32000
    assert arr.tolist()[:100] == scores[:100]
    assert not arr.flags.writeable and not arr.flags.owndata
    with pytest.raises(TypeError):
        doc.metadata["tokenizer.ggml.tokens"].to_numpy()


def test_big_endian_arrays_keep_their_byte_order():
    doc = gguf_grammar.open(CASES / "scalars-all-be.gguf")
    assert doc.endian == "big"
    for case in ("array-u32", "array-f64", "array-i16"):
        le = gguf_grammar.open(CASES / f"{case}.gguf")
        key = next(iter(le.metadata))
        assert list(le.metadata[key].to_numpy()) == le.metadata[key].tolist()


def test_array_indexing_matches_list_semantics():
    doc = gguf_grammar.open(CORPUS[0].parent / "ggml-vocab-llama-spm.gguf")
    tokens = doc.metadata["tokenizer.ggml.tokens"]
    everything = tokens.tolist()
    for sel in [slice(None), slice(5, 9), slice(None, 10, 3), slice(-4, None), slice(10, 2), slice(None, None, -1000)]:
        assert tokens[sel] == everything[sel], sel
    assert (tokens[0], tokens[-1], len(tokens)) == (everything[0], everything[-1], 32000)
    with pytest.raises(IndexError):
        tokens[32000]


def test_parse_bytes_equals_open():
    path = CORPUS[0]
    a, b = gguf_grammar.open(path), gguf_grammar.parse(path.read_bytes())
    assert dict(a.metadata.items()).keys() == dict(b.metadata.items()).keys()
    assert a.to_json() == b.to_json()


def test_summary_equals_gguf_dump_summary():
    path = smollm2()
    text = cli("dump", "--summary", path).stdout
    line = dict(re.findall(r"^(\S+(?: \S+)?)\s{2,}(.*)$", text, re.M))
    s = gguf_grammar.open(path).summary()
    assert s.architecture == line["architecture"]
    assert f"{s.parameters:,} ({s.parameters_label})" == line["parameters"]
    assert s.size_label == line["size label"]
    assert line["bits/weight"].startswith(f"{s.bits_per_weight:.2f} ({s.tensor_bytes:,} bytes")
    assert s.tensor_count == 272 and s.tensor_types[0] == ("q4_1", 210)


@pytest.mark.parametrize("profile", ["strict", "gguf-py", "ggml", "ggml-0.3.16-data"])
@pytest.mark.parametrize("case", PARSED_CASES)
def test_check_equals_gguf_check_json(case, profile):
    path = CASES / case
    report = json.loads(cli("check", "--json", "--schema", "--profile", profile, path).stdout)[0]
    doc = gguf_grammar.open(path)
    got = [(d.code, d.severity, [d.offset, d.end] if d.offset is not None else None, d.path, d.message, list(d.rejected_by))
           for d in doc.check(profile, schema=True)]
    want = [(d["code"], d["severity"], d["span"], d["path"], d["message"], d["rejected_by"]) for d in report["diagnostics"]]
    assert got == want
    assert doc.accepts(profile, schema=True) == report["accepted"]


def test_escape_is_the_clis_terminal_escape():
    assert gguf_grammar.escape("tokenizer.ggml.model") == "tokenizer.ggml.model"
    assert gguf_grammar.escape(b"red\x1b[31m\x07") == "red\\e[31m\\u{7}"
    assert gguf_grammar.escape("a\u202eb\tc\n") == "a\\u{202e}b\\tc\\n"
    assert gguf_grammar.escape(b"\xff\\n") == "\\xff\\\\n"
    assert gguf_grammar.escape("bad-\udcff-name") == "bad-\\xff-name"  # os.fsdecode of b"\xff"


def test_indexing_every_string_is_linear_not_quadratic():
    # Each string's place depends on the lengths before it: indexing must not re-walk them.
    tokens = gguf_grammar.open(CORPUS[0].parent / "ggml-vocab-llama-bpe.gguf").metadata["tokenizer.ggml.tokens"]
    assert [tokens[i] for i in range(len(tokens))] == tokens.tolist()
    nested = gguf_grammar.open(CASES / "array-nested.gguf").metadata["test.array.nested"]
    assert [nested[i].tolist() for i in range(len(nested))] == [[1, 2], [3, 4, 5]]


def test_docstring_examples_run(monkeypatch):
    import doctest

    monkeypatch.chdir(CORPUS[0].parents[2])  # the examples name files of the repository
    tried = 0
    for module in (gguf_grammar, gguf_grammar._reader, gguf_grammar._document):
        result = doctest.testmod(module)
        assert result.failed == 0, module.__name__
        tried += result.attempted
    assert tried >= 3
