"""The SQL behind one search: FTS5 BM25 over the fields, the CJK trigram side table, filters.

Field weights (title, aliases, headings, tags, body) rank a title match above a body match.
"""

from __future__ import annotations

import sqlite3
from typing import TypeAlias

from plugin_bridge.vault.query import Query, parse_query

Connection: TypeAlias = sqlite3.Connection
Row: TypeAlias = tuple[str, str, float, str]

WEIGHTS = (10.0, 8.0, 4.0, 3.0, 1.0)
_MARK = ("**", "**")
_SNIPPET_TOKENS = 16


def run(conn: Connection, text: str, limit: int) -> list[Row]:
    """Up to ``limit`` (path, title, score, snippet) rows, best first; any text is valid."""
    query = parse_query(text)
    if query.empty:
        return []
    filters, params = _filters(query)
    if query.fts:
        sql = (
            "SELECT n.path, n.title, -bm25(notes_fts, {w}) AS score, "
            "snippet(notes_fts, -1, '{a}', '{b}', '…', {t}) FROM notes_fts "
            "JOIN notes n ON n.id = notes_fts.rowid "
            "WHERE notes_fts MATCH ? {filters} ORDER BY score DESC LIMIT ?"
        ).format(
            w=", ".join(map(str, WEIGHTS)),
            a=_MARK[0],
            b=_MARK[1],
            t=_SNIPPET_TOKENS,
            filters=filters,
        )
        rows = conn.execute(sql, (query.fts, *params, limit)).fetchall()
        return [_with_cjk_snippet(conn, row, query) for row in rows]
    if query.cjk:
        sql = (
            "SELECT n.path, n.title, 1.0 AS score, notes_cjk.text FROM notes_cjk "
            f"JOIN notes n ON n.id = notes_cjk.rowid WHERE 1=1 {filters} "
            "ORDER BY length(notes_cjk.text) LIMIT ?"
        )
        rows = conn.execute(sql, (*params, limit)).fetchall()
        return [(p, t, s, _cjk_snippet(text_, query.cjk)) for p, t, s, text_ in rows]
    sql = (
        "SELECT n.path, n.title, 0.0, substr(f.body, 1, 160) FROM notes n "
        f"JOIN notes_fts f ON f.rowid = n.id WHERE 1=1 {filters} ORDER BY n.path LIMIT ?"
    )
    return [(p, t, s, " ".join(b.split())) for p, t, s, b in conn.execute(sql, (*params, limit))]


def _filters(query: Query) -> tuple[str, list[object]]:
    clauses: list[str] = []
    params: list[object] = []
    for term in query.cjk:
        if len(term) >= 3:
            clauses.append("n.id IN (SELECT rowid FROM notes_cjk WHERE notes_cjk MATCH ?)")
            params.append('"' + term.replace('"', '""') + '"')
        else:
            clauses.append("n.id IN (SELECT rowid FROM notes_cjk WHERE instr(text, ?) > 0)")
            params.append(term)
    for tag in query.tags:
        clauses.append("n.id IN (SELECT note FROM tags WHERE tag = ? OR tag LIKE ? ESCAPE '\\')")
        params += [tag, _escape_like(tag) + "/%"]
    for folder in query.paths:
        clauses.append("(n.path = ? OR n.path LIKE ? ESCAPE '\\')")
        params += [folder, _escape_like(folder) + "%"]
    return "".join(f" AND {c}" for c in clauses), params


def _with_cjk_snippet(conn: Connection, row: Row, query: Query) -> Row:
    if not query.cjk or "**" in row[3]:
        return row
    found = conn.execute(
        "SELECT text FROM notes_cjk JOIN notes n ON n.id = notes_cjk.rowid WHERE n.path = ?",
        (row[0],),
    ).fetchone()
    return (row[0], row[1], row[2], _cjk_snippet(found[0], query.cjk) if found else row[3])


def _cjk_snippet(text: str, terms: list[str], width: int = 30) -> str:
    at = min((i for i in (text.find(t) for t in terms) if i >= 0), default=0)
    start = max(0, at - width)
    piece = text[start : at + width * 2].replace("\n", " ")
    for term in terms:
        piece = piece.replace(term, f"**{term}**")
    return ("…" if start else "") + piece + "…"


def _escape_like(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
