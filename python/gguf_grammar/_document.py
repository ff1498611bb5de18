"""The native API: ``open(path)`` and ``parse(data)`` give a ``Document`` with Python values."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NamedTuple, Optional, Union, overload

import numpy as np

from . import _native, _template
from ._types import GGMLQuantizationType, GGUFValueType

# numpy dtypes of numeric array elements, in little-endian form (the byte order is set per file).
_NUMPY = {
    GGUFValueType.UINT8: "<u1",
    GGUFValueType.INT8: "<i1",
    GGUFValueType.UINT16: "<u2",
    GGUFValueType.INT16: "<i2",
    GGUFValueType.UINT32: "<u4",
    GGUFValueType.INT32: "<i4",
    GGUFValueType.FLOAT32: "<f4",
    GGUFValueType.BOOL: "<?",
    GGUFValueType.UINT64: "<u8",
    GGUFValueType.INT64: "<i8",
    GGUFValueType.FLOAT64: "<f8",
}


def open(path: Union[str, os.PathLike[str]]) -> Document:  # noqa: A001 - mirrors io.open
    """Memory-maps and parses the GGUF file at ``path``; only the pages the header occupies
    are read. Raises ``GGUFParseError`` (offset, path) when the bytes are not GGUF, ``OSError``
    when the file cannot be read.

    >>> import gguf_grammar
    >>> doc = gguf_grammar.open("tests/corpus/ggml-vocab-llama-spm.gguf")
    >>> doc.metadata["general.architecture"], len(doc.metadata["tokenizer.ggml.tokens"])
    ('llama', 32000)
    >>> doc.metadata["tokenizer.ggml.scores"].to_numpy()[:3]
    array([0., 0., 0.], dtype=float32)
    >>> [d.code for d in doc.check("spec")]
    []
    """
    path = os.fspath(path)
    return Document(_native.Document.open(path), lambda: np.memmap(path, mode="r"))


def parse(data: Union[bytes, bytearray, memoryview]) -> Document:
    r"""Parses a GGUF file held in memory (a header alone is enough).

    >>> import gguf_grammar
    >>> gguf_grammar.parse(b"GGUF\x03\0\0\0" + bytes(16)).version
    3
    >>> try:
    ...     gguf_grammar.parse(b"GGUF\x03\0\0\0\x01")
    ... except gguf_grammar.GGUFParseError as e:
    ...     print(e.code, e.offset, repr(e.path))
    truncated 8 'header.tensor_count'
    """
    data = bytes(data)
    return Document(_native.Document.parse(data), lambda: np.frombuffer(data, dtype=np.uint8))


class Diagnostic(NamedTuple):
    """A finding of ``Document.check``: ``code`` (stable, e.g. ``"duplicate-key"``),
    ``severity`` (``"error"``, ``"warning"`` or ``"note"``), ``offset`` and ``end`` (byte range,
    or None), ``path`` (the construct), ``message`` and ``rejected_by`` (the references that
    reject a file for it: ``"ggml"``, ``"ggml-data"``, ``"gguf-py"``, ``"spec"``,
    ``"ggml-0.3.16"``, ``"ggml-0.3.16-data"``)."""

    code: str
    severity: str
    offset: Optional[int]
    end: Optional[int]
    path: str
    message: str
    rejected_by: tuple[str, ...]


class Summary(NamedTuple):
    """The figures of ``gguf dump --summary``."""

    architecture: Optional[str]
    name: Optional[str]
    tensor_count: int
    parameters: Optional[int]
    """Sum of the tensors' element counts (None if it overflows)."""
    parameters_label: Optional[str]
    """The parameter count as gguf-py's size label notation (``"135M"``), None without tensors."""
    size_label: Optional[str]
    """``general.size_label`` as stored."""
    file_type: Optional[int]
    tensor_bytes: Optional[int]
    bits_per_weight: Optional[float]
    tensor_types: list[tuple[str, int]]
    """How many tensors have each ggml type, most frequent first."""


