"""The SQL behind one search: BM25 over weighted fields, the CJK side table, tag and path filters.

Words rank in tiers: notes with every word first, then notes with fewer of them, each tier by
BM25 (the score a result shows is ``words matched + bm25 / (1 + bm25)``, so it falls down the
list). The query for every word exactly as typed runs first: it costs what a search cost before
stems, and when it fills the page those notes are the answer (exact words rank first). Only
when it finds fewer notes than asked for do stems and typo corrections (every word, then any
word) run.

BM25 costs about a microsecond for each note it scores, so a match in more than
:data:`FIELDS_FIRST` notes (a common word in a large vault) is ranked first among the notes
holding it in their title or aliases, then in any field but the body (CJK: in the title
column of the side table); the first of these that fills the page is the answer, else every
match is ranked.

Ranking and snippets are separate steps: the best ``limit`` notes are found first, then snippets
are made for those alone. The full-text table is always the outer loop and is ranked before it
meets the ``notes`` table, which only the top rows are joined to (unless a tag, path or folder
filter needs each row's note). Given a rowid constraint, FTS5 looks each rowid up in every
term's list (and merges a prefix's words again each time), so a filter on a set of rowids is
written ``+rowid``: it tests the rows one pass of the match yields.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Final, Literal, TypeAlias

from plugin_bridge.vault.lexical.cjk import bigram_list, highlight, match_term, snippet_around
from plugin_bridge.vault.lexical.filters import filter_clauses
from plugin_bridge.vault.lexical.headings import heading_at
from plugin_bridge.vault.lexical.query import Query
from plugin_bridge.vault.lexical.typos import Vocabulary

Row: TypeAlias = tuple[str, str, float, str, str | None]
"""path, title, score (higher is better), snippet, and the heading path the snippet is under
(``headings.py``: made from the body the snippet's query reads, None without a snippet)."""
Ranked: TypeAlias = tuple[int, str, str, float]
"""A note's id, path, title and score, before its snippet is made."""

WEIGHTS: Final = {
    "title": 10.0,
    "aliases": 8.0,
    "headings": 4.0,
    "tags": 3.0,
    "body": 0.7,
    "stem_title": 5.0,
    "stem_headings": 2.0,
    "stem_body": 0.5,
}
"""bm25() weights of the ``notes_fts`` columns, in column order. A word found as itself also
matches its stem, so an exact word outranks another form of it. The body's 0.7 (1 before
issue 41) lets a note that names a question's subject in its title or headings answer before
one whose body holds the same words (docs/benchmarks.md: held-out natural questions 0.64 →
0.70, no question type lower)."""
CJK_TITLE_BONUS: Final = 5.0
"""Added to a CJK hit's score for each whole term in its title (1 for each bigram of a term
found only in part)."""
FIELDS_FIRST: Final = 5000
"""Matches past which notes with the words in their fields are ranked first (see above)."""
Table = Literal["notes_fts", "notes_cjk"]
_RANKING: Final[dict[Table, tuple[str, tuple[str, ...]]]] = {
    "notes_fts": (
        f"bm25(notes_fts, {', '.join(map(str, WEIGHTS.values()))})",
        ("{title aliases}", "{title aliases headings tags}"),
    ),
    "notes_cjk": ("bm25(notes_cjk)", ("{title}",)),
}
"""Each full-text table's score and its field tiers, narrowest first."""
SNIPPET_TOKENS: Final = 14
LISTING_CHARS: Final = 200

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
    headings: bool = False,
    vocabulary: Vocabulary | None = None,
) -> list[Row]:
    """Up to ``limit`` rows, best first; without ``snippets`` every snippet is "" (a ranking
    only, for fusion: :func:`snippets_for` makes the few that are shown); with ``headings``
    each snippet's heading path too (0.1 ms for ten notes), else None. With a
    ``vocabulary``, words that match nothing also look for the vault's words closest to them."""
    if query.empty or limit <= 0:
        return []
    if query.terms:
        return _words(conn, query, limit, (snippets, headings), vocabulary)
    if query.cjk:
        return _cjk_only(conn, query, limit, (snippets, headings))
    return _listing(conn, query, limit, headings)


