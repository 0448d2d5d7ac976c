"""Which heading path (``Setup > Linux``) a search snippet was cut from: made where the
snippet is made, from the note's text the same query reads (no second read of the bodies).

A heading path names a heading by the headings above it, joined by `` > `` as chunks name
theirs (``chunks.py``); headings inside code fences and front matter are not headings.
"""

from __future__ import annotations

import re
from typing import Final

from plugin_bridge.vault.lexical.parse import body_start

# Line patterns start with "\n" (the text gets one prepended): a literal first character lets
# the regex engine jump between lines instead of trying "^" at every position.
HEADING_LINE: Final = re.compile(r"\n {0,3}(#{1,6})[ \t]+([^\n]*?)(?:[ \t]+#+)?[ \t]*(?=\n|\Z)")
"""A Markdown heading line: its ``#``s and its name."""


def heading_at(body: str, snippet: str) -> str | None:
    """The heading path a search snippet (its match marked ``**…**``) was cut from in the
    note ``body``: the innermost heading above the marked word with its neighbours (else the
    marked word alone, its first place); None above the first heading, or when the body does
    not hold it."""
    marked = snippet.split("**")
    if len(marked) < 3 or not marked[1].strip():
        return None
    before, word = marked[0].split("…")[-1].split(), marked[1].split()
    after = marked[2].split("…")[0].split()
    text = body[body_start(body) :]
    at = -1  # the snippet keeps the note's own letters: a plain find, then the word alone
    for words in ([*before[-1:], *word, *after[:1]], word):
        if (at := text.find(" ".join(words))) >= 0:
            break
    if at < 0:
        return None
    return _path_above("\n" + text, at + 1)


def _path_above(lines: str, at: int) -> str | None:
    """The heading path over offset ``at`` of ``lines`` ("\n" + the text), read upwards: each
    line holding a "#" is tried (a jump in C between them), the nearest heading of each higher
    level kept, unless an odd number of fence lines above it says it is in code."""
    path: list[str] = []
    higher = 7
    while higher > 1 and (sharp := lines.rfind("#", 0, at)) >= 0:
        at = lines.rfind("\n", 0, sharp)
        match = HEADING_LINE.match(lines, at)
        if match is None or not match.group(2).strip() or len(match.group(1)) >= higher:
            continue
        if (lines.count("\n```", 0, at) + lines.count("\n~~~", 0, at)) % 2 == 0:
            higher = len(match.group(1))
            path.insert(0, match.group(2))
    return " > ".join(path) or None
