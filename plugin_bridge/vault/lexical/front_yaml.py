"""The one YAML loader for a note's front matter (the index, properties, prompts), bounded.

Front matter is a file someone else may have written, so the loader refuses, before building
anything, what would cost far more than the text's size: an alias to a list or map (each use
repeats it: a 406-byte "alias bomb" expanded to gigabytes), nesting deeper than
:data:`MAX_DEPTH`, and more than :data:`MAX_NODES` values or :data:`MAX_CHARS` characters of
values (an alias of a string counts again). Everything else is YAML's safe subset, parsed by
libyaml where installed (about 20 times faster than pure Python).
"""

from __future__ import annotations

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
    loader = _Loader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()
