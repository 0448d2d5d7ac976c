"""``line:(…)`` and ``section:(…)``: whether one line, or one section (the text from a heading
to the next), of a note's text matches an expression, as Obsidian matches it: each word or
phrase a part of the line, without case; ``-``, OR and groups as anywhere else.

SQLite calls :func:`scoped_match` (:func:`register` adds it to the index's read connection) only
for the notes the index found to hold the expression's words (``filters.py``), so only their
text is read line by line.
"""

from __future__ import annotations

import functools
import json
import re
import sqlite3
from typing import Any, Final

from plugin_bridge.vault.lexical import operators as ops

_SECTION: Final = re.compile(r"\n(?= {0,3}#{1,6}[ \t])")
"""Where a section starts: before each heading line."""


def register(conn: sqlite3.Connection) -> None:
    """Make :func:`scoped_match` callable from SQL on ``conn``."""
    conn.create_function("scoped_match", 2, scoped_match, deterministic=True)


def spec(scoped: ops.Scoped) -> str:
    """``scoped`` as the text :func:`scoped_match` reads."""
    return json.dumps([scoped.scope, _plain(scoped.node)], ensure_ascii=False)


def scoped_match(body: str | None, encoded: str) -> int:
    """1 when a line (or section) of ``body`` matches the expression ``encoded`` by
    :func:`spec`, else 0."""
    if not body:
        return 0
    scope, tree = _decoded(encoded)
    text = body.casefold()
    units = text.split("\n") if scope == "line" else _SECTION.split(text)
    return int(any(_holds(tree, unit) for unit in units))


def _plain(node: ops.Node) -> Any:
    if isinstance(node, ops.Text):
        return node.text.lstrip("+").rstrip("*").casefold()
    if isinstance(node, ops.Not):
        return ["not", _plain(node.node)]
    if isinstance(node, (ops.All, ops.AnyOf)):
        return ["and" if isinstance(node, ops.All) else "or", [_plain(n) for n in node.nodes]]
    if isinstance(node, ops.Scoped):
        return _plain(node.node)
    return ["and", []]  # a property: not a line's, true of every line


@functools.lru_cache(maxsize=64)
def _decoded(encoded: str) -> tuple[str, Any]:
    scope, tree = json.loads(encoded)
    return scope, tree


def _holds(tree: Any, unit: str) -> bool:
    if isinstance(tree, str):
        return tree in unit
    kind, inner = tree
    if kind == "not":
        return not _holds(inner, unit)
    if kind == "and":
        return all(_holds(part, unit) for part in inner)
    return any(_holds(part, unit) for part in inner)
