"""``GGUFReader``: a drop-in for gguf-py 0.19.0's ``gguf.GGUFReader``.

The header is parsed by the Rust crate, from the reader's own ``np.memmap``: what Python writes
through the parts' views (modes ``'r+'`` and ``'c'``) is what ``contents()`` reads. A field's
``parts`` and ``data`` are plain lists, filled the first time they are read, in one native call
from the field's table of part offsets; until then ``contents()`` reads the values natively.
Tensors are built at open, as gguf-py builds them.
"""

from __future__ import annotations

import os
import sys
import weakref
from collections import OrderedDict
from typing import Any, Literal, NamedTuple, TypeVar, Union

import numpy as np
import numpy.typing as npt

from . import _native
from . import _types
from ._document import _dequantize
from ._errors import GGUFRejectedError

GGUF_DEFAULT_ALIGNMENT = 32

# Where gguf-py 0.19.0 departs from ggml, this reader follows ggml: it knows type 42 (q2_0),
# and sizes q8_1 blocks as 36 bytes (gguf-py: 40), so gguf-py's rejections for these
# two reasons do not apply (see _reject_as_gguf_py).
_FOLLOW_GGML = {"tensor-type-not-in-gguf-py"}

_ENUMS: Any = None


def _enums() -> Any:
    """gguf-py's ``GGUFValueType``, ``GGMLQuantizationType`` and ``GGUFEndian`` when gguf is
    importable (so that values are its members), else this package's equal IntEnums."""
    global _ENUMS
    if _ENUMS is None:
        try:
            from gguf.constants import GGMLQuantizationType, GGUFEndian, GGUFValueType
        except ImportError:
            GGUFValueType, GGMLQuantizationType, GGUFEndian = (
                _types.GGUFValueType,
                _types.GGMLQuantizationType,
                _types.GGUFEndian,
            )
        _ENUMS = (GGUFValueType, GGMLQuantizationType, GGUFEndian, [GGUFValueType(t) for t in range(13)])
        scalars = {GGUFValueType(int(k)): v for k, v in GGUFReader.gguf_scalar_to_np.items()}
        GGUFReader.gguf_scalar_to_np.clear()
        GGUFReader.gguf_scalar_to_np.update(scalars)
    return _ENUMS


def _quant_type(type_id: int) -> Any:
    members = _enums()[1]
    if type_id in members._value2member_map_:
        return members(type_id)
    return _types.GGMLQuantizationType(type_id)  # q2_0, which gguf-py 0.19.0 lacks


class _Pending:
    """Stands alone in a field's ``parts`` and ``data`` lists until they are first read; then
    the lists are filled in place (so a ``ReaderField`` stays a tuple of plain lists)."""

    __slots__ = ()

    def parts(self) -> list[Any]:
        raise NotImplementedError

    def data(self) -> list[int]:
        raise NotImplementedError

    def contents(self, field: ReaderField, index_or_slice: Any) -> Any:
        return _contents(field, index_or_slice)

    def __repr__(self) -> str:
        return "<not yet read>"


def _pending(items: Any) -> Any:
    if type(items) is list and len(items) == 1 and isinstance(items[0], _Pending):
        return items[0]
    return None


_tuple_get = tuple.__getitem__


def _parts(self: ReaderField) -> list[npt.NDArray[Any]]:
    parts = _tuple_get(self, 2)
    p = _pending(parts)
    if p is not None:
        parts[:] = p.parts()
    return parts


def _data(self: ReaderField) -> list[int]:
    data = _tuple_get(self, 3)
    p = _pending(data)
    if p is not None:
        data[:] = p.data()
    return data


class ReaderField(NamedTuple):
    """A metadata field, as gguf-py's ``ReaderField`` (a ``NamedTuple`` of the same fields).
    ``parts`` (numpy views into the file) and ``data`` are filled when first read."""

    # Offset to start of this field.
    offset: int

    # Name of the field (not necessarily from file data).
    name: str

    # Data parts. Some types have multiple components, such as strings
    # that consist of a length followed by the string data.
    parts: list[npt.NDArray[Any]] = []

    # Indexes into parts that we can call the actual data. For example
    # an array of strings will be populated with indexes to the actual
    # string data.
    data: list[int] = [-1]

    types: list[Any] = []

    def contents(self, index_or_slice: int | slice = slice(None)) -> Any:
        """The value: a number, bool or str, or for an array the list of its elements
        (nested arrays flattened), indexed or sliced by ``index_or_slice``; as gguf-py's."""
        p = _pending(_tuple_get(self, 2))
        if p is not None:
            return p.contents(self, index_or_slice)
        return _contents(self, index_or_slice)

    def _filled(self) -> ReaderField:
        _parts(self)
        _data(self)
        return self

    def __repr__(self) -> str:
        self._filled()
        return f"ReaderField(offset={self.offset!r}, name={self.name!r}, parts={self.parts!r}, data={self.data!r}, types={self.types!r})"


