"""gguf_grammar.GGUFReader against gguf-py 0.19.0's GGUFReader on every file gguf-py opens:
every field's name, types, offset, contents (whole, first, last, a slice), parts and data;
every tensor's attributes and data."""

import math

import gguf
import numpy as np
import pytest

import gguf_grammar

# Past twice this many parts, a field's numpy parts are compared at both ends only: comparing
# half a million arrays one by one takes seconds.
PARTS_COMPARED = 4000


def same(a, b):
    """Equal values, NaN equal to NaN, types kept apart (1 vs True vs 1.0)."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def outcome(f, *args):
    """f's result, or the type of exception it raises."""
    try:
        return f(*args)
    except Exception as e:  # noqa: BLE001 - the exception type is what is compared
        return type(e)


def same_array(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")


def test_fields_and_tensors_equal_gguf_py(accepted_file):
    theirs = gguf.GGUFReader(accepted_file)
    ours = gguf_grammar.GGUFReader(accepted_file)

    assert ours.byte_order == theirs.byte_order
    assert ours.endianess == theirs.endianess
    assert ours.alignment == theirs.alignment
    assert ours.data_offset == theirs.data_offset
    assert same_array(ours.data, theirs.data)
    assert list(ours.fields) == list(theirs.fields)

    for name, t in theirs.fields.items():
        o = ours.fields[name]
        assert ours.get_field(name) is o
        assert (o.offset, o.name) == (t.offset, t.name), name
        assert [int(x) for x in o.types] == [int(x) for x in t.types], name
        for sel in [slice(None), 0, -1, slice(1, 3), slice(None, None, -2)]:
            assert same(outcome(o.contents, sel), outcome(t.contents, sel)), (name, sel)
        if len(t.parts) <= PARTS_COMPARED:
            assert len(o.parts) == len(t.parts), name
            assert all(same_array(a, b) for a, b in zip(o.parts, t.parts)), name
        else:
            assert len(o.parts) == len(t.parts), name
            for ends in (slice(PARTS_COMPARED), slice(-PARTS_COMPARED, None)):
                assert all(same_array(a, b) for a, b in zip(o.parts[ends], t.parts[ends])), name
        assert o.data == t.data, name

    assert len(ours.tensors) == len(theirs.tensors)
    for i, t in enumerate(theirs.tensors):
        o = ours.get_tensor(i)
        assert (o.name, o.tensor_type, o.n_elements, o.data_offset) == (t.name, t.tensor_type, t.n_elements, t.data_offset)
        assert o.tensor_type.name == t.tensor_type.name
        assert same_array(o.shape, t.shape)
        assert (o.field.offset, o.field.name, o.field.data, o.field.types) == (t.field.offset, t.field.name, t.field.data, t.field.types)
        assert all(same_array(a, b) for a, b in zip(o.field.parts, t.field.parts))
        if t.tensor_type == gguf.GGMLQuantizationType.Q8_1:
            # gguf-py sizes q8_1 blocks as 40 bytes; ggml's block_q8_1 is 36 (two f16, 32 int8).
            assert (o.n_bytes, t.n_bytes) == (t.n_elements // 32 * 36, t.n_elements // 32 * 40)
            assert o.data.shape[-1] == t.data.shape[-1] // 40 * 36
            assert np.array_equal(o.data.ravel(), theirs.data[o.data_offset : o.data_offset + o.n_bytes])
        else:
            assert o.n_bytes == t.n_bytes
            assert same_array(o.data, t.data)


def test_data_is_a_view_of_the_map(accepted_file):
    ours = gguf_grammar.GGUFReader(accepted_file)
    for t in ours.tensors:
        if t.data.size == 0:
            continue  # nothing to share
        assert t.data.base is not None and np.shares_memory(t.data, ours.data)
