"""The one YAML loader for a note's front matter (the index, properties, prompts), bounded.

Front matter is a file someone else may have written, so the loader refuses, before building
anything, what would cost far more than the text's size: an alias to a list or map (each use
repeats it: a 406-byte "alias bomb" expanded to gigabytes), nesting deeper than
:data:`MAX_DEPTH`, and more than :data:`MAX_NODES` values or :data:`MAX_CHARS` characters of
values (an alias of a string counts again). Everything else is YAML's safe subset, parsed by
libyaml where installed (about 20 times faster than pure Python).

Most front matter is flat: ``key: word`` lines and ``- word`` lists under a ``key:``.
:func:`flat` reads such a block without YAML (YAML costs ~40 µs a note even through libyaml:
the composer and the constructor are Python) and gives up on anything it cannot prove YAML
reads as the same strings: quotes, indicators (``& * ! { } [ ] | > # % @ ` : ``), tabs and
other unprintable characters, a value or key that YAML would turn into a boolean or null (or
that starts with anything but a letter: numbers, dates), a repeated key, continuation lines,
comments and blank lines. Those blocks go to the bounded YAML loader.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

import yaml
from yaml.composer import Composer
from yaml.events import AliasEvent, Event, MappingStartEvent, SequenceStartEvent
from yaml.nodes import Node, ScalarNode

MAX_DEPTH: Final = 16
"""Lists and maps inside one another, at most."""
MAX_NODES: Final = 20_000
"""Values (scalars, lists, maps) in one front matter, at most."""
MAX_CHARS: Final = 1_000_000
"""Characters of all the values together, at most."""


class Refused(yaml.YAMLError):
    """Front matter the loader will not build; ``reason`` is one phrase naming the limit."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Bounded(Composer):
    """The composer (events to nodes) with the limits checked at each value; placed before
    the parser so that its ``compose_node`` runs, even over libyaml's parser."""

    check_event: Callable[..., bool]  # the parser's, after this class in the order
    peek_event: Callable[[], Event | None]

    def __init__(self) -> None:
        Composer.__init__(self)
        self._depth = 0
        self._nodes = 0
        self._chars = 0

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        if self.check_event(AliasEvent):
            event = self.peek_event()
            target = self.anchors.get(getattr(event, "anchor", None))
            if target is not None and not isinstance(target, ScalarNode):
                raise Refused("an alias repeats a list or map (an alias bomb)")
        elif self._depth >= MAX_DEPTH and self.check_event(MappingStartEvent, SequenceStartEvent):
            raise Refused(f"lists and maps are nested more than {MAX_DEPTH} deep")
        self._depth += 1
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        self._nodes += 1
        if isinstance(node, ScalarNode):
            self._chars += len(node.value)
        if self._nodes > MAX_NODES:
            raise Refused(f"it has more than {MAX_NODES:,} values")
        if self._chars > MAX_CHARS:
            raise Refused(f"its values are longer than {MAX_CHARS:,} characters")
        return node


class _PythonLoader(_Bounded, yaml.SafeLoader):
    def __init__(self, text: str) -> None:
        yaml.SafeLoader.__init__(self, text)
        _Bounded.__init__(self)


_Loader: type[yaml.SafeLoader] | type[yaml.CSafeLoader] = _PythonLoader
if yaml.__with_libyaml__:

    class _LibyamlLoader(_Bounded, yaml.CSafeLoader):
        """libyaml parses (about 20 times faster than pure Python); the composer and the
        constructor stay Python's."""

        def __init__(self, text: str) -> None:
            yaml.CSafeLoader.__init__(self, text)
            _Bounded.__init__(self)

    _Loader = _LibyamlLoader


def load(text: str) -> object:
    """The YAML document ``text`` as Python values; :class:`Refused` past the limits, another
    ``yaml.YAMLError`` when it is not YAML."""
    found = flat(text)
    return load_yaml(text) if found is None else found


def load_yaml(text: str) -> object:
    """:func:`load` through YAML always (the bounded loader), never :func:`flat`."""
    loader = _Loader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


# A plain scalar that YAML reads as this very string: a letter first (numbers, dates, ".inf",
# "~", "<<" and every indicator start otherwise), then no character that could mean anything
# but itself anywhere in block context; trailing spaces are not part of it (YAML drops them).
_PLAIN: Final = r"[^\W\d_][^'\"&*!{}\[\]|>#%@`:]*?"
_KEY_LINE: Final = re.compile(rf"([^\W\d_][\w-]{{0,127}}):(?: +({_PLAIN}))? *")
_ITEM_LINE: Final = re.compile(rf"( *)- ({_PLAIN}) *")
_WORDS: Final[dict[str, bool | None]] = {
    **dict.fromkeys(("yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True),
    **dict.fromkeys(("no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False),
    **dict.fromkeys(("null", "Null", "NULL"), None),
}
"""The plain words PyYAML's safe loader (YAML 1.1) reads as booleans or null, as it spells
them; another spelling of these words (``tRUE``) is left to YAML."""
_RESOLVED: Final = frozenset(word.lower() for word in _WORDS)


Flat = dict[str, str | bool | list[str] | None]
"""Front matter as :func:`flat` reads it."""


def flat(text: str) -> Flat | None:
    """``text`` read without YAML when it is flat (see the module docstring), else None: then
    only YAML can tell what it is. Whatever it returns, :func:`load_yaml` returns too."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if not lines or 2 * len(lines) + 1 > MAX_NODES or len(text) > MAX_CHARS:
        return None  # empty (YAML: None), or the limits' business
    found: Flat = {}
    items: list[str] | None = None  # the list being read, under the last "key:"
    indent = -1
    key = ""
    for line in lines:
        if not line.isprintable():
            return None  # tabs, control characters, line separators
        if items is not None and (item := _ITEM_LINE.fullmatch(line)):
            if indent < 0:
                indent = len(item.group(1))
            if len(item.group(1)) != indent or item.group(2).lower() in _RESOLVED:
                return None
            items.append(item.group(2))
            continue
        if items:
            found[key] = items
        pair = _KEY_LINE.fullmatch(line)
        if pair is None:
            return None
        key, value = pair.group(1, 2)
        if key in found or key.lower() in _RESOLVED:
            return None
        if value is not None and value.lower() in _RESOLVED:
            if value not in _WORDS:
                return None
            found[key] = _WORDS[value]
        else:
            found[key] = value
        items, indent = ([], -1) if value is None else (None, -1)
    if items:
        found[key] = items
    return found
