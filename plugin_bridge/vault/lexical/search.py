"""The SQL behind one search: BM25 over weighted fields, the CJK side table, tag and path filters.

Words rank in tiers: notes with every word first, then notes with fewer of them, each tier by
BM25 (the score a result shows is ``words matched + bm25 / (1 + bm25)``, so it falls down the
list). The query for every word exactly as typed runs first: it costs what a search cost before
stems, and when it fills the page those notes are the answer (exact words rank first). Only
when it finds fewer notes than asked for do stems, typo corrections and the any-word query
run.

Ranking and snippets are separate steps: the best ``limit`` notes are found first, then snippets
are made for those alone. The full-text table is always the outer loop (``CROSS JOIN``) and
filters test the joined ``notes`` row: given a rowid constraint, FTS5 would run the MATCH again
for each rowid (~0.4 ms each).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from typing import Final, TypeAlias

from plugin_bridge.vault.lexical.cjk import bigram_list, highlight, match_term, snippet_around
from plugin_bridge.vault.lexical.query import Query
from plugin_bridge.vault.lexical.typos import Vocabulary
from plugin_bridge.vault.paths import name_key as folded

Row: TypeAlias = tuple[str, str, float, str]
"""path, title, score (higher is better), snippet."""

WEIGHTS: Final = {
    "title": 10.0,
    "aliases": 8.0,
    "headings": 4.0,
    "tags": 3.0,
    "body": 1.0,
    "stem_title": 5.0,
    "stem_headings": 2.0,
    "stem_body": 0.5,
}
"""bm25() weights of the ``notes_fts`` columns, in column order. A word found as itself also
matches its stem, so an exact word outranks another form of it."""
CJK_TITLE_BONUS: Final = 5.0
"""Added to a CJK hit's score for each term its title contains."""
SNIPPET_TOKENS: Final = 14
LISTING_CHARS: Final = 200

_BM25: Final = f"bm25(notes_fts, {', '.join(map(str, WEIGHTS.values()))})"
_OPEN: Final = "\x02"
_CLOSE: Final = "\x03"
_BODY_SNIPPET: Final = (
    f"snippet(notes_fts, {list(WEIGHTS).index('body')}, '{_OPEN}', '{_CLOSE}', '…', "
    f"{SNIPPET_TOKENS})"
)


def run(
    conn: sqlite3.Connection,
    query: Query,
    limit: int,
    *,
    snippets: bool = True,
    vocabulary: Vocabulary | None = None,
) -> list[Row]:
    """Up to ``limit`` rows, best first; without ``snippets`` every snippet is "" (a ranking
    only, for fusion: :func:`snippets_for` makes the few that are shown). With a
    ``vocabulary``, words that match nothing also look for the vault's words closest to them."""
    if query.empty or limit <= 0:
        return []
    if query.terms:
        return _words(conn, query, limit, snippets, vocabulary)
    if query.cjk:
        return _cjk_only(conn, query, limit, snippets)
    return _listing(conn, query, limit)


def snippets_for(conn: sqlite3.Connection, query: Query, paths: Sequence[str]) -> dict[str, str]:
    """The snippet ``run`` would show for each of these notes (by path)."""
    if not paths:
        return {}
    marks = ", ".join("?" * len(paths))
    ids = {
        int(note_id): path
        for note_id, path in conn.execute(
            f"SELECT id, path FROM notes WHERE path IN ({marks})", list(paths)
        )
    }
    if query.match:
        made = _snippets(conn, query.match, list(ids))
        return {ids[i]: highlight(text, query.cjk) for i, text in made.items()}
    bodies = _bodies(conn, list(ids))
    if query.cjk:
        return {ids[i]: snippet_around(body, query.cjk) for i, body in bodies.items()}
    return {ids[i]: _opening(body) for i, body in bodies.items()}


