"""Chat templates (``tokenizer.chat_template``): render, lint and screen, from the Rust crate
``gguf-template``."""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, Optional

from . import _native

TemplateError = _native.TemplateError


class TemplateFinding(NamedTuple):
    """A lint diagnostic or screen finding: ``code`` (e.g. ``"template-dunder-attribute"``),
    ``level`` (lint: ``"error"``/``"warning"``; screen: its severity), ``line`` and ``column``
    (1-based, or None) and ``message``."""

    code: str
    level: str
    line: Optional[int]
    column: Optional[int]
    message: str


def _json(value: Any) -> Optional[str]:
    return None if value is None else json.dumps(value, ensure_ascii=False)


def render_template(
    source: str,
    messages: Sequence[Mapping[str, Any]],
    *,
    add_generation_prompt: bool = False,
    tools: Optional[Sequence[Any]] = None,
    documents: Optional[Sequence[Any]] = None,
    special_tokens: Optional[Mapping[str, str]] = None,
    now: Optional[_dt.datetime] = None,
    **variables: Any,
) -> str:
    """``source`` (a Jinja chat template) rendered for ``messages`` as transformers'
    ``apply_chat_template(..., tokenize=False)`` renders it, in a sandbox (no attribute access
    beyond what templates need, bounded loops, time and output). ``special_tokens`` binds
    ``bos_token``, ``eos_token``, … (``Document.special_tokens()`` gives a file's);
    ``variables`` are further template variables; ``now`` is what ``strftime_now`` sees
    (default: the clock). Values must be JSON-serialisable. Raises ``TemplateError`` (with
    ``kind``, ``line``, ``column``) when the template does not parse, raises or hits a limit.

    >>> import gguf_grammar
    >>> gguf_grammar.render_template(
    ...     "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}{{ eos_token }}",
    ...     [{"role": "user", "content": "Hi"}], special_tokens={"eos_token": "</s>"})
    '<user>Hi</s>'
    """
    return _native.render_template(
        source,
        json.dumps(list(messages), ensure_ascii=False),
        add_generation_prompt,
        list((special_tokens or {}).items()),
        _json(None if tools is None else list(tools)),
        _json(None if documents is None else list(documents)),
        _json(variables) if variables else None,
        None if now is None else now.replace(tzinfo=None).isoformat(),
    )


def lint_template(
    source: str,
    special_tokens: Optional[Mapping[str, str]] = None,
    vocabulary: Optional[Sequence[str]] = None,
) -> list[TemplateFinding]:
    """The lint diagnostics of ``source`` (``gguf check``'s template codes): it does not parse
    (with line and column), does not render a minimal or an ordinary conversation, never emits
    the generation prompt, uses special tokens that are not in ``vocabulary`` (skipped when
    None) or disagree with ``special_tokens``."""
    rows = _native.lint_template(source, list((special_tokens or {}).items()), None if vocabulary is None else list(vocabulary))
    return [TemplateFinding(*r) for r in rows]


def screen_template(source: str) -> list[TemplateFinding]:
    """What a chat template never needs and template injections use, found in ``source``'s
    syntax tree without running it: dunder attributes, ``cycler``/``joiner``/``lipsum``/
    ``namespace`` as gadgets, ``self``/``config``/``request``, calls on module-like objects,
    ``import``/``include``/``extends``, very long or deep expressions. Empty for the real
    vendor templates.

    >>> import gguf_grammar
    >>> [f.code for f in gguf_grammar.screen_template("{{ ''.__class__.__mro__ }}")][:1]
    ['template-dunder-attribute']
    """
    return [TemplateFinding(*r) for r in _native.screen_template(source)]


def _document_templates(native: Any) -> dict[Optional[str], str]:
    return dict(_native.chat_templates(native))


def _document_special_tokens(native: Any) -> dict[str, str]:
    return dict(_native.special_tokens(native))


def _document_report(native: Any) -> Any:
    return json.loads(_native.template_report(native))


__all__ = ["TemplateError", "TemplateFinding", "lint_template", "render_template", "screen_template"]
