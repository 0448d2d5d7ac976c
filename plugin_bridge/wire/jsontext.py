"""The checks every JSON document a client sends passes (WebSocket frames and HTTP bodies),
after it is parsed and before anything reads it: at most :data:`MAX_DEPTH` levels of nesting
(deeper documents make validators and encoders recurse past Python's limit), and no lone
UTF-16 surrogate in any string (``"\\ud800"`` parses, and fails later wherever the text is
encoded: a note, SQLite, the provider's request). Each refusal is one sentence.
"""

from __future__ import annotations

import re
from typing import Any, Final

MAX_DEPTH: Final = 64
"""Levels of objects and arrays a document may nest (a chat request needs fewer than 10)."""
TOO_DEEP: Final = f"The JSON is nested more than {MAX_DEPTH} levels deep: send a flatter document."
"""Also the sentence for a document so deep that parsing it ran out of recursion."""
_ESCAPED_SURROGATE: Final = re.compile(r"\\u[dD][89a-fA-F]")
"""Only an escape can put a surrogate in parsed text (UTF-8 cannot encode one)."""


def refusal(document: Any, text: str | bytes) -> str | None:
    """Why the parsed ``document`` (parsed from ``text``) is refused; None when it is not."""
    brackets = text.count("[") + text.count("{") if isinstance(text, str) else _brackets(text)
    if brackets > MAX_DEPTH and _depth_over(document, MAX_DEPTH):
        return TOO_DEEP
    raw = text if isinstance(text, str) else text.decode("utf-8", "replace")
    if _ESCAPED_SURROGATE.search(raw) and _has_lone_surrogate(document):
        return (
            "A string holds a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape): "
            "send valid Unicode text."
        )
    return None


def _brackets(data: bytes) -> int:
    return data.count(b"[") + data.count(b"{")


def _depth_over(document: Any, limit: int) -> bool:
    """Whether ``document`` nests more than ``limit`` levels (iterative: no recursion)."""
    stack: list[tuple[Any, int]] = [(document, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _has_lone_surrogate(document: Any) -> bool:
    stack: list[Any] = [document]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return False
