"""gguf_grammar.GGUFReader as a drop-in for gguf-py 0.19.0's: the attribute lists of gguf-py's
own classes (introspected, so a new gguf-py attribute fails here), NamedTuple behaviour, the
modes 'c' and 'r+', paths, pickling, the private helpers."""

import copy
import pickle
import shutil

import gguf
import gguf.gguf_reader
import numpy as np
import pytest
from conftest import CASES

import gguf_grammar

FILES = [
    CASES / "llama-8-tokens.gguf",
    CASES / "basic-v3-be.gguf",
    CASES / "array-nested.gguf",
]
IDS = [p.name for p in FILES]

# Attributes ours has in addition to gguf-py's (everything else must match).
OUR_EXTRA_READER = {"_doc", "_opened", "_build_native_tensors", "_block", "__reduce_ex__", "__getstate__"}


def public_and_helpers(cls):
    return {n for n in dir(cls) if n not in dir(object) or n in cls.__dict__}


@pytest.fixture(params=FILES, ids=IDS)
def pair(request):
    return gguf.GGUFReader(request.param), gguf_grammar.GGUFReader(request.param)


def test_reader_class_has_every_gguf_py_attribute():
    theirs = public_and_helpers(gguf.gguf_reader.GGUFReader)
    missing = theirs - set(dir(gguf_grammar.GGUFReader))
    assert not missing, f"gguf-py's GGUFReader has attributes ours lacks: {sorted(missing)}"
    for name in ("byte_order", "alignment"):
        assert getattr(gguf_grammar.GGUFReader, name) == getattr(gguf.gguf_reader.GGUFReader, name)
    assert gguf_grammar.GGUFReader.__annotations__.keys() >= gguf.gguf_reader.GGUFReader.__annotations__.keys()


def test_namedtuple_classes_match_gguf_py():
    for ours, theirs in ((gguf_grammar.ReaderField, gguf.ReaderField), (gguf_grammar.ReaderTensor, gguf.ReaderTensor)):
        assert issubclass(ours, tuple) and ours.__slots__ == ()
        assert ours._fields == theirs._fields
        assert ours._field_defaults == theirs._field_defaults
        missing = set(dir(theirs)) - set(dir(ours))
        assert not missing, f"{theirs.__name__}: {sorted(missing)}"


def test_instance_attributes_and_their_types(pair):
    theirs, ours = pair
    assert set(vars(theirs)) <= set(vars(ours)), sorted(set(vars(theirs)) - set(vars(ours)))
    assert set(vars(ours)) - set(vars(theirs)) <= OUR_EXTRA_READER
    for name in vars(theirs):
        assert type(getattr(ours, name)) is type(getattr(theirs, name)), name
    assert ours.alignment == theirs.alignment and type(ours.alignment) is type(theirs.alignment)
    assert ours.data_offset == theirs.data_offset and type(ours.data_offset) is type(theirs.data_offset)
    assert ours.gguf_scalar_to_np == theirs.gguf_scalar_to_np
    assert all(type(k) is gguf.GGUFValueType for k in ours.gguf_scalar_to_np)
    assert ours.endianess is theirs.endianess and ours.byte_order == theirs.byte_order
    for name, t in theirs.fields.items():
        o = ours.fields[name]
        assert type(o).__name__ == "ReaderField"
        assert all(type(x) is type(y) for x, y in zip(o, t)), name
        assert [type(x) for x in o.types] == [type(x) for x in t.types], name
        assert all(x is y for x, y in zip(o.types, t.types)), name
        assert [type(x) for x in o.data] == [type(x) for x in t.data], name
        for a, b in zip(o.parts, t.parts):
            assert (a.dtype, a.shape, a.tobytes()) == (b.dtype, b.shape, b.tobytes()), name
            # gguf-py's parts are np.memmap; ours plain views of the same map (documented)
            assert isinstance(a, np.ndarray) and np.shares_memory(a, ours.data), name
    for o, t in zip(ours.tensors, theirs.tensors):
        assert [type(x).__name__ for x in o] == [type(y).__name__ for y in t], o.name
        assert type(o.tensor_type) is gguf.GGMLQuantizationType
        assert o.field.parts[3] is o.shape  # as in gguf-py: the dims part is the shape array
        assert [type(x) for x in o.field] == [type(x) for x in t.field]


