"""``GGUFReader``: a drop-in for gguf-py 0.19.0's ``gguf.GGUFReader``, for reading.

The header is parsed by the Rust crate; fields' ``parts`` and ``data`` (numpy views into the
memory-mapped file, exactly as gguf-py builds them) and tensors' ``shape``, ``data`` and
``field`` are made only when first asked for.
"""

from __future__ import annotations

import os
import sys
from collections import OrderedDict
from typing import Any, Callable, Literal, Union

import numpy as np

from . import _native
from ._document import _dequantize
from ._errors import GGUFRejectedError
from ._types import GGMLQuantizationType, GGUFEndian, GGUFValueType

# Types whose tensor data gguf-py views as numbers rather than bytes.
_ELEMENT_DTYPES = {
    GGMLQuantizationType.F16: np.float16,
    GGMLQuantizationType.F32: np.float32,
    GGMLQuantizationType.F64: np.float64,
    GGMLQuantizationType.I8: np.int8,
    GGMLQuantizationType.I16: np.int16,
    GGMLQuantizationType.I32: np.int32,
    GGMLQuantizationType.I64: np.int64,
}

# Where gguf-py 0.19.0 departs from ggml, this reader follows ggml: it knows type 42 (q2_0),
# and sizes q8_1 blocks as 36 bytes (gguf-py: 40), so gguf-py's rejections for these
# two reasons do not apply (see _reject_as_gguf_py).
_FOLLOW_GGML = {"tensor-type-not-in-gguf-py"}

_Layout = tuple[list[tuple[int, str, int]], list[int]]


class ReaderField:
    """A metadata field, as gguf-py's ``ReaderField``: ``offset``, ``name``, ``types``,
    ``contents()``; ``parts`` and ``data`` are built on first access."""

    __slots__ = ("offset", "name", "types", "_layout", "_contents", "_view", "_parts", "_data")

    def __init__(
        self,
        offset: int,
        name: str,
        types: list[GGUFValueType],
        layout: Callable[[], _Layout],
        contents: Callable[[Any], Any],
        view: Callable[[int, str, int], np.ndarray],
    ):
        self.offset = offset
        self.name = name
        self.types = types
        self._layout = layout
        self._contents = contents
        self._view = view
        self._parts: list[np.ndarray] | None = None
        self._data: list[int] | None = None

    def _build(self) -> None:
        specs, data = self._layout()
        self._parts = [self._view(offset, code, count) for offset, code, count in specs]
        self._data = data

    @property
    def parts(self) -> list[np.ndarray]:
        """Every numpy part of the field (length, bytes, type tags, values), in file order."""
        if self._parts is None:
            self._build()
        return self._parts  # type: ignore[return-value]

    @property
    def data(self) -> list[int]:
        """Indices into ``parts`` of the parts that hold the value itself."""
        if self._data is None:
            self._build()
        return self._data  # type: ignore[return-value]

    def contents(self, index_or_slice: int | slice = slice(None)) -> Any:
        """The value: a number, bool or str, or for an array the list of its elements (nested
        arrays flattened), indexed or sliced by ``index_or_slice``."""
        return self._contents(index_or_slice)

    def __repr__(self) -> str:
        return f"ReaderField(offset={self.offset}, name={self.name!r}, types={self.types!r})"


