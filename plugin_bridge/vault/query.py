"""Search syntax → SQL: words, ``prefix*``, ``"phrases"``, ``tag:x`` and ``path:folder``.

Any string is a valid query: every term is quoted for FTS5, so operators, stray quotes and
punctuation in user input are searched as text and never reach SQLite as syntax.

Chinese, Japanese and Korean have no spaces between words, so unicode61 would make a whole run
one token. The side table ``notes_cjk`` holds only the CJK runs of each note, one character per
token (:func:`spaced`); a CJK term of any length is then the phrase of its characters, which
FTS5 answers from its index (a trigram index cannot serve one- and two-character words).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

CJK_RUN = re.compile(
    "[\u3005\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+"
)
_TOKEN = re.compile(
    r'(?P<key>tag|path):(?:"(?P<qval>[^"]*)"|(?P<val>\S+))|"(?P<phrase>[^"]*)"?|(?P<word>\S+)'
)
_WORD_CHARS = re.compile(r"[\w]+", re.UNICODE)


RUN_BREAK = " zzbreak "
"""Put between runs so a phrase cannot match across two separate runs."""


def spaced(text: str) -> str:
    """The CJK runs of ``text``, one character per token, for the ``notes_cjk`` table."""
    return RUN_BREAK.join(" ".join(run) for run in CJK_RUN.findall(text))


def cjk_phrase(term: str) -> str:
    """The FTS5 phrase that finds the CJK ``term`` in ``notes_cjk``."""
    return '"' + " ".join(term) + '"'


@dataclass
class Query:
    """A parsed query. ``fts`` is an FTS5 MATCH expression or empty."""

    fts: str = ""
    cjk: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.fts or self.cjk or self.tags or self.paths)


def parse_query(text: str) -> Query:
    query = Query()
    terms: list[str] = []
    for match in _TOKEN.finditer(text):
        if match.group("key"):
            value = (match.group("qval") or match.group("val") or "").strip()
            target = query.tags if match.group("key") == "tag" else query.paths
            if value:
                target.append(
                    value.lstrip("#").lower() if target is query.tags else value.strip("/")
                )
            continue
        raw = match.group("phrase") if match.group("phrase") is not None else match.group("word")
        prefix = match.group("word") is not None and raw.endswith("*")
        query.cjk += CJK_RUN.findall(raw)
        latin = CJK_RUN.sub(" ", raw)
        words = _WORD_CHARS.findall(latin)
        if not words:
            continue
        body = " ".join(words)
        terms.append(f'"{body}"*' if prefix else f'"{body}"')
    query.fts = " ".join(terms)
    return query
