"""Search syntax → an FTS5 MATCH expression, CJK terms and filters.

Syntax: words (all must match), ``prefix*``, ``"a phrase"``, ``tag:name`` (also its nested
tags ``name/…``) and ``path:text`` (notes whose path contains it); a query of only filters lists
the matching notes. Any string is a valid query: every term is quoted for FTS5, so operators
(``AND``, ``NOT``, ``-``, ``*``, parentheses) and stray quotes are searched as text and never
reach SQLite as syntax. Chinese, Japanese and Korean runs become separate terms for the CJK
side table (see :mod:`plugin_bridge.vault.lexical.cjk`).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Final

from plugin_bridge.vault.lexical.cjk import split_cjk

MAX_QUERY_CHARS: Final = 1000
MAX_TERMS: Final = 32

_TOKEN: Final = re.compile(
    r'(?P<key>tag|path):(?:"(?P<quoted>[^"]*)"?|(?P<value>\S*))'
    r'|"(?P<phrase>[^"]*)"?'
    r'|(?P<word>[^\s"]+)',
    re.IGNORECASE,
)
_WORD_CATEGORIES: Final = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Nd", "Nl", "No", "So", "Co"})
_CONTROL: Final = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@dataclass(frozen=True)
class Query:
    """A parsed query: ``match`` for ``notes_fts`` ("" when none), CJK terms, filters."""

    match: str = ""
    cjk: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    folders: tuple[str, ...] = ()
    """Notes inside these folders (vault-relative, no trailing slash); set by callers."""
    fold_folders: bool = False
    """Compare ``folders`` without case, as a case-insensitive vault's file system does."""

    @property
    def empty(self) -> bool:
        return not (self.match or self.cjk or self.tags or self.paths or self.folders)

    @property
    def filtered(self) -> bool:
        return bool(self.tags or self.paths or self.folders)


def with_filters(
    query: Query, folder: str | None = None, tag: str | None = None, *, fold: bool = False
) -> Query:
    """``query`` limited to a folder and/or a tag (its nested tags too); with ``fold`` the
    folder matches whatever its case (the vault's file system ignores case)."""
    from dataclasses import replace

    folder = (folder or "").replace("\\", "/").strip("/")
    tag = (tag or "").lstrip("#").strip("/").casefold()
    return replace(
        query,
        folders=(*query.folders, folder) if folder else query.folders,
        fold_folders=fold,
        tags=tuple(dict.fromkeys((*query.tags, tag))) if tag else query.tags,
    )


def parse_query(text: str) -> Query:
    """Parse user input; never raises, whatever ``text`` holds."""
    text = _sanitise(text)
    terms: list[str] = []
    cjk: list[str] = []
    tags: list[str] = []
    paths: list[str] = []
    for token in _TOKEN.finditer(text):
        if token.group("key"):
            value = (token.group("quoted") or token.group("value") or "").strip()
            if token.group("key").lower() == "tag":
                tags += [tag] if (tag := value.lstrip("#").strip("/").casefold()) else []
            else:
                path = value.replace("\\", "/").removeprefix("./").lstrip("/")
                paths += [path] if path else []
            continue
        phrase = token.group("phrase")
        raw = phrase if phrase is not None else token.group("word")
        prefix = phrase is None and raw.endswith("*")
        runs, rest = split_cjk(raw.rstrip("*") if prefix else raw)
        cjk += runs
        if _has_word(rest):
            terms.append(_quote(" ".join(rest.split()), prefix=prefix))
    return Query(
        match=" ".join(terms[:MAX_TERMS]),
        cjk=tuple(dict.fromkeys(cjk[:MAX_TERMS])),
        tags=tuple(dict.fromkeys(tags)),
        paths=tuple(dict.fromkeys(paths)),
    )


def _sanitise(text: str) -> str:
    """Drop what SQLite or FTS5 cannot take: NUL and control characters, lone surrogates."""
    text = text[:MAX_QUERY_CHARS].encode("utf-8", "ignore").decode("utf-8")
    return unicodedata.normalize("NFC", _CONTROL.sub(" ", text))


def _has_word(text: str) -> bool:
    """Whether ``text`` holds a letter, digit or emoji: else FTS5 would see an empty term."""
    return any(unicodedata.category(char) in _WORD_CATEGORIES for char in text)


def _quote(term: str, *, prefix: bool) -> str:
    """``term`` as an FTS5 string (a phrase when it holds several words), maybe a prefix."""
    return '"' + term.replace('"', '""') + '"' + ("*" if prefix else "")