# Every way to reach the lists goes through the field first, which fills them.
ReaderField.parts = property(_parts, doc="Every numpy part of the field, in file order.")  # type: ignore[assignment,misc]
ReaderField.data = property(_data, doc="Indices into ``parts`` of the parts that hold the value.")  # type: ignore[assignment,misc]


def _through_tuple(name: str) -> Any:
    method = getattr(tuple, name)

    def filled(self: Any, *args: Any) -> Any:
        return method(self._filled(), *[a._filled() if isinstance(a, ReaderField) else a for a in args])

    filled.__name__ = name
    return filled


for _name in ("__getitem__", "__iter__", "__contains__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
              "__add__", "__mul__", "__rmul__", "count", "index"):
    setattr(ReaderField, _name, _through_tuple(_name))
ReaderField.__hash__ = tuple.__hash__  # type: ignore[assignment]  # raises, as gguf-py's: its lists are unhashable


def _contents(self: ReaderField, index_or_slice: Any = slice(None)) -> Any:
    """gguf-py 0.19.0's ``ReaderField.contents``, over the parts."""
    if self.types:
        to_string = lambda x: str(x.tobytes(), encoding='utf-8')  # noqa: E731
        main_type = self.types[0]
        if main_type == _types.GGUFValueType.ARRAY:
            sub_type = self.types[-1]
            if sub_type == _types.GGUFValueType.STRING:
                indices = self.data[index_or_slice]
                if isinstance(index_or_slice, int):
                    return to_string(self.parts[indices])  # type: ignore[index]
                return [to_string(self.parts[idx]) for idx in indices]  # type: ignore[union-attr]
            if isinstance(index_or_slice, int):
                return self.parts[self.data[index_or_slice]].tolist()[0]
            return [pv for idx in self.data[index_or_slice] for pv in self.parts[idx].tolist()]  # type: ignore[union-attr]
        if main_type == _types.GGUFValueType.STRING:
            return to_string(self.parts[-1])
        return self.parts[-1].tolist()[0]
    return None


class ReaderTensor(NamedTuple):
    """A tensor, as gguf-py's ``ReaderTensor`` (a ``NamedTuple`` of the same fields)."""

    name: str
    tensor_type: Any
    shape: npt.NDArray[np.uint32]
    n_elements: int
    n_bytes: int
    data_offset: int
    data: npt.NDArray[Any]
    field: ReaderField

    def dequantize(self) -> np.ndarray:
        """The tensor's values as a new float32 array, computed in Rust, equal bit for bit to
        ``gguf.quants.dequantize(tensor.data, tensor.tensor_type)`` (same shape: the dims
        reversed) and many times faster. ``NotImplementedError`` for the types gguf-py
        cannot dequantise either (not in gguf-py's ``ReaderTensor``).

        >>> from gguf_grammar import GGUFReader
        >>> GGUFReader("tests/conformance/cases/alignment-64.gguf").tensors[1].dequantize()
        array([-1.25 , -0.375,  0.5  ,  1.375, -1.75 , -0.875,  0.   ,  0.875],
              dtype=float32)
        """
        source = _SOURCES.get(id(self.data))
        if source is None:
            raise ValueError("this tensor is not from a gguf_grammar.GGUFReader")
        doc, index = source
        return _dequantize(doc, index, [int(d) for d in self.shape])


# id of a tensor's data view → (native document, tensor index), for ReaderTensor.dequantize;
# an entry goes with its view.
_SOURCES: dict[int, tuple[Any, int]] = {}