class Document:
    """A parsed GGUF file. Values are decoded on access; nothing is read twice."""

    def __init__(self, native: Any, buffer: Any):
        self._native = native
        self._make_buffer = buffer
        self._buffer: Optional[np.ndarray] = None
        self._tensors: Optional[list[Tensor]] = None
        self.metadata: Metadata = Metadata(self)
        """Key → value, in file order (the first value of a duplicated key)."""

    @property
    def version(self) -> int:
        """GGUF version: 1, 2 or 3."""
        return self._native.version

    @property
    def endian(self) -> str:
        """``"little"`` or ``"big"``."""
        return self._native.endian

    @property
    def alignment(self) -> int:
        """``general.alignment`` when it is a non-zero u32, else 32."""
        return self._native.alignment

    @property
    def tensor_data_offset(self) -> int:
        """Where the tensor data starts: the end of the tensor infos, aligned."""
        return self._native.tensor_data_offset

    @property
    def tensors(self) -> list[Tensor]:
        """The tensor descriptors in file order."""
        if self._tensors is None:
            self._tensors = [Tensor(self, i, self._native.tensor(i)) for i in range(self._native.tensor_count)]
        return self._tensors

    def summary(self) -> Summary:
        """Architecture, parameter count, size label, bits per weight (``gguf dump --summary``)."""
        return Summary(**self._native.summary())

    def check(self, profile: str = "strict", schema: bool = False) -> list[Diagnostic]:
        """The diagnostics under ``profile`` (``ggml``, ``ggml-data``, ``ggml-0.3.16``,
        ``ggml-0.3.16-data``, ``gguf-py``, ``spec``, ``strict`` or ``llama.cpp``), and the
        LLaMA-family schema's with ``schema=True``, as ``gguf check``."""
        return [
            Diagnostic(c, s, start, end, p, m, tuple(r))
            for c, s, start, end, p, m, r in self._native.check(profile, schema)
        ]

    def releases(self) -> list[dict[str, Any]]:
        """Which llama.cpp releases load the file, newest first, as ``gguf check --releases
        --json`` gives them: ``release`` (the llama-cpp-python version), ``profile``,
        ``models``, ``loads``, ``vocab_only`` and ``reason`` (``code``, ``offset``, ``path``,
        ``message``; ``None`` when it loads)."""
        return json.loads(self._native.releases_json())

    def accepts(self, profile: str = "strict", schema: bool = False) -> bool:
        """Whether ``profile`` (and the schema, with ``schema=True``) accepts the file."""
        return self._native.accepts(profile, schema)

    def tokenizer(self) -> _native.Tokenizer:
        """The file's tokenizer, as ``gguf_grammar.Tokenizer(path)`` builds it, from this parse."""
        return _native.Tokenizer.from_document(self._native)

    def chat_templates(self) -> dict[Optional[str], str]:
        """The chat templates: ``{None: tokenizer.chat_template, NAME:
        tokenizer.chat_template.NAME, ...}`` (empty when the file has none)."""
        return _template._document_templates(self._native)

    def special_tokens(self) -> dict[str, str]:
        """The special tokens a template sees, as transformers binds them: ``bos_token``,
        ``eos_token``, … that the file's ``tokenizer.ggml.*_token_id`` name."""
        return _template._document_special_tokens(self._native)

    def render_template(self, messages: Any, name: Optional[str] = None, **kwargs: Any) -> str:
        """The file's template ``name`` (None: the default one) rendered for ``messages``
        with the file's special tokens, as ``gguf_grammar.render_template`` (same keywords)."""
        templates = self.chat_templates()
        if name not in templates:
            raise KeyError(f"no chat template {name!r} (the file has {sorted(map(str, templates))})")
        kwargs.setdefault("special_tokens", self.special_tokens())
        return _template.render_template(templates[name], messages, **kwargs)

    def template_report(self) -> Any:
        """Every template with its lint diagnostics and screen findings, as ``gguf template
        --json`` prints them (a parsed JSON document)."""
        return _template._document_report(self._native)

    def to_json(self) -> str:
        """The document as ``gguf dump --json`` prints it."""
        return self._native.to_json()

    def _bytes(self) -> np.ndarray:
        if self._buffer is None:
            self._buffer = self._make_buffer()
        return self._buffer

    def _value(self, raw: Any, tag: int) -> Any:
        if tag == GGUFValueType.ARRAY:
            return Array(self, *raw)
        return raw

    def __repr__(self) -> str:
        return (
            f"<gguf_grammar.Document v{self.version} {self.endian}-endian, "
            f"{len(self._native)} keys, {self._native.tensor_count} tensors>"
        )