def test_field_is_a_namedtuple(pair):
    theirs, ours = pair
    name = "general.architecture" if "general.architecture" in theirs.fields else list(theirs.fields)[-1]
    t, o = theirs.fields[name], ours.fields[name]
    assert len(o) == len(t) == 5
    assert o[1] == t[1] and o[0] == t[0] and o[4] == t[4]
    assert o._asdict().keys() == t._asdict().keys()
    assert o._replace(name="x").name == "x" and o._replace(name="x").contents() == t._replace(name="x").contents()
    offset, fname, parts, data, types = o
    assert (offset, fname, data, types) == (t.offset, t.name, t.data, t.types)
    assert len(parts) == len(t.parts)
    for f in (o, t):
        with pytest.raises(TypeError, match="unhashable type: 'list'"):
            hash(f)
    assert repr(o).startswith("ReaderField(offset=")
    assert tuple(o)[3] == t.data


def test_unread_field_fills_on_any_access():
    path = CASES / "llama-8-tokens.gguf"
    theirs = gguf.GGUFReader(path).fields["tokenizer.ggml.scores"]
    for reach in (lambda f: f[2], lambda f: list(f)[2], lambda f: f._asdict()["parts"], lambda f: copy.copy(f)[2]):
        o = gguf_grammar.GGUFReader(path).fields["tokenizer.ggml.scores"]
        parts = reach(o)
        assert type(parts) is list and len(parts) == len(theirs.parts)
        assert all(a.tobytes() == b.tobytes() for a, b in zip(parts[:50], theirs.parts[:50]))


def test_contents_selectors_as_gguf_py():
    path = CASES / "llama-8-tokens.gguf"
    theirs, ours = gguf.GGUFReader(path), gguf_grammar.GGUFReader(path)
    for key in ("tokenizer.ggml.tokens", "tokenizer.ggml.scores", "general.architecture"):
        for sel in (np.int64(1), 1.0, "a", True, None):
            def outcome(f):
                try:
                    return f.contents(sel)
                except Exception as e:  # noqa: BLE001
                    return type(e), str(e)
            fresh = gguf_grammar.GGUFReader(path).fields[key]  # parts not yet read
            assert outcome(fresh) == outcome(theirs.fields[key]) == outcome(ours.fields[key]), (key, sel)


def edit(reader):
    """The same edits through parts: a u32, a string's bytes, an array's string and float."""
    f = reader.fields["tokenizer.ggml.bos_token_id"]
    f.parts[f.data[0]][0] = 777
    f = reader.fields["general.architecture"]
    f.parts[f.data[0]][:2] = np.frombuffer(b"XY", dtype=np.uint8)
    f = reader.fields["tokenizer.ggml.tokens"]
    f.parts[f.data[5]][0] = ord("Q")
    f = reader.fields["tokenizer.ggml.scores"]
    f.parts[f.data[3]][0] = 1.5


def every_contents(reader):
    return {name: f.contents() for name, f in reader.fields.items()}


def test_mode_c_edits_are_seen_and_not_written(tmp_path):
    src = CASES / "llama-8-tokens.gguf"
    path = tmp_path / "m.gguf"
    shutil.copyfile(src, path)
    theirs, ours = gguf.GGUFReader(path, "c"), gguf_grammar.GGUFReader(path, "c")
    edit(theirs)
    edit(ours)
    assert every_contents(ours) == every_contents(theirs)
    assert ours.fields["tokenizer.ggml.bos_token_id"].contents() == 777
    assert path.read_bytes() == src.read_bytes()


def test_mode_c_writes_to_the_map_are_seen_before_parts_are_read(tmp_path):
    path = CASES / "llama-8-tokens.gguf"
    theirs, ours = gguf.GGUFReader(path, "c"), gguf_grammar.GGUFReader(path, "c")
    for r in (theirs, ours):
        t = r.fields["tokenizer.ggml.tokens"]
        # the first token's length, grown by 3 in the map: gguf-py's parts are fixed at open
        at = t.offset + 8 + len(t.name) + 4 + 4 + 8
        r.data[at] += 3
        s = r.fields["tokenizer.ggml.scores"]
        r.data[s.offset + 8 + len(s.name) + 4 + 12 + 4 * 7 + 3] = 0x41
    ours_fresh = {k: ours.fields[k].contents() for k in ("tokenizer.ggml.tokens", "tokenizer.ggml.scores")}
    assert ours_fresh == {k: theirs.fields[k].contents() for k in ours_fresh}
    assert every_contents(ours) == every_contents(theirs)