class ReaderTensor:
    """A tensor, as gguf-py's ``ReaderTensor``."""

    __slots__ = ("name", "tensor_type", "n_elements", "n_bytes", "data_offset", "_reader", "_index", "_info", "_cache")

    def __init__(self, reader: GGUFReader, index: int, info: tuple, block: tuple[int, int]):
        name, _offset, dims, type_id, relative, _abs, _n = info
        self.name: str = str(name, encoding="utf-8")
        self.tensor_type = GGMLQuantizationType(type_id)
        n_elements = 1
        for d in dims:  # numpy's uint64 product wraps, and gguf-py takes it as is
            n_elements = (n_elements * d) % (1 << 64)
        block_size, type_size = block
        self.n_elements: int = n_elements
        self.n_bytes: int = n_elements * type_size // block_size
        self.data_offset: int = reader.data_offset + relative
        self._reader = reader
        self._index = index
        self._info = info
        self._cache: dict[str, Any] = {}

    @property
    def shape(self) -> np.ndarray:
        """The dims as stored (``ne0`` first), a uint64 view into the file."""
        if "shape" not in self._cache:
            name, offset, dims, *_ = self._info
            self._cache["shape"] = self._reader._get_code(offset + 8 + len(name) + 4, "u8", len(dims))
        return self._cache["shape"]

    @property
    def data(self) -> np.ndarray:
        """The tensor's bytes, a zero-copy view of the mapped file: elements for float and
        integer types (shape reversed, as numpy orders it), bytes per row for quantized types."""
        if "data" not in self._cache:
            dims = self._info[2]
            np_dims = tuple(reversed(dims))
            item_type = _ELEMENT_DTYPES.get(self.tensor_type)
            if item_type is not None:
                count = self.n_elements
            else:
                item_type, count = np.uint8, self.n_bytes
                block_size, type_size = self._reader._block(self.tensor_type)
                if np_dims[-1] % block_size != 0:
                    raise ValueError(
                        f"Quantized tensor row size ({np_dims[-1]}) is not a multiple of "
                        f"{self.tensor_type.name} block size ({block_size})"
                    )
                np_dims = (*np_dims[:-1], np_dims[-1] // block_size * type_size)
            view = self._reader._get(self.data_offset, item_type, count)
            self._cache["data"] = view.reshape(np_dims)
        return self._cache["data"]

    def dequantize(self) -> np.ndarray:
        """The tensor's values as a new float32 array, computed in Rust, equal bit for bit to
        ``gguf.quants.dequantize(tensor.data, tensor.tensor_type)`` (same shape: the dims
        reversed) and many times faster. ``NotImplementedError`` for the types gguf-py
        cannot dequantise either.

        >>> from gguf_grammar import GGUFReader
        >>> GGUFReader("tests/conformance/cases/alignment-64.gguf").tensors[1].dequantize()
        array([-1.25 , -0.375,  0.5  ,  1.375, -1.75 , -0.875,  0.   ,  0.875],
              dtype=float32)
        """
        return _dequantize(self._reader._doc, self._index, self._info[2])

    @property
    def field(self) -> ReaderField:
        """The tensor info as a field: parts name length, name, n_dims, dims, type, offset."""
        if "field" not in self._cache:
            name_bytes, offset, dims, *_ = self._info
            n = len(name_bytes)
            dims_at = offset + 8 + n + 4
            after = dims_at + 8 * len(dims)
            specs = [
                (offset, "u8", 1),
                (offset + 8, "u1", n),
                (offset + 8 + n, "u4", 1),
                (dims_at, "u8", len(dims)),
                (after, "u4", 1),
                (after + 4, "u8", 1),
            ]
            self._cache["field"] = ReaderField(
                offset, self.name, [], lambda: (specs, [1, 3, 4, 5]), lambda _: None, self._reader._get_code
            )
        return self._cache["field"]

    def __repr__(self) -> str:
        return (
            f"ReaderTensor(name={self.name!r}, tensor_type={self.tensor_type!r}, "
            f"n_elements={self.n_elements}, n_bytes={self.n_bytes}, data_offset={self.data_offset})"
        )


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
    in ggml. Fields and tensors are objects, not tuples.
    """

    byte_order: Literal["I", "S"] = "I"
    alignment: int = 32
    data_offset: int

    def __init__(self, path: os.PathLike[str] | str, mode: Literal["r", "r+", "c"] = "r"):
        self._doc = doc = _native.Document.open(os.fspath(path))
        self._infos = [doc.tensor(i) for i in range(doc.tensor_count)]
        _reject_as_gguf_py(doc, self._infos)
        self.data = np.memmap(path, mode=mode)
        host_big = sys.byteorder == "big"
        file_big = doc.endian == "big"
        self.byte_order = "S" if host_big != file_big else "I"
        self.endianess = GGUFEndian.BIG if file_big else GGUFEndian.LITTLE
        self.alignment = doc.alignment
        self.data_offset = doc.tensor_data_offset
        self.fields: OrderedDict[str, ReaderField] = OrderedDict()
        for name, offset, code, value in (
            ("GGUF.version", 4, "u4", doc.version),
            ("GGUF.tensor_count", 8, "u8", doc.tensor_count),
            ("GGUF.kv_count", 16, "u8", doc.kv_count),
        ):
            kind = GGUFValueType.UINT32 if code == "u4" else GGUFValueType.UINT64
            spec = ([(offset, code, 1)], [0])
            self.fields[name] = ReaderField(
                offset, name, [kind], lambda spec=spec: spec, lambda _, v=value: v, self._get_code
            )
        for i in range(len(doc)):
            key, offset, value_offset, tag, types = doc.kv(i)
            name = str(key, encoding="utf-8")
            self.fields[name] = ReaderField(
                offset,
                name,
                [GGUFValueType(t) for t in types],
                lambda key=key, at=value_offset, tag=tag: _kv_layout(doc, key, at, tag),
                lambda sel, i=i: doc.contents(i, sel),
                self._get_code,
            )
        blocks = {}  # type id → (block size, type size)
        self.tensors: list[ReaderTensor] = []
        for index, info in enumerate(self._infos):
            block = blocks.get(info[3]) or blocks.setdefault(info[3], self._block(info[3]))
            self.tensors.append(ReaderTensor(self, index, info, block))

    def get_field(self, key: str) -> Union[ReaderField, None]:
        """The field named ``key``, or None."""
        return self.fields.get(key, None)

    def get_tensor(self, idx: int) -> ReaderTensor:
        """Tensor number ``idx``."""
        return self.tensors[idx]

    @staticmethod
    def _block(type_id: int) -> tuple[int, int]:
        info = _native.ggml_type_info(int(type_id))
        if info is None:  # ruled out by _reject_as_gguf_py
            raise ValueError(f"{type_id} is not a valid GGMLQuantizationType")
        return info[1], info[2]

    def _get(self, offset: int, dtype: Any, count: int = 1) -> np.ndarray:
        """gguf-py's ``_get``: ``count`` items of ``dtype`` at ``offset``, in the file's order."""
        count = int(count)
        itemsize = int(np.empty([], dtype=dtype).itemsize)
        arr = self.data[offset : offset + itemsize * count].view(dtype=dtype)[:count]
        return arr.view(arr.dtype.newbyteorder(self.byte_order))

    def _get_code(self, offset: int, code: str, count: int) -> np.ndarray:
        return self._get(offset, np.dtype(code), count)


def _kv_layout(doc: Any, key: bytes, value_offset: int, tag: int) -> _Layout:
    """The parts of a key/value: key length, key bytes, type tag, then the value's parts."""
    offset = value_offset - 4 - len(key) - 8
    head = [(offset, "u8", 1), (offset + 8, "u1", len(key)), (value_offset - 4, "u4", 1)]
    specs, data = doc.value_layout(value_offset, tag)
    return head + specs, [i + len(head) for i in data]


def _reject_as_gguf_py(doc: Any, infos: list[tuple]) -> None:
    """Raises ``GGUFRejectedError`` for the first reason gguf-py 0.19.0 would refuse the file
    for (except where it departs from ggml, see ``_FOLLOW_GGML``)."""
    q8_1_in_file = set()  # data offsets of q8_1 tensors inside the file by ggml's size
    for _name, _at, _dims, type_id, _rel, data_offset, n_bytes in infos:
        if type_id == GGMLQuantizationType.Q8_1 and n_bytes is not None and data_offset + n_bytes <= doc.size:
            q8_1_in_file.add(data_offset)
    for code, _severity, start, _end, path, message, _rejected_by in doc.gguf_py_rejections():
        if code in _FOLLOW_GGML:
            continue
        if code == "tensor-data-past-eof" and start in q8_1_in_file:
            continue  # past the end only by gguf-py's 40-byte q8_1 blocks
        err = GGUFRejectedError(f"offset {start:#x} ({start}): {path}: {message} [{code}]")
        err.code, err.offset, err.path, err.message = code, start, path, message
        raise err