class Metadata(Mapping[str, Any]):
    """A read-only mapping of key → value in file order: ints, floats, bools, ``str`` (``bytes``
    for a string that is not UTF-8) and ``Array`` for arrays. A key stored twice maps to its
    first value; ``len`` counts distinct keys."""

    def __init__(self, doc: Document):
        self._doc = doc
        self._index: dict[str, tuple[int, int]] = {}
        for i in range(len(doc._native)):
            key, _offset, _value_offset, tag, _types = doc._native.kv(i)
            self._index.setdefault(str(key, "utf-8", "surrogateescape"), (i, tag))

    def __getitem__(self, key: str) -> Any:
        i, tag = self._index[key]
        return self._doc._value(self._doc._native.value(i), tag)

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)

    def type_of(self, key: str) -> GGUFValueType:
        """The value type of ``key``."""
        return GGUFValueType(self._index[key][1])

    def __repr__(self) -> str:
        return f"<gguf_grammar.Metadata {list(self._index)!r}>"


class Array(Sequence[Any]):
    """An array value, decoded lazily: ``len``, indexing, slicing (a list), iteration,
    ``tolist()``; numeric arrays also ``to_numpy()``, a zero-copy view of the file's bytes."""

    def __init__(self, doc: Document, element_type: int, length: int, offset: int):
        self._doc = doc
        self.element_type = GGUFValueType(element_type)
        """The type of every element."""
        self._len = length
        self._offset = offset
        # Strings and arrays have no fixed size: an element is found by walking the ones
        # before it, so their elements are decoded once, on first access, and kept.
        self._decoded: Optional[list[Any]] = None

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...

    def __getitem__(self, index: Union[int, slice]) -> Any:
        if isinstance(index, slice):
            start, stop, step = index.indices(self._len)
            if step < 0:
                return self.tolist()[index]
            return self._items(start, stop, step)
        i = index + self._len if index < 0 else index
        if not 0 <= i < self._len:
            raise IndexError("array index out of range")
        return self._items(i, i + 1, 1)[0]

    def _items(self, start: int, stop: int, step: int) -> list[Any]:
        if self.element_type in (GGUFValueType.STRING, GGUFValueType.ARRAY):
            if self._decoded is None:
                self._decoded = self._decode(0, self._len, 1)
            return self._decoded[start:stop:step]
        return self._decode(start, stop, step)

    def _decode(self, start: int, stop: int, step: int) -> list[Any]:
        raw = self._doc._native.array_items(self._offset, start, max(start, stop), step)
        if self.element_type == GGUFValueType.ARRAY:
            return [Array(self._doc, *r) for r in raw]
        return raw

    def __iter__(self) -> Iterator[Any]:
        return iter(self.tolist())

    def tolist(self) -> list[Any]:
        """Every element (nested arrays stay ``Array``)."""
        return self._items(0, self._len, 1)

    def to_numpy(self) -> np.ndarray:
        """The elements as a read-only numpy array viewing the file's bytes (no copy), in the
        file's byte order. Raises ``TypeError`` for arrays of strings or arrays."""
        dtype = _NUMPY.get(self.element_type)
        if dtype is None:
            raise TypeError(f"an array of {self.element_type.name} has no numpy form")
        dt = np.dtype(dtype)
        if self._doc.endian == "big":
            dt = dt.newbyteorder(">")
        start = self._offset + 4 + (4 if self._doc.version == 1 else 8)
        view = self._doc._bytes()[start : start + dt.itemsize * self._len].view(np.ndarray).view(dt)
        view.flags.writeable = False
        return view

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        arr = self.to_numpy()
        return arr if dtype is None else arr.astype(dtype)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, Array)):
            return self.tolist() == list(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"<gguf_grammar.Array of {self._len} {self.element_type.name}>"


class Tensor:
    """A tensor descriptor: ``name``, ``type``, ``shape`` (dims as stored, ``ne0`` first),
    ``n_elements``, ``n_bytes`` and ``data_offset`` (ggml's sizes; None when unknown), and
    ``data``, its bytes as a zero-copy uint8 view."""

    __slots__ = ("_doc", "_index", "name", "type", "shape", "relative_offset", "data_offset", "n_bytes", "info_offset")

    def __init__(self, doc: Document, index: int, info: tuple):
        name, offset, dims, type_id, relative, absolute, n_bytes = info
        self._doc = doc
        self._index = index
        self.name: Union[str, bytes] = _text(name)
        try:
            self.type: Union[GGMLQuantizationType, int] = GGMLQuantizationType(type_id)
        except ValueError:
            self.type = type_id
        self.shape: tuple[int, ...] = tuple(dims)
        self.relative_offset: int = relative
        self.data_offset: Optional[int] = absolute
        self.n_bytes: Optional[int] = n_bytes
        self.info_offset: int = offset

    @property
    def n_elements(self) -> int:
        """The product of the dims."""
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def data(self) -> np.ndarray:
        """The tensor's bytes (read-only, no copy). Raises ``ValueError`` when they are not all
        in the file or their size is unknown."""
        if self.data_offset is None or self.n_bytes is None:
            raise ValueError(f"tensor {self.name!r}: the size or place of its data is unknown")
        buf = self._doc._bytes()
        end = self.data_offset + self.n_bytes
        if end > len(buf):
            raise ValueError(f"tensor {self.name!r}: data [{self.data_offset}, {end}) runs past the end ({len(buf)})")
        view = buf[self.data_offset : end].view(np.ndarray)
        view.flags.writeable = False
        return view

    def dequantize(self) -> np.ndarray:
        """The tensor's values as a new float32 array in numpy's order (the dims reversed),
        computed in Rust, bit for bit as gguf-py 0.19.0's ``gguf.quants.dequantize`` gives
        them: NaN, infinite and subnormal scales included. Blocks are read as ggml stores
        them on a little-endian machine, as gguf-py does, whatever the file's byte order.

        Raises ``NotImplementedError`` for a type gguf-py cannot dequantise either (``q8_1``,
        the integer types, ``f64``), ``ValueError`` when the data is not all in the file.

        >>> import gguf_grammar
        >>> gguf_grammar.open("tests/conformance/cases/alignment-64.gguf").tensors[0].dequantize()
        array([-1.625, -0.75 ,  0.125,  1.   ,  1.875, -1.25 , -0.375,  0.5  ],
              dtype=float32)
        """
        return _dequantize(self._doc._native, self._index, self.shape)

    def __repr__(self) -> str:
        kind = self.type.name if isinstance(self.type, GGMLQuantizationType) else self.type
        return f"<gguf_grammar.Tensor {self.name!r} {kind} {list(self.shape)}>"


def _dequantize(native: Any, index: int, dims: Sequence[int]) -> np.ndarray:
    """Tensor ``index`` of a native document dequantised, shaped as gguf-py shapes it."""
    values = np.frombuffer(native.dequantize(index), dtype=np.float32)
    return values.reshape(tuple(reversed(dims)))


def _text(raw: bytes) -> Union[str, bytes]:
    try:
        return str(raw, "utf-8")
    except UnicodeDecodeError:
        return raw
