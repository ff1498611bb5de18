"""tensor.dequantize() (GGUFReader's and the native API's) against gguf-py 0.19.0's
gguf.quants.dequantize, bit for bit: every SmolLM2 tensor, every tensor of the files gguf-py
opens, and a generated file with one tensor of every type gguf-py dequantises (random
blocks, NaN / Inf / subnormal scales; scripts/dequant_reference.py writes it)."""

import sys
from pathlib import Path

import gguf
import numpy as np
import pytest

import gguf_grammar
from conftest import CASES, REPO, smollm2

sys.path.insert(0, str(REPO / "scripts"))
import dequant_reference  # noqa: E402


# Types gguf-py 0.19.0 cannot dequantise and we do, as llama.cpp 0.3.36's ggml does.
GGML_ONLY = {"Q1_0", "Q2_0"}


def reference(tensor):
    """gguf-py's values, or NotImplementedError's type for a type it cannot dequantise."""
    try:
        with np.errstate(all="ignore"):  # NaN and Inf scales are part of the test
            return gguf.quants.dequantize(tensor.data, tensor.tensor_type)
    except NotImplementedError:
        return NotImplementedError


def assert_same_bits(ours, ref, what):
    assert ours.dtype == np.float32, what
    assert ours.shape == ref.shape, what
    ref = np.ascontiguousarray(ref, dtype=np.float32)
    mismatch = np.flatnonzero(ours.view(np.uint32) != ref.view(np.uint32))
    assert mismatch.size == 0, (
        f"{what}: {mismatch.size} values differ, first at {mismatch[0]}: "
        f"{ours.reshape(-1)[mismatch[0]]!r} vs {ref.reshape(-1)[mismatch[0]]!r}"
    )


def compare_file(path):
    """Both APIs' dequantize() against gguf-py on every tensor of `path`; returns the count
    of tensors compared value by value."""
    ref_reader = gguf.GGUFReader(str(path))
    reader = gguf_grammar.GGUFReader(path)
    doc = gguf_grammar.open(path)
    assert len(reader.tensors) == len(doc.tensors) == len(ref_reader.tensors)
    compared = 0
    for ref_t, ours_t, doc_t in zip(ref_reader.tensors, reader.tensors, doc.tensors):
        what = f"{path.name}: {ref_t.name} ({ref_t.tensor_type.name})"
        ref = reference(ref_t)
        if ref is NotImplementedError and ref_t.tensor_type.name in GGML_ONLY:
            # Both APIs give the values ggml does (tests/dequant.rs compares them with its to_float).
            ours = ours_t.dequantize()
            assert ours.view(np.uint32).tolist() == doc_t.dequantize().view(np.uint32).tolist(), what
            continue
        if ref is NotImplementedError:
            for t in (ours_t, doc_t):
                with pytest.raises(NotImplementedError, match="cannot be dequantised"):
                    t.dequantize()
            continue
        assert_same_bits(ours_t.dequantize(), ref, what)
        assert_same_bits(doc_t.dequantize(), ref, what + " (native API)")
        compared += 1
    return compared


def test_smollm2_every_tensor():
    path = smollm2()
    assert compare_file(path) == len(gguf.GGUFReader(str(path)).tensors)


def test_every_type_gguf_py_dequantises(tmp_path):
    path = tmp_path / "random.gguf"
    dequant_reference.random_file(path)
    types = {t.tensor_type for t in gguf.GGUFReader(str(path)).tensors}
    assert len(types) == len(dequant_reference.TYPES)
    assert compare_file(path) == len(types)


def test_files_gguf_py_opens(accepted_file):
    compare_file(accepted_file)


def test_conformance_tensors_are_compared():
    """The fixture above is not vacuous: some accepted cases hold f32 / f16 tensors."""
    assert compare_file(CASES / "alignment-64.gguf") == 2
    assert compare_file(CASES / "alignment-8.gguf") == 2  # and an i8 tensor, refused by both


def test_result_is_a_new_writable_array():
    doc = gguf_grammar.open(CASES / "alignment-64.gguf")
    a = doc.tensors[0].dequantize()
    a[0] = 42
    assert doc.tensors[0].dequantize()[0] == -1.625


def test_data_past_the_end_is_an_error():
    data = (CASES / "alignment-64.gguf").read_bytes()
    doc = gguf_grammar.parse(data[:220])  # tensor "b" is bytes [192, 224)
    assert doc.tensors[0].dequantize()[0] == -1.625
    with pytest.raises(ValueError, match=r'tensor "b": its 32 bytes of data at offset 192 are not all in the file \(220 bytes\)'):
        doc.tensors[1].dequantize()


def test_hostile_name_is_escaped_in_errors(tmp_path):
    writer_path = tmp_path / "hostile.gguf"
    w = gguf.GGUFWriter(str(writer_path), "x")
    w.add_tensor("evil\x1b[31m\u202e", np.zeros((2, 3), dtype=np.int8))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    t = gguf_grammar.open(writer_path).tensors[0]
    with pytest.raises(NotImplementedError) as err:
        t.dequantize()
    assert "\x1b" not in str(err.value) and "\u202e" not in str(err.value)
    assert r"evil\e[31m\u{202e}" in str(err.value)