def test_mode_r_plus_writes_as_gguf_py(tmp_path):
    src = CASES / "llama-8-tokens.gguf"
    a, b = tmp_path / "a.gguf", tmp_path / "b.gguf"
    shutil.copyfile(src, a)
    shutil.copyfile(src, b)
    theirs, ours = gguf.GGUFReader(a, "r+"), gguf_grammar.GGUFReader(b, "r+")
    edit(theirs)
    edit(ours)
    assert every_contents(ours) == every_contents(theirs)
    del theirs, ours
    assert a.read_bytes() == b.read_bytes() != src.read_bytes()


def test_paths_and_os_errors(tmp_path):
    path = CASES / "llama-8-tokens.gguf"
    for arg in (str(path), bytes(str(path), "utf-8"), path):
        assert gguf_grammar.GGUFReader(arg).fields.keys() == gguf.GGUFReader(arg).fields.keys()
    with open(path, "rb") as f:
        assert len(gguf_grammar.GGUFReader(f).tensors) == 12
    for bad, error in ((tmp_path, IsADirectoryError), (tmp_path / "none.gguf", FileNotFoundError)):
        for reader in (gguf.GGUFReader, gguf_grammar.GGUFReader):
            with pytest.raises(error):
                reader(bad)


def test_pickle_and_copy():
    path = CASES / "llama-8-tokens.gguf"
    ours = gguf_grammar.GGUFReader(path)
    for again in (pickle.loads(pickle.dumps(ours)), copy.deepcopy(ours)):
        assert every_contents(again) == every_contents(ours)
        assert [t.name for t in again.tensors] == [t.name for t in ours.tensors]
    f = pickle.loads(pickle.dumps(ours.fields["tokenizer.ggml.tokens"]))
    assert f.contents() == ours.fields["tokenizer.ggml.tokens"].contents()
    t = pickle.loads(pickle.dumps(ours.tensors[0]))
    assert np.array_equal(t.data, ours.tensors[0].data) and t.tensor_type is ours.tensors[0].tensor_type
    c = gguf_grammar.GGUFReader(path, "c")  # not by path: the map's bytes, as gguf-py pickles
    assert every_contents(pickle.loads(pickle.dumps(c))) == every_contents(ours)


def test_exceptions_pickle_with_their_attributes():
    with pytest.raises(gguf_grammar.GGUFError) as caught:
        gguf_grammar.GGUFReader(CASES / "bad-magic.gguf")
    e = caught.value
    assert type(e).__module__ == "gguf_grammar"
    again = pickle.loads(pickle.dumps(e))
    assert type(again) is type(e) and str(again) == str(e)
    assert (again.code, again.offset, again.path) == (e.code, e.offset, e.path)


def test_private_helpers_as_gguf_py(pair):
    theirs, ours = pair
    for name, t in list(theirs.fields.items())[3:]:
        assert [p.tobytes() for p in ours._get_str(t.offset)] == [p.tobytes() for p in theirs._get_str(t.offset)]
        value_at = t.offset + 8 + len(t.name.encode()) + 4
        raw_type = t.parts[2][0]
        a, b = ours._get_field_parts(value_at, raw_type), theirs._get_field_parts(value_at, raw_type)
        assert (a[0], a[2], a[3]) == (b[0], b[2], b[3]), name
        assert [p.tobytes() for p in a[1]] == [p.tobytes() for p in b[1]], name
    for o, t in zip(ours.tensors, theirs.tensors):
        f, g = ours._get_tensor_info_field(t.field.offset), theirs._get_tensor_info_field(t.field.offset)
        assert (f.name, f.data, [p.tobytes() for p in f.parts]) == (g.name, g.data, [p.tobytes() for p in g.parts])
    # _build_fields / _build_tensor_info / _build_tensors rebuild what open built
    kv_count = int(theirs.fields["GGUF.kv_count"].parts[0][0])
    tensor_count = int(theirs.fields["GGUF.tensor_count"].parts[0][0])
    for r in (ours, theirs):
        r.fields = {k: v for k, v in list(r.fields.items())[:3]}
        end = r._build_fields(24, kv_count)
        end, infos = r._build_tensor_info(end, tensor_count)
        r._build_tensors(ours.data_offset, infos)
    assert every_contents(ours) == every_contents(theirs)
    assert [(t.name, t.n_bytes, t.data.tobytes()) for t in ours.tensors] == [
        (t.name, t.n_bytes, t.data.tobytes()) for t in theirs.tensors
    ]