class _Source:
    """The reader's bytes as seen by its fields: the native document and typed views of the
    map from every shift, which parts are sliced from (see ``Document.field_parts``)."""

    __slots__ = ("doc", "array", "order", "_bases")

    def __init__(self, doc: Any, array: np.ndarray, order: str):
        self.doc, self.array, self.order = doc, array, order
        self._bases: list[np.ndarray] | None = None

    def bases(self) -> list[np.ndarray]:
        if self._bases is None:
            plain = self.array.view(np.ndarray)  # slicing a memmap costs a Python call per view
            bases = []
            for code in _native.PART_CODES:
                dtype = np.dtype(code).newbyteorder(self.order)
                size = dtype.itemsize
                for shift in range(size):
                    n = max(0, (len(plain) - shift) // size)
                    bases.append(plain[shift : shift + n * size].view(dtype))
            self._bases = bases
        return self._bases

    def view(self, offset: int, code: str, count: int) -> np.ndarray:
        k = _native.PART_CODES.index(code)
        size = np.dtype(code).itemsize
        start = sum(np.dtype(c).itemsize for c in _native.PART_CODES[:k]) + offset % size
        first = offset // size
        return self.bases()[start][first : first + count]


class _KvParts(_Pending):
    """Key/value ``index`` of a native document."""

    __slots__ = ("source", "index")

    def __init__(self, source: _Source, index: int):
        self.source, self.index = source, index

    def parts(self) -> list[Any]:
        return self.source.doc.field_parts(self.index, self.source.bases())

    def data(self) -> list[int]:
        return self.source.doc.field_data(self.index)

    def contents(self, field: ReaderField, index_or_slice: Any) -> Any:
        types = field.types
        if not types:
            return None
        doc, i = self.source.doc, self.index
        if types[0] == _types.GGUFValueType.ARRAY:
            strings = types[-1] == _types.GGUFValueType.STRING
            if isinstance(index_or_slice, int):
                return doc.field_item(i, index_or_slice, strings)
            if isinstance(index_or_slice, slice):
                return doc.field_items(i, index_or_slice, strings)
            # gguf-py indexes `data` with it, then iterates the result: raise what that raises.
            return _contents(field, index_or_slice)
        return doc.field_scalar(i, types[0] == _types.GGUFValueType.STRING)


class _TensorInfoParts(_Pending):
    """The parts of a tensor info: name length, name, n_dims, dims (the tensor's ``shape``
    array itself, as in gguf-py), type, offset."""

    __slots__ = ("source", "offset", "name_len", "shape")

    def __init__(self, source: _Source, offset: int, name_len: int, shape: np.ndarray):
        self.source, self.offset, self.name_len, self.shape = source, offset, name_len, shape

    def parts(self) -> list[Any]:
        at, n, view = self.offset, self.name_len, self.source.view
        after = at + 8 + n + 4 + 8 * len(self.shape)
        return [view(at, "u8", 1), view(at + 8, "u1", n), view(at + 8 + n, "u4", 1), self.shape,
                view(after, "u4", 1), view(after + 4, "u8", 1)]

    def data(self) -> list[int]:
        return [1, 3, 4, 5]


class GGUFReader:
    """Reads a GGUF file as gguf-py 0.19.0's ``gguf.GGUFReader`` does, with the same
    attributes, from a header parsed in Rust.

    >>> from gguf_grammar import GGUFReader
    >>> reader = GGUFReader("tests/corpus/ggml-vocab-llama-spm.gguf")
    >>> reader.fields["tokenizer.ggml.tokens"].contents(1)
    '<s>'

    Differences, each deliberate: a file gguf-py accepts by accident (a string running past
    the end of the file) raises ``GGUFError``; ``GGUFError`` (a ``ValueError``) is raised
    where gguf-py raises ``ValueError``, ``KeyError``, ``IndexError`` or
    ``UnicodeDecodeError`` at open; type 42 (q2_0) is read, and q8_1 blocks are 36 bytes, as
    in ggml. The parts of fields are views of type ``np.ndarray`` (gguf-py: ``np.memmap``)
    whose base is the reader's map. A reader opened from a path in mode ``'r'`` pickles as
    that path and mode (it opens the file again when loaded).
    """

    # I - same as host, S - swapped
    byte_order: Literal['I', 'S'] = 'I'
    alignment: int = GGUF_DEFAULT_ALIGNMENT
    data_offset: int

    # Note: Internal helper, API may change.
    gguf_scalar_to_np: dict[Any, type[np.generic]] = {
        _types.GGUFValueType.UINT8: np.uint8,
        _types.GGUFValueType.INT8: np.int8,
        _types.GGUFValueType.UINT16: np.uint16,
        _types.GGUFValueType.INT16: np.int16,
        _types.GGUFValueType.UINT32: np.uint32,
        _types.GGUFValueType.INT32: np.int32,
        _types.GGUFValueType.FLOAT32: np.float32,
        _types.GGUFValueType.UINT64: np.uint64,
        _types.GGUFValueType.INT64: np.int64,
        _types.GGUFValueType.FLOAT64: np.float64,
        _types.GGUFValueType.BOOL: np.bool_,
    }

    _DT = TypeVar('_DT', bound=npt.DTypeLike)

    def __init__(self, path: os.PathLike[str] | str, mode: Literal['r', 'r+', 'c'] = 'r'):
        value_types, _, endians, by_tag = _enums()
        try:
            self.data = np.memmap(path, mode=mode)  # gguf-py's first step: the same OS errors
        except ValueError as e:
            if str(e) != "cannot mmap an empty file":
                raise
            _native.Document.parse(b"")  # raises the located error: truncated at offset 0
            raise
        self._doc = doc = _native.Document.from_array(self.data)
        self._opened = (path, mode)
        infos = [doc.tensor(i) for i in range(doc.tensor_count)]
        _reject_as_gguf_py(doc, infos)
        if mode != 'r':
            doc.freeze()  # gguf-py's parts are fixed at open, whatever is written later
        file_big = doc.endian == "big"
        if (sys.byteorder == "big") != file_big:
            self.byte_order = 'S'
        self.endianess = endians.BIG if file_big else endians.LITTLE
        source = _Source(doc, self.data, self.byte_order)
        self.fields: OrderedDict[str, ReaderField] = OrderedDict()
        self.tensors: list[ReaderTensor] = []
        counts = self._get(8, np.uint64, 2)
        version = self._get(4, np.uint32)
        self.fields['GGUF.version'] = ReaderField(4, 'GGUF.version', [version], [0], [value_types.UINT32])
        self.fields['GGUF.tensor_count'] = ReaderField(8, 'GGUF.tensor_count', [counts[:1]], [0], [value_types.UINT64])
        self.fields['GGUF.kv_count'] = ReaderField(16, 'GGUF.kv_count', [counts[1:]], [0], [value_types.UINT64])
        for i in range(len(doc)):
            key, offset, _value_offset, _tag, types = doc.kv(i)
            name = str(key, encoding='utf-8')
            pending = _KvParts(source, i)
            self.fields[name] = ReaderField(offset, name, [pending], [pending], [by_tag[t] for t in types])
        new_align = self.fields.get('general.alignment')
        if new_align is not None:
            self.alignment = new_align.parts[-1][0]
        offs = doc.tensor_infos_end
        padding = offs % self.alignment
        if padding != 0:
            offs += self.alignment - padding
        self.data_offset = offs
        self._build_native_tensors(source, infos)

    def _build_native_tensors(self, source: _Source, infos: list[tuple]) -> None:
        blocks: dict[int, tuple[int, int]] = {}
        for index, (name_bytes, offset, dims, type_id, relative, _abs, _n) in enumerate(infos):
            ggml_type = _quant_type(type_id)
            block_size, type_size = blocks.get(type_id) or blocks.setdefault(type_id, self._block(type_id))
            n_elems = 1
            for d in dims:  # numpy's uint64 product wraps, and gguf-py takes it as is
                n_elems = (n_elems * d) % (1 << 64)
            n_bytes = n_elems * type_size // block_size
            shape = self._get(offset + 8 + len(name_bytes) + 4, np.uint64, len(dims))
            data_offs = int(self.data_offset + np.uint64(relative))
            np_dims = tuple(reversed(dims))
            item_type = _ELEMENT_DTYPES.get(int(type_id))
            if item_type is not None:
                item_count = n_elems
            else:
                item_type, item_count = np.uint8, n_bytes
                if np_dims[-1] % block_size != 0:
                    raise ValueError(
                        f"Quantized tensor row size ({np_dims[-1]}) is not a multiple of "
                        f"{ggml_type.name} block size ({block_size})"
                    )
                np_dims = (*np_dims[:-1], np_dims[-1] // block_size * type_size)
            name = str(name_bytes, encoding='utf-8')
            field = ReaderField(offset, name, [_TensorInfoParts(source, offset, len(name_bytes), shape)], [1, 3, 4, 5], [])
            data = self._get(data_offs, item_type, item_count).reshape(np_dims)
            _SOURCES[id(data)] = (self._doc, index)
            weakref.finalize(data, _SOURCES.pop, id(data), None)
            self.tensors.append(ReaderTensor(
                name=name,
                tensor_type=ggml_type,
                shape=shape,
                n_elements=n_elems,
                n_bytes=n_bytes,
                data_offset=data_offs,
                data=data,
                field=field,
            ))

    def __reduce_ex__(self, protocol: Any) -> Any:
        path, mode = getattr(self, "_opened", (None, None))
        if mode == 'r' and isinstance(path, (str, bytes, os.PathLike)):
            return (type(self), (path, mode))
        return super().__reduce_ex__(protocol)

    def __getstate__(self) -> dict[str, Any]:
        # The native document is not pickled: every field is filled (by pickling it) first.
        return {k: v for k, v in self.__dict__.items() if k not in ("_doc", "_opened")}

    # Fetch a key/value metadata field by key.
    def get_field(self, key: str) -> Union[ReaderField, None]:
        return self.fields.get(key, None)

    # Fetch a tensor from the list by index.
    def get_tensor(self, idx: int) -> ReaderTensor:
        return self.tensors[idx]

    @staticmethod
    def _block(type_id: int) -> tuple[int, int]:
        info = _native.ggml_type_info(int(type_id))
        if info is None:  # ruled out by _reject_as_gguf_py
            raise ValueError(f"{type_id} is not a valid GGMLQuantizationType")
        return info[1], info[2]

    # The private helpers below are gguf-py 0.19.0's (MIT), for code that calls them; they
    # build fields the slow way, over numpy views, exactly as gguf-py does.

    def _get(
        self, offset: int, dtype: npt.DTypeLike, count: int = 1, override_order: None | Literal['I', 'S', '<'] = None,
    ) -> npt.NDArray[Any]:
        count = int(count)
        itemsize = int(np.empty([], dtype=dtype).itemsize)
        end_offs = offset + itemsize * count
        arr = self.data[offset:end_offs].view(dtype=dtype)[:count]
        return arr.view(arr.dtype.newbyteorder(self.byte_order if override_order is None else override_order))

    def _push_field(self, field: ReaderField, skip_sum: bool = False) -> int:
        if field.name in self.fields:
            raise KeyError(f'Duplicate {field.name} already in list at offset {field.offset}')
        self.fields[field.name] = field
        return 0 if skip_sum else sum(int(part.nbytes) for part in field.parts)

    def _get_str(self, offset: int) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint8]]:
        slen = self._get(offset, np.uint64)
        return slen, self._get(offset + 8, np.uint8, slen[0])

    def _get_field_parts(
        self, orig_offs: int, raw_type: int,
    ) -> tuple[int, list[npt.NDArray[Any]], list[int], list[Any]]:
        value_types = _enums()[0]
        offs = orig_offs
        types: list[Any] = []
        gtype = value_types(raw_type)
        types.append(gtype)
        if gtype == value_types.STRING:
            sparts: list[npt.NDArray[Any]] = list(self._get_str(offs))
            size = sum(int(part.nbytes) for part in sparts)
            return size, sparts, [1], types
        nptype = self.gguf_scalar_to_np.get(gtype)
        if nptype is not None:
            val = self._get(offs, nptype)
            return int(val.nbytes), [val], [0], types
        if gtype == value_types.ARRAY:
            raw_itype = self._get(offs, np.uint32)
            offs += int(raw_itype.nbytes)
            alen = self._get(offs, np.uint64)
            offs += int(alen.nbytes)
            aparts: list[npt.NDArray[Any]] = [raw_itype, alen]
            data_idxs: list[int] = []
            for idx in range(alen[0]):
                curr_size, curr_parts, curr_idxs, curr_types = self._get_field_parts(offs, raw_itype[0])
                if idx == 0:
                    types += curr_types
                idxs_offs = len(aparts)
                aparts += curr_parts
                data_idxs += (idx + idxs_offs for idx in curr_idxs)
                offs += curr_size
            return offs - orig_offs, aparts, data_idxs, types
        raise ValueError(f'Unknown/unhandled field type {gtype}')

    def _get_tensor_info_field(self, orig_offs: int) -> ReaderField:
        offs = orig_offs
        name_len, name_data = self._get_str(offs)
        offs += int(name_len.nbytes + name_data.nbytes)
        n_dims = self._get(offs, np.uint32)
        offs += int(n_dims.nbytes)
        dims = self._get(offs, np.uint64, n_dims[0])
        offs += int(dims.nbytes)
        raw_dtype = self._get(offs, np.uint32)
        offs += int(raw_dtype.nbytes)
        offset_tensor = self._get(offs, np.uint64)
        offs += int(offset_tensor.nbytes)
        return ReaderField(
            orig_offs,
            str(bytes(name_data), encoding='utf-8'),
            [name_len, name_data, n_dims, dims, raw_dtype, offset_tensor],
            [1, 3, 4, 5],
        )

    def _build_fields(self, offs: int, count: int) -> int:
        for _ in range(count):
            orig_offs = offs
            kv_klen, kv_kdata = self._get_str(offs)
            offs += int(kv_klen.nbytes + kv_kdata.nbytes)
            raw_kv_type = self._get(offs, np.uint32)
            offs += int(raw_kv_type.nbytes)
            parts: list[npt.NDArray[Any]] = [kv_klen, kv_kdata, raw_kv_type]
            idxs_offs = len(parts)
            field_size, field_parts, field_idxs, field_types = self._get_field_parts(offs, raw_kv_type[0])
            parts += field_parts
            self._push_field(ReaderField(
                orig_offs,
                str(bytes(kv_kdata), encoding='utf-8'),
                parts,
                [idx + idxs_offs for idx in field_idxs],
                field_types,
            ), skip_sum=True)
            offs += field_size
        return offs

    def _build_tensor_info(self, offs: int, count: int) -> tuple[int, list[ReaderField]]:
        tensor_fields = []
        for _ in range(count):
            field = self._get_tensor_info_field(offs)
            offs += sum(int(part.nbytes) for part in field.parts)
            tensor_fields.append(field)
        return offs, tensor_fields

    def _build_tensors(self, start_offs: int, fields: list[ReaderField]) -> None:
        tensors = []
        tensor_names = set()
        for field in fields:
            _name_len, name_data, _n_dims, dims, raw_dtype, offset_tensor = field.parts
            tensor_name = str(bytes(name_data), encoding='utf-8')
            if tensor_name in tensor_names:
                raise ValueError(f'Found duplicated tensor with name {tensor_name}')
            tensor_names.add(tensor_name)
            ggml_type = _quant_type(int(raw_dtype[0]))
            n_elems = int(np.prod(dims))
            np_dims = tuple(reversed(dims.tolist()))
            block_size, type_size = self._block(ggml_type)
            n_bytes = n_elems * type_size // block_size
            data_offs = int(start_offs + offset_tensor[0])
            item_type: npt.DTypeLike = _ELEMENT_DTYPES.get(int(ggml_type))
            if item_type is not None:
                item_count = n_elems
            else:
                item_count, item_type = n_bytes, np.uint8
                if np_dims[-1] % block_size != 0:
                    raise ValueError(
                        f"Quantized tensor row size ({np_dims[-1]}) is not a multiple of "
                        f"{ggml_type.name} block size ({block_size})"
                    )
                np_dims = (*np_dims[:-1], np_dims[-1] // block_size * type_size)
            tensors.append(ReaderTensor(
                name=tensor_name,
                tensor_type=ggml_type,
                shape=dims,
                n_elements=n_elems,
                n_bytes=n_bytes,
                data_offset=data_offs,
                data=self._get(data_offs, item_type, item_count).reshape(np_dims),
                field=field,
            ))
        self.tensors = tensors


# Types whose tensor data gguf-py views as numbers rather than bytes (by ggml type id).
_ELEMENT_DTYPES: dict[int, Any] = {0: np.float32, 1: np.float16, 28: np.float64, 24: np.int8, 25: np.int16, 26: np.int32, 27: np.int64}


def _reject_as_gguf_py(doc: Any, infos: list[tuple]) -> None:
    """Raises ``GGUFRejectedError`` for the first reason gguf-py 0.19.0 would refuse the file
    for (except where it departs from ggml, see ``_FOLLOW_GGML``)."""
    q8_1_in_file = set()  # data offsets of q8_1 tensors inside the file by ggml's size
    for _name, _at, _dims, type_id, _rel, data_offset, n_bytes in infos:
        if type_id == _types.GGMLQuantizationType.Q8_1 and n_bytes is not None and data_offset + n_bytes <= doc.size:
            q8_1_in_file.add(data_offset)
    for code, _severity, start, _end, path, message, _rejected_by in doc.gguf_py_rejections():
        if code in _FOLLOW_GGML:
            continue
        if code == "tensor-data-past-eof" and start in q8_1_in_file:
            continue  # past the end only by gguf-py's 40-byte q8_1 blocks
        err = GGUFRejectedError(f"offset {start:#x} ({start}): {path}: {message} [{code}]")
        err.code, err.offset, err.path, err.message = code, start, path, message
        raise err