def snippets_for(
    conn: sqlite3.Connection, query: Query, paths: Sequence[str]
) -> dict[str, tuple[str, str | None]]:
    """The snippet ``run`` would show for each of these notes, with its heading path (by
    path)."""
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
        made = _snippets(conn, query, query.match, list(ids))
        return {
            ids[i]: _placed(highlight(text, query.cjk), body) for i, (text, body) in made.items()
        }
    bodies = _bodies(conn, list(ids))
    if query.cjk:
        return {
            ids[i]: _placed(snippet_around(body, query.cjk), body) for i, body in bodies.items()
        }
    return {ids[i]: _placed(_opening(body), body) for i, body in bodies.items()}


def _words(
    conn: sqlite3.Connection,
    query: Query,
    limit: int,
    shown: tuple[bool, bool],
    vocabulary: Vocabulary | None,
) -> list[Row]:
    """Rank first, then make snippets (``shown``: snippets, headings) for the top rows only.

    bm25() in ORDER BY (not FTS5's ``rank``) is computed after the filters, so a filter that
    keeps few notes also keeps ranking cheap when the words are in most notes.
    """
    whole = {"n_terms": len(query.terms)}
    top, many = _best(conn, query, Ask(query.match_all, params=whole, bound=query.anchor), limit)
    marked = query.match_all  # the snippets mark what was matched, and cost no more than that
    if len(top) < limit:
        query = _corrected(conn, query, vocabulary) if vocabulary else query
        if query.match:
            top, many = _best(conn, query, Ask(query.match_every, params=whole), limit)
            marked = query.match_every
            if len(top) < limit and query.optional:
                more, many = _some(conn, query, limit - len(top), [row[0] for row in top])
                top, marked = top + more, query.match
    snippets, headings = shown
    if not snippets:
        return [(path, title, score, "", None) for _, path, title, score in top]
    made = _snippets(conn, query, marked, [row[0] for row in top], many, bodies=headings)
    rows: list[Row] = []
    for note_id, path, title, score in top:
        text, body = made.get(note_id, ("", ""))
        rows.append((path, title, score, *_placed(highlight(text, query.cjk), body)))
    return rows


def _some(
    conn: sqlite3.Connection, query: Query, limit: int, without: Sequence[int]
) -> tuple[list[Ranked], bool]:
    """The best notes holding some but not every term: more terms first, then BM25."""
    covered = " + ".join(
        f"(notes_fts.rowid IN (SELECT rowid FROM notes_fts WHERE notes_fts MATCH :t{i}))"
        for i in range(len(query.terms))
    )
    terms = {f"t{i}": term.expression() for i, term in enumerate(query.terms)}
    return _best(conn, query, Ask(query.match, covered, terms, without=tuple(without)), limit)


@dataclass(frozen=True)
class Ask:
    """One ranking of a full-text table's rows."""

    match: str
    covered: str = ""
    """SQL counting the terms a row matches ("": ``:n_terms``, every term)."""
    params: Mapping[str, object] = field(default_factory=dict)
    table: Table = "notes_fts"
    boost: str = ""
    """SQL added to a row's BM25 (it may read the row's note as ``n``)."""
    bound: str = ""
    """A single token every match holds, counted before ``match`` (see :func:`_best`)."""
    without: tuple[int, ...] = ()
    """Notes left out (found by an earlier tier)."""


def _best(
    conn: sqlite3.Connection, query: Query, ask: Ask, limit: int
) -> tuple[list[Ranked], bool]:
    """The best notes for ``ask``: among the notes with its match in their fields first when it
    matches more than :data:`FIELDS_FIRST` notes (see the module's docstring); and whether it
    does. A ``bound`` is counted first: a single token has no positions to read (0.05 ms where
    a CJK phrase takes 0.6), so a rarer one settles it."""
    if not ask.match:
        return [], False
    table = ask.table
    probe = f"SELECT 1 FROM {table} WHERE {table} MATCH ? LIMIT 1 OFFSET {FIELDS_FIRST}"
    many = all(
        conn.execute(probe, (expression,)).fetchone()
        for expression in (ask.bound, ask.match)
        if expression
    )
    for fields in _RANKING[table][1] if many else ():
        top = _ranked(conn, query, replace(ask, match=f"{fields}: ({ask.match})"), limit)
        if len(top) >= limit:
            return top, many
    return _ranked(conn, query, ask, limit), many