def _words(
    conn: sqlite3.Connection,
    query: Query,
    limit: int,
    snippets: bool,
    vocabulary: Vocabulary | None,
) -> list[Row]:
    """Rank first, then make snippets for the top rows only.

    bm25() in ORDER BY (not FTS5's ``rank``) is computed after the filters, so a filter that
    keeps few notes also keeps ranking cheap when the words are in most notes.
    """
    where, params = _filters(query, with_cjk=True)
    top = _ranked(conn, query.match_all, "", where, {**params, "n_terms": len(query.terms)}, limit)
    shown = query.match_all  # the snippets mark what was matched, and cost no more than that
    if len(top) < limit:
        query = _corrected(conn, query, vocabulary) if vocabulary else query
        if query.match:
            covered = " + ".join(
                f"(n.id IN (SELECT rowid FROM notes_fts WHERE notes_fts MATCH :t{i}))"
                for i in range(len(query.terms))
            )
            terms = {f"t{i}": term.expression() for i, term in enumerate(query.terms)}
            top = _ranked(conn, query.match, covered, where, {**params, **terms}, limit)
            shown = query.match
    if not snippets:
        return [(path, title, score, "") for _, path, title, score in top]
    made = _snippets(conn, shown, [row[0] for row in top])
    return [
        (path, title, score, highlight(made.get(note_id, ""), query.cjk))
        for note_id, path, title, score in top
    ]


def _ranked(
    conn: sqlite3.Connection,
    match: str,
    covered: str,
    where: str,
    params: dict[str, object],
    limit: int,
) -> list[tuple[int, str, str, float]]:
    """(id, path, title, score) of the best notes for ``match``; ``covered`` counts the terms
    a note matches (every term when "": the all-words query)."""
    rows = conn.execute(
        f"SELECT n.id, n.path, n.title, -{_BM25} AS s, {covered or ':n_terms'} AS covered "
        "FROM notes_fts CROSS JOIN notes n ON n.id = notes_fts.rowid "
        f"WHERE notes_fts MATCH :match {where} ORDER BY covered DESC, s DESC, n.path "
        "LIMIT :limit",
        {"match": match, "limit": limit, "n_terms": 0, **params},
    ).fetchall()
    return [(i, path, title, covered + s / (1 + s)) for i, path, title, s, covered in rows]


def _corrected(conn: sqlite3.Connection, query: Query, vocabulary: Vocabulary) -> Query:
    """``query`` with the vault's closest words added to each word that matches nothing."""
    terms = []
    for term in query.terms:
        if (
            term.kind == "word"
            and not conn.execute(
                "SELECT 1 FROM notes_fts WHERE notes_fts MATCH ? LIMIT 1", (term.expression(),)
            ).fetchone()
        ):
            term = replace(term, alternatives=vocabulary.corrections(conn, term.text))
        terms.append(term)
    return replace(query, terms=tuple(terms))


def _cjk_only(conn: sqlite3.Connection, query: Query, limit: int, snippets: bool) -> list[Row]:
    """CJK terms alone: BM25 over the CJK side table plus a bonus per term in the title. When
    the whole runs find fewer than ``limit`` notes, notes with some of their bigrams follow
    (a question in Chinese or Japanese is one long run that no note holds as it is)."""
    where, params = _filters(query, with_cjk=False)
    bonus = " + ".join(
        f"{CJK_TITLE_BONUS} * (instr(n.title, :t{i}) > 0)" for i in range(len(query.cjk))
    )
    sql = (
        "SELECT n.id, n.path, n.title, -bm25(notes_cjk) + {bonus} AS score "
        "FROM notes_cjk CROSS JOIN notes n ON n.id = notes_cjk.rowid "
        "WHERE notes_cjk MATCH :cjk {where} ORDER BY score DESC LIMIT :limit"
    )
    found = conn.execute(
        sql.format(bonus=bonus, where=where),
        {
            "cjk": _cjk_match(query.cjk),
            "limit": limit,
            **{f"t{i}": term for i, term in enumerate(query.cjk)},
            **params,
        },
    ).fetchall()
    rows = [(i, path, title, 1 + s / (1 + s)) for i, path, title, s in found]
    parts = list(dict.fromkeys(p for term in query.cjk if len(term) > 2 for p in bigram_list(term)))
    if len(rows) < limit and parts:
        seen = ", ".join(str(row[0]) for row in rows)
        bonus = " + ".join(f"(instr(n.title, :b{i}) > 0)" for i in range(len(parts)))
        more = conn.execute(
            sql.format(bonus=bonus, where=f"{where} AND n.id NOT IN ({seen})" if seen else where),
            {
                "cjk": " OR ".join(map(match_term, parts)),
                "limit": limit - len(rows),
                **{f"b{i}": part for i, part in enumerate(parts)},
                **params,
            },
        ).fetchall()
        rows += [(i, path, title, s / (1 + s)) for i, path, title, s in more]
    if not snippets:
        return [(path, title, score, "") for _, path, title, score in rows]
    bodies = _bodies(conn, [row[0] for row in rows])
    terms = [*query.cjk, *parts]
    return [
        (path, title, score, snippet_around(bodies.get(note_id, ""), terms))
        for note_id, path, title, score in rows
    ]


