"""Search syntax → terms for FTS5, CJK terms and filters.

Obsidian's operators (``operators.py`` parses them): words rank (any may match; notes with
more of them rank first, see ``search.py``), ``+word`` (required), ``prefix*``, ``"a phrase"``
(exact: in this order, not stemmed; it also filters, so that vectors, which rank by meaning,
keep to the notes that hold it). Everything else filters: ``-word`` and ``-"phrase"``
exclude, ``a OR b`` (and parentheses: ``x (a OR b)``) keeps the notes the expression holds,
``file:``, ``path:``, ``tag:`` (also its nested tags ``name/…``), ``content:``, ``[property]``,
``[property:value]``, ``line:(…)`` and ``section:(…)``; the words inside an OR, a group,
``content:``, ``line:`` or ``section:`` rank too. Filters
narrow, words rank; a query of only filters lists the matching notes. A query that does not
parse (an unclosed quote, parenthesis or bracket) is searched as plain words. Stop words are
dropped from the ranking unless the query has nothing else; each word also matches its
Snowball stems (``words.py``). Any string is a valid query: every term is quoted for FTS5,
so FTS5's own operators (``AND``, ``NOT``, ``NEAR``, ``*``) never reach SQLite as syntax.
Chinese, Japanese and Korean runs become separate terms for the CJK side table (``cjk.py``).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field, replace
from typing import Final, Literal

from plugin_bridge.vault.lexical import operators as ops
from plugin_bridge.vault.lexical import words as lang
from plugin_bridge.vault.lexical.cjk import split_cjk

MAX_QUERY_CHARS: Final = 1000
MAX_TERMS: Final = 32
EXACT: Final = "{title aliases headings tags body}"
"""The ``notes_fts`` columns holding the notes' own words."""
STEMS: Final = "{stem_title stem_headings stem_body}"
"""The ``notes_fts`` columns holding their stems."""
CONTENT: Final = ("{headings tags body}", "{stem_headings stem_body}")
"""The columns ``content:`` looks in (exact, stems): the text, not the name or aliases."""
_WORD_CATEGORIES: Final = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Nd", "Nl", "No", "So", "Co"})
_CONTROL: Final = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")

Kind = Literal["word", "prefix", "phrase"]


@dataclass(frozen=True)
class Term:
    """One thing to find: a word (with its stems), a prefix, or an exact phrase."""

    text: str
    kind: Kind = "word"
    required: bool = False
    """``+word``: every result has it."""
    stems: tuple[str, ...] = ()
    alternatives: tuple[str, ...] = ()
    """Words of the vault close to a word that matches nothing (a typo's likely meaning)."""

    def expression(self, *, exact: bool = False, content: bool = False) -> str:
        """The FTS5 expression of this term (with ``exact``, the word itself only; with
        ``content``, in the note's text only: ``content:``)."""
        words, stems = CONTENT if content else (EXACT, STEMS)
        if self.kind == "prefix":
            return f"{words}: {_quote(self.text)}*"
        if self.kind == "phrase" or exact:
            return f"{words}: {_quote(self.text)}"
        parts = [f"{words}: {_quote(self.text)}"]
        if self.stems:
            parts.append(f"{stems}: ({' OR '.join(map(_quote, self.stems))})")
        for word in self.alternatives:  # a vault word, or a stem (the vocabulary has both)
            parts.append(f"{EXACT}: {_quote(word)} OR {STEMS}: {_quote(word)}")
        return "(" + " OR ".join(parts) + ")"


@dataclass(frozen=True)
class Query:
    """A parsed query: its terms, CJK terms and filters."""

    terms: tuple[Term, ...] = ()
    cjk: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    folders: tuple[str, ...] = ()
    """Notes inside these folders (vault-relative, no trailing slash); set by callers."""
    fold_folders: bool = False
    """Compare ``folders`` without case, as a case-insensitive vault's file system does."""
    where: tuple[ops.Node, ...] = ()
    """Obsidian's operators that filter, all of which a note passes (``filters.py``)."""
    unsupported: str = ""
    """An operator the index cannot answer (``line``, ``section``…; "" when none)."""
    text: str = field(default="", compare=False)
    """What was typed, without its filters: what vector search embeds."""

    @property
    def empty(self) -> bool:
        return not (self.terms or self.cjk or self.filtered)

    @property
    def filtered(self) -> bool:
        return bool(self.tags or self.paths or self.folders or self.where)

    @property
    def match(self) -> str:
        """The FTS5 expression of notes that match: every required term and, when none is
        required, any term ("" when the query has none). Optional terms stay in the expression
        after the required ones, so BM25 counts them (``+a b``: a note without b still matches)."""
        required = [t.expression() for t in self.terms if t.required]
        optional = [t.expression() for t in self.terms if not t.required]
        if not optional:
            return " AND ".join(required)
        return " AND ".join([*required, "(" + " OR ".join(optional + required[:1]) + ")"])

    @property
    def anchor(self) -> str:
        """A word every match of :attr:`match_all` holds, as an FTS5 expression over every
        column ("" when the terms are all prefixes): an upper bound on its matches that FTS5
        counts without reading positions."""
        words = [t.text.split()[0] for t in self.terms if t.kind != "prefix"]
        return _quote(words[0]) if words else ""

    @property
    def match_every(self) -> str:
        """The FTS5 expression of notes that match every term (with its stems and typos)."""
        return " AND ".join(t.expression() for t in self.terms)

    @property
    def optional(self) -> bool:
        """Whether a note may match some terms and not others (some are not ``+required``)."""
        return len(self.terms) > 1 and not all(t.required for t in self.terms)

    @property
    def match_all(self) -> str:
        """The FTS5 expression of notes that hold every term as typed (no stems, no typos)."""
        return " AND ".join(t.expression(exact=True) for t in self.terms)


