"""Notes as chunks for embedding: split along headings, size bounded, each with a content hash.

Each chunk's embedded text starts with the note's title and its heading path (``Setup > Linux``)
so a chunk says what it is about out of context. The hash covers the heading path and the text,
not the title: a chunk whose hash the index already has a vector for is never embedded again,
whatever happened to the file's mtime, folder or name (a renamed note keeps its vectors, which
keep the old title until that chunk's text changes). A note without text is one chunk of its
title, hashed by the title.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

MAX_CHARS: Final = 2000
"""A chunk's text (without its title and heading prefix) is at most this long."""
MIN_CHARS: Final = 800
"""A chunk shorter than this takes in the sections after it under the same top heading."""
_HEADING: Final = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_FENCE: Final = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_PARAGRAPH: Final = re.compile(r"\n[ \t]*\n")
_MARKED: Final = re.compile(r"\n {0,3}[#`~]")


@dataclass(frozen=True, slots=True)
class Chunk:
    """One piece of a note: where it is (``heading`` path) and its ``text``, hashed with the
    note's title by :func:`embed_text`."""

    seq: int
    heading: str
    text: str
    hash: str

    def __reduce__(self) -> tuple[type[Chunk], tuple[int, str, str, str]]:
        """Pickled (to the index's writer) as its four values: the state dataclasses give a
        class with slots costs a ``fields()`` call per chunk, both ways."""
        return Chunk, (self.seq, self.heading, self.text, self.hash)


def embed_text(title: str, heading: str, text: str) -> str:
    """What the embedder sees for a chunk: title, heading path, then the text."""
    head = f"{title}\n{heading}" if heading else title
    return f"{head}\n\n{text}" if text else head


def chunk_hash(title: str, heading: str, text: str) -> str:
    """The content hash of a chunk (see the module docstring: the title counts only alone)."""
    content = f"{heading}\n\n{text}" if text else f"\x00title\n{title}"
    return hashlib.sha256(content.encode()).hexdigest()[:32]


def chunk_note(title: str, body: str, max_chars: int = MAX_CHARS) -> list[Chunk]:
    """The chunks of a note, in order; a note without text is one chunk of its title."""
    pieces: list[tuple[str, str]] = []
    for heading, text in _merged(_sections(body), max_chars):
        pieces += [(heading, part) for part in _bounded(text, max_chars)]
    if not pieces:
        pieces = [("", "")]
    return [
        Chunk(seq, heading, text, chunk_hash(title, heading, text))
        for seq, (heading, text) in enumerate(pieces)
    ]


def _sections(body: str) -> Iterator[tuple[tuple[str, ...], str]]:
    """(heading path, text) of each part of ``body``; headings inside code fences are text.
    Only a line that starts (after at most three spaces) with ``#``, a backtick or ``~`` can
    be a heading or a fence: the others are never looked at one by one, and each part's text
    is a slice of ``body``."""
    path: list[tuple[int, str]] = []
    fence = ""
    current: tuple[str, ...] = ()
    start = 0  # where the current part's text starts
    for at, line in _marked_lines(body):
        opened = _FENCE.match(line)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = ""
            continue
        if opened:
            fence = opened.group(1)
            continue
        heading = _HEADING.match(line)
        if heading is None:
            continue
        yield current, body[start:at].strip()
        level = len(heading.group(1))
        path = [(lvl, name) for lvl, name in path if lvl < level] + [(level, heading.group(2))]
        current = tuple(name for _, name in path)
        start = at + len(line) + 1
    yield current, body[start:].strip()


def _marked_lines(body: str) -> Iterator[tuple[int, str]]:
    """(where it starts, the line) of each line of ``body`` that could be a heading or a
    fence, in order (the regex jumps from line break to line break)."""
    for mark in _MARKED.finditer("\n" + body):
        begin = mark.start()  # in body: the line break added in front shifts by one
        end = body.find("\n", begin)
        yield begin, body[begin:] if end < 0 else body[begin:end]


def _merged(
    sections: Iterator[tuple[tuple[str, ...], str]], max_chars: int
) -> Iterator[tuple[str, str]]:
    """Sections as (``A > B``, text). Short sections are joined with the ones after them under
    the same top heading (each later one keeps its heading as a line of text) until the chunk
    reaches ``MIN_CHARS``: a heading with a line or two under it makes a poor chunk alone, and
    fewer chunks keep the vector search fast."""
    path: tuple[str, ...] | None = None
    text = ""
    for section_path, section_text in sections:
        if not section_text:
            continue
        joinable = (
            path is not None
            and len(text) < MIN_CHARS
            and path[:1] == section_path[:1]
            and len(text) + len(section_text) < max_chars
        )
        if joinable:
            assert path is not None
            sub = " > ".join(
                section_path[len(path) :] if section_path[: len(path)] == path else section_path
            )
            text = f"{text}\n\n{sub}\n{section_text}" if sub else f"{text}\n\n{section_text}"
            continue
        if path is not None:
            yield " > ".join(path), text
        path, text = section_path, section_text
    if path is not None:
        yield " > ".join(path), text


def _bounded(text: str, max_chars: int) -> Iterator[str]:
    """``text`` in pieces of at most ``max_chars``: whole paragraphs where they fit, then lines,
    then plain cuts."""
    if len(text) <= max_chars:
        yield text
        return
    piece = ""
    for paragraph in _PARAGRAPH.split(text):
        for part in _split_long(paragraph.strip(), max_chars):
            if piece and len(piece) + 2 + len(part) > max_chars:
                yield piece
                piece = ""
            piece = f"{piece}\n\n{part}" if piece else part
    if piece:
        yield piece


def _split_long(paragraph: str, max_chars: int) -> Iterator[str]:
    if len(paragraph) <= max_chars:
        if paragraph:
            yield paragraph
        return
    line_piece = ""
    for line in paragraph.split("\n"):
        while len(line) > max_chars:
            if line_piece:
                yield line_piece
                line_piece = ""
            yield line[:max_chars]
            line = line[max_chars:]
        if line_piece and len(line_piece) + 1 + len(line) > max_chars:
            yield line_piece
            line_piece = ""
        line_piece = f"{line_piece}\n{line}" if line_piece else line
    if line_piece.strip():
        yield line_piece
