"""Obsidian's search operators: a query's structure as a tree (:func:`parse`).

Read as Obsidian reads it: words and ``"phrases"`` side by side must all match, ``OR`` between
them binds looser (``a b OR c`` is ``(a b) OR c``), parentheses group, ``-`` before any of these
excludes it, ``file:``, ``path:``, ``tag:`` and ``content:`` apply to the word, phrase or group
after them, ``[property]`` and ``[property:value]`` (``[status:a OR b]``, ``[status:null]``)
test front matter, ``line:(…)`` and ``section:(…)`` ask their expression of one line or one
section (the text between two headings). ``block:``, the ``task`` operators and the case
operators are recognised and reported as :attr:`Tree.unsupported`. An unclosed quote,
parenthesis or bracket, or a stray ``)``, raises :class:`Unparsable`: ``query.py`` then reads
the text as plain words. Which parts rank and which filter is ``query.py``'s; the SQL of the
filters is ``filters.py``'s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Final, Literal, TypeAlias

Field = Literal["", "file", "path", "tag", "content"]
FIELDS: Final[dict[str, Field]] = {
    "file": "file",
    "path": "path",
    "tag": "tag",
    "content": "content",
}
OperatorScope = Literal["line", "section"]
SCOPES: Final[dict[str, OperatorScope]] = {"line": "line", "section": "section"}
UNSUPPORTED: Final = frozenset(
    {"block", "task", "task-todo", "task-done", "match-case", "ignore-case"}
)
"""Obsidian's operators the index cannot answer: the search says so in a sentence."""
MAX_DEPTH: Final = 16
"""Parentheses nested deeper than this make the query unparsable (plain words)."""
_WORD: Final = re.compile(r'[^\s()"]+')
_VALUE_OR: Final = re.compile(r"\s+OR\s+")


class Unparsable(Exception):
    """An unclosed quote, parenthesis or bracket, or a stray closing parenthesis."""


@dataclass(frozen=True)
class Text:
    """A word (``prefix*`` too) or ``"a phrase"``, anywhere or in one ``field``."""

    text: str
    phrase: bool = False
    field: Field = ""
    required: bool = False
    """``+word``: every ranked result has it (plain words only)."""


@dataclass(frozen=True)
class Property:
    """``[key]``: notes with this front matter property; ``[key:value]``: with any of
    ``values`` (compared without case); ``[key:null]``: with it empty."""

    key: str
    values: tuple[str, ...] = ()
    null: bool = False


@dataclass(frozen=True)
class Not:
    node: Node


@dataclass(frozen=True)
class Scoped:
    """``line:(…)``, ``section:(…)``: one line (or section) of the note matches ``node``."""

    scope: OperatorScope
    node: Node


@dataclass(frozen=True)
class All:
    nodes: tuple[Node, ...]


@dataclass(frozen=True)
class AnyOf:
    nodes: tuple[Node, ...]


Node: TypeAlias = Text | Property | Not | All | AnyOf | Scoped
Token: TypeAlias = tuple[str, str]
"""(kind, value): kind is one of ( ) OR - + phrase word field prop."""


@dataclass(frozen=True)
class Tree:
    """A parsed query: the conjunction of ``items`` and the first unsupported operator
    (without its colon; "" when none)."""

    items: tuple[Node, ...]
    unsupported: str = ""


def parse(text: str) -> Tree:
    """The operator tree of ``text``; Unparsable when its quotes, brackets or parentheses do
    not close (see the module's docstring)."""
    parser = _Parser(_scan(text))
    root = parser.expression(0, "")
    if parser.pos < len(parser.tokens):  # a stray ")"
        raise Unparsable
    return Tree(_items(root), parser.unsupported)


def plain(text: str) -> Tree:
    """``text`` as plain words: quotes, parentheses and brackets are spaces, no operators."""
    return Tree(tuple(Text(word) for word in _WORD.findall(re.sub(r"[\[\]]", " ", text))))


def _items(root: Node | None) -> tuple[Node, ...]:
    """The top-level conjunction of ``root``, groups of it opened (``(a b) c`` is ``a b c``)."""
    if root is None:
        return ()
    if isinstance(root, All):
        return tuple(item for node in root.nodes for item in _items(node))
    return (root,)