def with_filters(
    query: Query, folder: str | None = None, tag: str | None = None, *, fold: bool = False
) -> Query:
    """``query`` limited to a folder and/or a tag (its nested tags too); with ``fold`` the
    folder matches whatever its case (the vault's file system ignores case)."""
    folder = (folder or "").replace("\\", "/").strip("/")
    tag = tag_of(tag or "")
    return replace(
        query,
        folders=(*query.folders, folder) if folder else query.folders,
        fold_folders=fold,
        tags=tuple(dict.fromkeys((*query.tags, tag))) if tag else query.tags,
    )


def parse_query(text: str) -> Query:
    """Parse user input; never raises, whatever ``text`` holds."""
    typed = " ".join(w for w in text.split() if not w.lower().startswith(("tag:", "path:")))
    text = _sanitise(text)
    try:
        tree = ops.parse(text)
    except ops.Unparsable:
        tree = ops.plain(text)
    terms: list[Term] = []
    cjk: list[str] = []
    tags: list[str] = []
    paths: list[str] = []
    where: list[ops.Node] = []
    for item in tree.items:
        if isinstance(item, ops.Text) and item.field in ("", "tag", "path"):
            if item.field == "tag":
                tags += [tag] if (tag := tag_of(item.text)) else []
            elif item.field == "path":
                path = item.text.replace("\\", "/").removeprefix("./").lstrip("/")
                paths += [path] if path else []
            else:
                term, runs = leaf_terms(item)
                _add((term, runs), terms, cjk)
                if item.phrase and (term or runs):  # in every mode, as Obsidian reads it
                    where.append(item)
            continue
        where.append(item)
        for leaf in _ranked_leaves(item):  # the words of an OR, a group, content: rank too
            _add(leaf_terms(ops.Text(leaf.text, leaf.phrase)), terms, cjk)
    if where:
        typed = " ".join(leaf.text for leaf in _leaves(tree.items))
    return Query(
        terms=tuple(_without_stop_words(terms)[:MAX_TERMS]),
        cjk=tuple(dict.fromkeys(cjk[:MAX_TERMS])),
        tags=tuple(dict.fromkeys(tags)),
        paths=tuple(dict.fromkeys(paths)),
        where=tuple(where),
        unsupported=tree.unsupported,
        text=typed,
    )


def leaf_terms(leaf: ops.Text) -> tuple[Term | None, list[str]]:
    """The term (None when it holds no word) and CJK runs of a word or phrase."""
    raw, phrase = leaf.text, leaf.phrase
    prefix = not phrase and raw.endswith("*")
    runs, rest = split_cjk(raw.rstrip("*") if prefix else raw)
    return _term(rest, phrase, prefix, leaf.required), runs


def tag_of(text: str) -> str:
    """A ``tag:`` value as the index stores tags: no ``#``, no outer slashes, case-folded."""
    return text.lstrip("#").strip("/").casefold()


def _add(found: tuple[Term | None, list[str]], terms: list[Term], cjk: list[str]) -> None:
    term, runs = found
    cjk += runs
    if term is not None:
        terms.append(term)


def _leaves(items: tuple[ops.Node, ...]) -> list[ops.Text]:
    """The words and phrases that rank: plain, or in ``content:``, never under a ``-``."""
    return [leaf for item in items for leaf in _ranked_leaves(item)]


def _ranked_leaves(node: ops.Node) -> list[ops.Text]:
    if isinstance(node, ops.Text):
        return [node] if node.field in ("", "content") else []
    if isinstance(node, (ops.All, ops.AnyOf)):
        return [leaf for child in node.nodes for leaf in _ranked_leaves(child)]
    if isinstance(node, ops.Scoped):
        return _ranked_leaves(node.node)
    return []  # a property, or excluded


def _term(text: str, phrase: bool, prefix: bool, required: bool) -> Term | None:
    """The term of one token (punctuation inside a word makes it a phrase, as FTS5 reads it)."""
    if not _has_word(text):
        return None
    found = lang.tokens(text)
    joined = " ".join(found) if found else " ".join(text.split())
    if prefix:
        return Term(joined, "prefix", required)
    if phrase or len(found) != 1:
        return Term(joined, "phrase", required)
    return Term(joined, "word", required, lang.query_stems(joined))


def _without_stop_words(terms: list[Term]) -> list[Term]:
    """Plain words that are stop words go, unless nothing else is left; terms repeat once."""
    unique = list(dict.fromkeys(terms))
    plain = [t.text for t in unique if t.kind == "word" and not t.required]
    kept = set(lang.content_words(plain, keep_all=len(plain) == len(unique)))
    return [t for t in unique if t.kind != "word" or t.required or t.text in kept]


def _sanitise(text: str) -> str:
    """Drop what SQLite or FTS5 cannot take: NUL and control characters, lone surrogates."""
    text = text[:MAX_QUERY_CHARS].encode("utf-8", "ignore").decode("utf-8")
    return unicodedata.normalize("NFC", _CONTROL.sub(" ", text))


def _has_word(text: str) -> bool:
    """Whether ``text`` holds a letter, digit or emoji: else FTS5 would see an empty term."""
    return any(unicodedata.category(char) in _WORD_CATEGORIES for char in text)


def _quote(term: str) -> str:
    """``term`` as an FTS5 string (a phrase when it holds several words)."""
    return '"' + term.replace('"', '""') + '"'