def _ranked(conn: sqlite3.Connection, query: Query, ask: Ask, limit: int) -> list[Ranked]:
    """(id, path, title, score) of the best notes for ``ask`` that pass the query's filters."""
    table = ask.table
    notes_where, filters = filter_clauses(query)
    where = notes_where
    if query.cjk and table == "notes_fts":
        where += f" AND +{table}.rowid IN (SELECT rowid FROM notes_cjk WHERE notes_cjk MATCH :cjk)"
        filters["cjk"] = _cjk_match(query.cjk)
    if ask.without:
        marks = ", ".join(f":without{i}" for i in range(len(ask.without)))
        where += f" AND +{table}.rowid NOT IN ({marks})"
        filters.update((f"without{i}", note) for i, note in enumerate(ask.without))
    ranked = (
        f"-{_RANKING[table][0]}{ask.boost} AS s, {ask.covered or ':n_terms'} AS covered "
        f"FROM {table} {{join}} WHERE {table} MATCH :match {{where}} "
        f"ORDER BY covered DESC, s DESC, {table}.rowid LIMIT :limit"
    )
    if notes_where or ask.boost:  # the filters or the bonus read each row's note
        sql = f"SELECT {table}.rowid, n.path, n.title, " + ranked.format(
            join=f"CROSS JOIN notes n ON n.id = {table}.rowid", where=where
        )
    else:  # rank the full-text rows alone, then look up the top ones' notes
        sql = (
            f"SELECT r.id, n.path, n.title, r.s, r.covered FROM (SELECT {table}.rowid AS id, "
            + ranked.format(join="", where=where)
            + ") r JOIN notes n ON n.id = r.id ORDER BY r.covered DESC, r.s DESC, r.id"
        )
    params = {"match": ask.match, "limit": limit, **filters, **ask.params}
    rows = conn.execute(sql, params).fetchall()
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


def _cjk_only(
    conn: sqlite3.Connection, query: Query, limit: int, shown: tuple[bool, bool]
) -> list[Row]:
    """CJK terms alone: BM25 over the CJK side table plus a bonus per term in the title. When
    the whole runs find fewer than ``limit`` notes, notes with some of their bigrams follow
    (a question in Chinese or Japanese is one long run that no note holds as it is)."""
    first = query.cjk[0]
    whole = Ask(
        _cjk_match(query.cjk),
        params={"n_terms": 1, **_in_titles(query.cjk)},
        table="notes_cjk",
        boost=_title_bonus(len(query.cjk), CJK_TITLE_BONUS),
        bound=f'"{first[:2]}"' if len(first) > 1 else "",
    )
    rows, _ = _best(conn, query, whole, limit)
    parts = list(dict.fromkeys(p for term in query.cjk if len(term) > 2 for p in bigram_list(term)))
    if len(rows) < limit and parts:
        some = Ask(
            " OR ".join(map(match_term, parts)),
            params={"n_terms": 0, **_in_titles(parts)},
            table="notes_cjk",
            boost=_title_bonus(len(parts), 1.0),
            without=tuple(row[0] for row in rows),
        )
        rows += _best(conn, query, some, limit - len(rows))[0]
    snippets, headings = shown
    if not snippets:
        return [(path, title, score, "", None) for _, path, title, score in rows]
    bodies = _bodies(conn, [row[0] for row in rows])
    terms = [*query.cjk, *parts]
    found: list[Row] = []
    for note_id, path, title, score in rows:
        body = bodies.get(note_id, "")
        snippet = snippet_around(body, terms)
        found.append((path, title, score, *_placed(snippet, body if headings else "")))
    return found


def _in_titles(terms: Sequence[str]) -> dict[str, object]:
    """``:title0``, … : the CJK terms whose presence in a note's title earns it a bonus."""
    return {f"title{i}": term for i, term in enumerate(terms)}


def _title_bonus(count: int, each: float) -> str:
    """`` + each`` for every ``:titleN`` in the note's title (read from the note's row: below
    FIELDS_FIRST matches that costs less than looking the title column up in the index)."""
    return "".join(f" + {each} * (instr(n.title, :title{i}) > 0)" for i in range(count))


def _listing(conn: sqlite3.Connection, query: Query, limit: int, headings: bool) -> list[Row]:
    """Filters only: the matching notes by path, each with the start of its text."""
    where, params = filter_clauses(query)
    rows = conn.execute(
        f"SELECT n.id, n.path, n.title FROM notes n WHERE 1 {where} ORDER BY n.path LIMIT :limit",
        {"limit": limit, **params},
    ).fetchall()
    bodies = _bodies(conn, [row[0] for row in rows])
    found: list[Row] = []
    for note_id, path, title in rows:
        body = bodies.get(note_id, "")
        found.append((path, title, 0.0, *_placed(_opening(body), body if headings else "")))
    return found