def _listing(conn: sqlite3.Connection, query: Query, limit: int) -> list[Row]:
    """Filters only: the matching notes by path, each with the start of its text."""
    where, params = _filters(query, with_cjk=False)
    rows = conn.execute(
        f"SELECT n.id, n.path, n.title FROM notes n WHERE 1 {where} ORDER BY n.path LIMIT :limit",
        {"limit": limit, **params},
    ).fetchall()
    bodies = _bodies(conn, [row[0] for row in rows])
    return [(path, title, 0.0, _opening(bodies.get(note_id, ""))) for note_id, path, title in rows]


def _filters(query: Query, *, with_cjk: bool) -> tuple[str, dict[str, object]]:
    """``AND …`` clauses on the joined ``notes n`` row for the query's filters."""
    clauses: list[str] = []
    params: dict[str, object] = {}
    if with_cjk and query.cjk:
        clauses.append("n.id IN (SELECT rowid FROM notes_cjk WHERE notes_cjk MATCH :cjk)")
        params["cjk"] = _cjk_match(query.cjk)
    for i, tag in enumerate(query.tags):
        # "0" sorts right after "/": the range holds the nested tags ``tag/…``
        clauses.append(
            f"n.id IN (SELECT note FROM tags "
            f"WHERE tag = :tag{i} OR (tag > :tag{i} || '/' AND tag < :tag{i} || '0'))"
        )
        params[f"tag{i}"] = tag
    for i, fragment in enumerate(query.paths):
        clauses.append(f"n.path LIKE :path{i} ESCAPE '\\'")
        params[f"path{i}"] = "%" + _escape_like(fragment) + "%"
    path = "folded(n.path)" if query.fold_folders else "n.path"
    for i, folder in enumerate(query.folders):
        # the paths starting with "folder/": "0" sorts right after "/"
        clauses.append(f"{path} >= :folder{i} AND {path} < :after{i}")
        key = folded(folder) if query.fold_folders else folder
        params[f"folder{i}"], params[f"after{i}"] = key + "/", key + "0"
    return "".join(f" AND {clause}" for clause in clauses), params


def filtered_chunk_hashes(conn: sqlite3.Connection, query: Query) -> set[str]:
    """Hashes of the chunks of the notes that pass the query's filters (not its words)."""
    where, params = _filters(query, with_cjk=False)
    sql = f"SELECT c.hash FROM chunks c JOIN notes n ON n.id = c.note WHERE 1 {where}"
    return {row[0] for row in conn.execute(sql, params)}


def _cjk_match(terms: Sequence[str]) -> str:
    return " ".join(map(match_term, terms))


def _snippets(conn: sqlite3.Connection, match: str, note_ids: Sequence[int]) -> dict[int, str]:
    """Body snippets of ``note_ids`` for ``match``. ``+rowid`` keeps the id list a filter: as a
    constraint, FTS5 would run the whole MATCH again for each id."""
    if not note_ids:
        return {}
    marks = ", ".join("?" * len(note_ids))
    sql = (
        f"SELECT rowid, {_BODY_SNIPPET} FROM notes_fts "
        f"WHERE notes_fts MATCH ? AND +rowid IN ({marks})"
    )
    return {
        int(rowid): _marked(snippet) for rowid, snippet in conn.execute(sql, (match, *note_ids))
    }


def _bodies(conn: sqlite3.Connection, note_ids: Sequence[int]) -> dict[int, str]:
    if not note_ids:
        return {}
    marks = ", ".join("?" * len(note_ids))
    sql = f"SELECT rowid, body FROM notes_fts WHERE rowid IN ({marks})"
    return {int(rowid): body for rowid, body in conn.execute(sql, note_ids)}


def _opening(body: str) -> str:
    return " ".join(body[: LISTING_CHARS * 2].split())[:LISTING_CHARS]


def _marked(snippet: str) -> str:
    return " ".join(snippet.split()).replace(_OPEN, "**").replace(_CLOSE, "**")


def _escape_like(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
