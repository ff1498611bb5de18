"""The exceptions: ``GGUFError`` (a ``ValueError``) carrying ``code``, ``offset`` and ``path``."""

from ._native import GGUFError, GGUFParseError, GGUFRejectedError

__all__ = ["GGUFError", "GGUFParseError", "GGUFRejectedError"]