def filtered_chunk_hashes(conn: sqlite3.Connection, query: Query) -> list[str]:
    """Hashes of the chunks of the notes that pass the query's filters (not its words; a
    hash twice when two chunks share it: a list is a fifth quicker to build than a set)."""
    where, params = filter_clauses(query)  # notes first: their chunks' hashes come from an index
    sql = f"SELECT c.hash FROM notes n CROSS JOIN chunks c ON c.note = n.id WHERE 1 {where}"
    return [hash_ for (hash_,) in conn.execute(sql, params)]


def filtered_chunk_count(conn: sqlite3.Connection, query: Query, limit: int) -> int:
    """How many chunks the notes that pass the query's filters hold, counted up to ``limit``
    (a count stops there: a large filter is not read through)."""
    where, params = filter_clauses(query)
    sql = (
        "SELECT count(*) FROM (SELECT 1 FROM notes n CROSS JOIN chunks c ON c.note = n.id "
        f"WHERE 1 {where} LIMIT :limit)"
    )
    return int(conn.execute(sql, {"limit": limit, **params}).fetchone()[0])


def filtered_among(conn: sqlite3.Connection, query: Query, hashes: Sequence[str]) -> set[str]:
    """The chunk hashes among ``hashes`` whose notes pass the query's filters. The chunks are
    found by hash first: left to itself, SQLite reads every chunk of the notes a phrase or tag
    filter passes (0.6 s instead of 2 ms over 720 hashes at 20,000 notes)."""
    where, params = filter_clauses(query)
    sql = (
        "SELECT c.hash FROM chunks c INDEXED BY chunks_by_hash JOIN notes n ON n.id = c.note "
        f"WHERE c.hash IN (SELECT value FROM json_each(:among)) {where}"
    )
    return {row[0] for row in conn.execute(sql, {"among": json.dumps(list(hashes)), **params})}


def _cjk_match(terms: Sequence[str]) -> str:
    return " ".join(map(match_term, terms))


def _snippets(
    conn: sqlite3.Connection,
    query: Query,
    match: str,
    note_ids: Sequence[int],
    many: bool = True,
    *,
    bodies: bool = True,
) -> dict[int, tuple[str, str]]:
    """Body snippets of ``note_ids`` for ``match`` (``many``: in more than FIELDS_FIRST
    notes), each with the body it was cut from ("" without ``bodies``: FTS5 has read the row
    for the snippet, so the body comes with it for 0.04 ms over ten notes, where reading the
    bodies again by path took 0.1 ms).
    Given these rowids, FTS5 looks each up in every term's list: 0.7 ms for ten notes
    of a word in 86,000, where reading the match once and keeping these ids (``+rowid``) takes
    8 ms; for a small match the one pass is the cheaper, and with a prefix term the look-ups
    would merge the prefix's words again for each id (10 ms each)."""
    if not note_ids:
        return {}
    marks = ", ".join("?" * len(note_ids))
    prefix = any(term.kind == "prefix" for term in query.terms)
    rowid = "rowid" if many and not prefix else "+rowid"
    body = "body" if bodies else "''"
    sql = (
        f"SELECT rowid, {_BODY_SNIPPET}, {body} FROM notes_fts "
        f"WHERE notes_fts MATCH ? AND {rowid} IN ({marks})"
    )
    return {
        int(rowid): (_marked(snippet), body)
        for rowid, snippet, body in conn.execute(sql, (match, *note_ids))
    }


def _bodies(conn: sqlite3.Connection, note_ids: Sequence[int]) -> dict[int, str]:
    if not note_ids:
        return {}
    marks = ", ".join("?" * len(note_ids))
    sql = f"SELECT rowid, body FROM notes_fts WHERE rowid IN ({marks})"
    return {int(rowid): body for rowid, body in conn.execute(sql, note_ids)}


def _placed(snippet: str, body: str) -> tuple[str, str | None]:
    """``snippet`` and the heading path it is under in ``body`` (None when ``body`` is "")."""
    return snippet, heading_at(body, snippet) if body else None


def _opening(body: str) -> str:
    return " ".join(body[: LISTING_CHARS * 2].split())[:LISTING_CHARS]


def _marked(snippet: str) -> str:
    return " ".join(snippet.split()).replace(_OPEN, "**").replace(_CLOSE, "**")
