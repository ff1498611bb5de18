"""Fast, exact GGUF reading for Python, from the Rust crate ``gguf-grammar``.

Two ways in:

- ``GGUFReader(path)``: a drop-in for gguf-py 0.19.0's ``gguf.GGUFReader`` (same attributes
  and values), opening the header in Rust and building numpy parts only when asked.
- ``open(path)`` / ``parse(data)``: a ``Document`` with ``metadata`` (a read-only mapping of
  key to Python value, arrays lazy), ``tensors``, ``summary()`` and ``check()``.
- ``Tokenizer(path)``: text to token ids and back with the file's own vocabulary, giving the
  ids llama.cpp gives (``encode``, ``decode``, ``token_to_piece``).
- ``render_template``, ``lint_template``, ``screen_template``: chat templates rendered as
  transformers renders them (sandboxed), linted and screened for template injection.
- ``fit(path, ctx_size=...)``: the memory llama.cpp allocates for the model, from the header.

Errors are ``GGUFError`` (a ``ValueError``) with ``code``, ``offset`` and ``path``.
"""

from . import _native
from ._document import Array, Diagnostic, Document, Metadata, Summary, Tensor, open, parse
from ._fit import fit
from ._errors import GGUFError, GGUFParseError, GGUFRejectedError
from ._native import Tokenizer
from ._reader import GGUFReader, ReaderField, ReaderTensor
from ._template import TemplateError, TemplateFinding, lint_template, render_template, screen_template
from ._types import GGMLQuantizationType, GGUFEndian, GGUFValueType


def escape(text: "str | bytes") -> str:
    r"""``text`` made safe to print: control and bidirectional characters, backslashes and
    bytes that are not UTF-8 become escapes (``\t``, ``\e``, ``\u{202e}``, ``\xff``), as the
    ``gguf`` CLI prints text from a file. A ``str`` (a key, a path) is taken as its UTF-8 bytes,
    undecodable bytes of a file name (surrogate escapes) included.

    >>> print(escape("tab\there \x1b[31m"))
    tab\there \e[31m
    """
    if isinstance(text, str):
        text = text.encode("utf-8", "surrogateescape")
    return _native.escape(text)


__all__ = [
    "Array",
    "Diagnostic",
    "Document",
    "GGMLQuantizationType",
    "GGUFEndian",
    "GGUFError",
    "GGUFParseError",
    "GGUFReader",
    "GGUFRejectedError",
    "GGUFValueType",
    "Metadata",
    "ReaderField",
    "ReaderTensor",
    "Summary",
    "Tensor",
    "TemplateError",
    "TemplateFinding",
    "Tokenizer",
    "escape",
    "fit",
    "lint_template",
    "open",
    "parse",
    "render_template",
    "screen_template",
]
