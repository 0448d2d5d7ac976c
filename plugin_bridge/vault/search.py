"""The SQL behind one search: BM25 over the fields, the CJK side table, tag and path filters.

Ranking and snippets are separate steps: the best ``limit`` notes are found first, then
snippets are made for those alone (computing one per match made common words slow).
Field weights (title, aliases, headings, tags, body), set as the table's ``rank`` in the schema,
rank a title match above a body match.
"""

from __future__ import annotations

import re
import sqlite3
from typing import TypeAlias

from plugin_bridge.vault.query import CJK_RUN, RUN_BREAK, Query, cjk_phrase, parse_query

Row: TypeAlias = tuple[str, str, float, str]

_SNIPPET = "snippet({table}, -1, '**', '**', '…', 16)"
_CJK_SPACE = re.compile(rf"(?<=[{CJK_RUN.pattern[1:-2]}*]) (?=[{CJK_RUN.pattern[1:-2]}*])")


def run(conn: sqlite3.Connection, text: str, limit: int) -> list[Row]:
    """Up to ``limit`` (path, title, score, snippet) rows, best first; any text is valid."""
    query = parse_query(text)
    if query.empty:
        return []
    filters, params = _filters(query)
    if query.fts:
        return _ranked(conn, "notes_fts", query.fts, filters, params, limit)
    if query.cjk:
        first, rest = query.cjk[0], Query(cjk=query.cjk[1:], tags=query.tags, paths=query.paths)
        filters, params = _filters(rest)
        rows = _ranked(conn, "notes_cjk", cjk_phrase(first), filters, params, limit)
        return [(p, t, s, _unspace(snippet)) for p, t, s, snippet in rows]
    sql = (
        "SELECT n.path, n.title, 0.0, substr(f.body, 1, 160) FROM notes n "
        f"JOIN notes_fts f ON f.rowid = n.id WHERE 1=1 {filters} ORDER BY n.path LIMIT ?"
    )
    return [(p, t, s, " ".join(b.split())) for p, t, s, b in conn.execute(sql, (*params, limit))]


def _ranked(
    conn: sqlite3.Connection,
    table: str,
    match: str,
    filters: str,
    params: list[object],
    limit: int,
) -> list[Row]:
    top = conn.execute(
        f"SELECT {table}.rowid, n.path, n.title, -{table}.rank FROM {table} "
        f"JOIN notes n ON n.id = {table}.rowid "
        f"WHERE {table} MATCH ? {filters} ORDER BY {table}.rank LIMIT ?",
        (match, *params, limit),
    ).fetchall()
    if not top:
        return []
    snippets = dict(
        conn.execute(
            f"SELECT rowid, {_SNIPPET.format(table=table)} FROM {table} "
            f"WHERE {table} MATCH ? AND rowid IN ({','.join('?' * len(top))})",
            (match, *(row[0] for row in top)),
        ).fetchall()
    )
    return [(path, title, score, snippets.get(rowid, "")) for rowid, path, title, score in top]


def _filters(query: Query) -> tuple[str, list[object]]:
    clauses: list[str] = []
    params: list[object] = []
    for term in query.cjk:
        clauses.append("n.id IN (SELECT rowid FROM notes_cjk WHERE notes_cjk MATCH ?)")
        params.append(cjk_phrase(term))
    for tag in query.tags:
        clauses.append("n.id IN (SELECT note FROM tags WHERE tag = ? OR tag GLOB ?)")
        params += [tag, _escape_glob(tag) + "/*"]
    for folder in query.paths:
        clauses.append("n.path >= ? AND n.path < ?")  # a prefix, as a range the index serves
        params += [folder, folder + "\U0010ffff"]
    return "".join(f" AND {c}" for c in clauses), params


def _unspace(snippet: str) -> str:
    """Undo the one-character-per-token spacing of the CJK side table in a snippet."""
    return _CJK_SPACE.sub("", snippet.replace(RUN_BREAK.strip(), "…"))


def _escape_glob(value: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", value)