def _scan(text: str) -> list[Token]:
    tokens: list[Token] = []
    i, end = 0, len(text)
    while i < end:
        char = text[i]
        if char.isspace():
            i += 1
        elif char in "()":
            tokens.append((char, ""))
            i += 1
        elif char == '"':
            phrase, i = _phrase(text, i + 1)
            tokens.append(("phrase", phrase))
        elif char == "[" and not text.startswith("[[", i):
            close = text.find("]", i)
            if close < 0:
                raise Unparsable
            tokens.append(("prop", text[i + 1 : close]))
            i = close + 1
        elif char in "-+" and i + 1 < end and not text[i + 1].isspace() and text[i + 1] != ")":
            tokens.append((char, ""))
            i += 1
        else:
            match = _WORD.match(text, i)
            assert match is not None  # char is none of the characters it stops at
            word, i = match.group(), match.end()
            key, colon, rest = word.partition(":")
            known = key.lower() in FIELDS or key.lower() in SCOPES or key.lower() in UNSUPPORTED
            if colon and known:
                if rest:
                    tokens += [("field", key.lower()), ("word", rest)]
                elif i < end and text[i] in '("':
                    tokens.append(("field", key.lower()))
                continue  # an operator with no value ("tag:") filters nothing
            tokens.append(("OR", word) if word == "OR" else ("word", word))
    return tokens


def _phrase(text: str, start: int) -> tuple[str, int]:
    """The phrase from ``start`` (after its opening quote) to its closing quote (``\\"`` is a
    quote inside it), and the position after it."""
    chars: list[str] = []
    i = start
    while i < len(text):
        if text[i] == "\\" and text.startswith('"', i + 1):
            chars.append('"')
            i += 2
        elif text[i] == '"':
            return "".join(chars), i + 1
        else:
            chars.append(text[i])
            i += 1
    raise Unparsable


class _Parser:
    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.pos = 0
        self.unsupported = ""

    def _peek(self) -> str:
        return self.tokens[self.pos][0] if self.pos < len(self.tokens) else ""

    def expression(self, depth: int, field: Field) -> Node | None:
        """Conjunctions separated by OR, up to a ``)`` or the end."""
        groups: list[Node] = []
        while True:
            group = self._conjunction(depth, field)
            if group is not None:
                groups.append(group)
            if self._peek() != "OR":
                break
            self.pos += 1
        if len(groups) > 1:
            return AnyOf(tuple(groups))
        return groups[0] if groups else None

    def _conjunction(self, depth: int, field: Field) -> Node | None:
        items: list[Node] = []
        while self._peek() not in ("", ")", "OR"):
            if (item := self._unary(depth, field)) is not None:
                items.append(item)
        if len(items) > 1:
            return All(tuple(items))
        return items[0] if items else None

    def _unary(self, depth: int, field: Field) -> Node | None:
        kind = self._peek()
        if kind not in ("-", "+"):
            return self._atom(depth, field)
        self.pos += 1
        inner = self._atom(depth, field) if self._peek() not in ("", ")", "OR") else None
        if inner is None:
            return None
        if kind == "-":
            return Not(inner)
        return replace(inner, required=True) if isinstance(inner, Text) and not field else inner

    def _atom(self, depth: int, field: Field) -> Node | None:
        kind, value = self.tokens[self.pos]
        self.pos += 1
        if kind == "(":
            if depth >= MAX_DEPTH:
                raise Unparsable
            inner = self.expression(depth + 1, field)
            if self._peek() != ")":
                raise Unparsable
            self.pos += 1
            return inner
        if kind == "phrase":
            return Text(value, phrase=True, field=field)
        if kind == "word":
            return Text(value, field=field)
        if kind == "prop":
            return _property(value)
        if kind == "field":
            if self._peek() in ("", ")", "OR"):
                return None
            inner = self._atom(depth, FIELDS.get(value, field))
            if value in SCOPES and inner is not None:
                return Scoped(SCOPES[value], inner)
            if value in UNSUPPORTED:
                self.unsupported = self.unsupported or value
                return None
            return inner
        return None  # "-" or "+" left alone by _unary cannot reach here; ")" neither


def unsupported(operator: str) -> str:
    """The sentence that says search cannot answer ``operator`` (one of :data:`UNSUPPORTED`)."""
    if operator.endswith("case"):
        why = "search always ignores case"
    elif operator.startswith("task"):
        why = "the index does not keep tasks apart"
    else:
        why = "the index does not keep blocks apart"
    return (
        f"The search operator {operator}: is not supported ({why}): search its words without "
        "it, or narrow with line:(…), section:(…), file:, path:, tag:, content: or "
        "[property:value]."
    )


def _property(inside: str) -> Property | None:
    """``[key]``, ``[key:value]``, ``[key:"value"]``, ``[key:a OR b]``, ``[key:null]``."""
    key, colon, value = inside.partition(":")
    key = key.strip().strip('"').casefold()
    if not key:
        return None
    if not colon or not value.strip():
        return Property(key)
    values = tuple(
        v for v in (part.strip().strip('"').casefold() for part in _VALUE_OR.split(value)) if v
    )
    if values == ("null",):
        return Property(key, null=True)
    return Property(key, values) if values else Property(key)
