"""The SQL of a query's filters: ``AND …`` clauses on the joined ``notes n`` row.

A query's ``tag:`` and ``path:`` filters, its folder, and the filtering part of Obsidian's
operators (``Query.where``: ``-word``, ``a OR b``, ``file:``, ``content:``, ``[property:value]``,
``line:(…)``, ``section:(…)``; see ``operators.py``), each a test of ``n.id`` or ``n.path``. A
word is found as the ranking finds it (itself or its stems; a CJK run in the side table);
``file:`` and ``path:`` look for their text in the file name or path, without case for ASCII
letters; ``line:`` and ``section:`` read the lines of the notes holding their words
(``scoped.py``).
"""

from __future__ import annotations

from typing import Final

from plugin_bridge.vault.lexical import operators as ops
from plugin_bridge.vault.lexical.cjk import match_term
from plugin_bridge.vault.lexical.query import Query, leaf_terms, tag_of
from plugin_bridge.vault.lexical.scoped import spec
from plugin_bridge.vault.paths import name_key as folded

_FILE_NAME: Final = "substr(n.path, length(rtrim(n.path, replace(n.path, '/', ''))) + 1)"
"""The part of ``n.path`` after its last slash (rtrim drops every character but slashes)."""


def filter_clauses(query: Query) -> tuple[str, dict[str, object]]:
    """``AND …`` clauses for the query's filters ("" when it has none), and their parameters."""
    clauses: list[str] = []
    params: dict[str, object] = {}
    for i, tag in enumerate(query.tags):
        clauses.append(_tag(tag, params, f"tag{i}"))
    for i, fragment in enumerate(query.paths):
        clauses.append(_like("n.path", fragment, params, f"path{i}"))
    path = "folded(n.path)" if query.fold_folders else "n.path"
    for i, folder in enumerate(query.folders):
        # the paths starting with "folder/": "0" sorts right after "/"
        clauses.append(f"{path} >= :folder{i} AND {path} < :after{i}")
        key = folded(folder) if query.fold_folders else folder
        params[f"folder{i}"], params[f"after{i}"] = key + "/", key + "0"
    clauses += filter(None, (_sql(node, params) for node in query.where))
    return "".join(f" AND {clause}" for clause in clauses), params


def _sql(node: ops.Node, params: dict[str, object]) -> str:
    """The SQL test of ``node`` ("" when it tests nothing, e.g. a word of punctuation)."""
    if isinstance(node, ops.Not):
        inner = _sql(node.node, params)
        return f"NOT {inner}" if inner else ""
    if isinstance(node, (ops.All, ops.AnyOf)):
        parts = [part for part in (_sql(child, params) for child in node.nodes) if part]
        joiner = " AND " if isinstance(node, ops.All) else " OR "
        return "(" + joiner.join(parts) + ")" if parts else ""
    if isinstance(node, ops.Scoped):
        test = f"scoped_match(body, {_param(params, spec(node))})"
        if words := _words(node.node):  # the notes with its words: only their lines are read
            test = f"notes_fts MATCH {_param(params, words)} AND {test}"
        return f"n.id IN (SELECT rowid FROM notes_fts WHERE {test})"
    if isinstance(node, ops.Property):
        key = _param(params, node.key)
        test = "value IS NULL" if node.null else ""
        if node.values:
            test = f"value IN ({', '.join(_param(params, v) for v in node.values)})"
        where = f"key = {key}" + (f" AND {test}" if test else "")
        return f"n.id IN (SELECT note FROM properties WHERE {where})"
    return _text(node, params)


def _text(leaf: ops.Text, params: dict[str, object]) -> str:
    if leaf.field == "tag":
        tag = tag_of(leaf.text)
        return _tag(tag, params, f"w{len(params)}") if tag else ""
    if leaf.field in ("path", "file"):
        text = leaf.text.replace("\\", "/")
        return _like("n.path" if leaf.field == "path" else _FILE_NAME, text, params) if text else ""
    content = leaf.field == "content"
    term, runs = leaf_terms(ops.Text(leaf.text, leaf.phrase))
    tests = []
    if term is not None:
        match = _param(params, term.expression(content=content))
        tests.append(f"n.id IN (SELECT rowid FROM notes_fts WHERE notes_fts MATCH {match})")
    for run in runs:
        found = ("{text}: " if content else "") + match_term(run)
        tests.append(
            f"n.id IN (SELECT rowid FROM notes_cjk WHERE notes_cjk MATCH {_param(params, found)})"
        )
    return "(" + " AND ".join(tests) + ")" if tests else ""


def _words(node: ops.Node) -> str:
    """An FTS5 expression every note matching ``node`` matches ("" when there is none)."""
    if isinstance(node, ops.Text):
        term = leaf_terms(ops.Text(node.text, node.phrase))[0]
        return term.expression() if term is not None else ""
    if isinstance(node, (ops.All, ops.AnyOf)):
        parts = [_words(child) for child in node.nodes]
        if isinstance(node, ops.All):
            kept = [f"({part})" for part in parts if part]
            return " AND ".join(kept)
        return " OR ".join(f"({part})" for part in parts) if all(parts) and parts else ""
    if isinstance(node, ops.Scoped):
        return _words(node.node)
    return ""  # excluded words and properties say nothing of the words a note holds


def _tag(tag: str, params: dict[str, object], name: str) -> str:
    """Notes with ``tag`` or one of its nested tags ``tag/…`` ("0" sorts right after "/")."""
    params[name] = tag
    return (
        f"n.id IN (SELECT note FROM tags "
        f"WHERE tag = :{name} OR (tag > :{name} || '/' AND tag < :{name} || '0'))"
    )


def _like(column: str, fragment: str, params: dict[str, object], name: str = "") -> str:
    """``column`` holds ``fragment`` (ASCII letters in any case; ``%`` and ``_`` as themselves)."""
    name = name or f"w{len(params)}"
    params[name] = "%" + _escape_like(fragment) + "%"
    return f"{column} LIKE :{name} ESCAPE '\\'"


def _param(params: dict[str, object], value: object) -> str:
    name = f"w{len(params)}"
    params[name] = value
    return f":{name}"


def _escape_like(text: str) -> str:
    """``text`` with LIKE's wildcards escaped (for ``ESCAPE '\\'``)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
