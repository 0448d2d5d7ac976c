"""How a note's text maps to its file's bytes, and the diffs shown before writes.

Notes are UTF-8. A rewrite keeps the file's line endings (CRLF if its first line ends so) and its
UTF-8 BOM; an append keeps every earlier byte as it is.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Final

from plugin_bridge.vault.errors import VaultError

BOM: Final = b"\xef\xbb\xbf"


def _newline(like: bytes | None) -> bytes:
    """The line ending of ``like``: CRLF if its first line ends so, else LF."""
    if like is None:
        return b"\n"
    end = like.find(b"\n")
    return b"\r\n" if end > 0 and like[end - 1 : end] == b"\r" else b"\n"


def _text_bytes(content: str, newline: bytes) -> bytes:
    """``content`` as UTF-8 with every line break (LF or CRLF) written as ``newline``."""
    return content.replace("\r\n", "\n").encode("utf-8").replace(b"\n", newline)


def encode_like(content: str, like: bytes | None) -> bytes:
    """``content`` as UTF-8 with the line endings and BOM of the file it replaces.

    A BOM at the start of ``content`` is kept too, never doubled.
    """
    body = _text_bytes(content.removeprefix("\ufeff"), _newline(like))
    keep_bom = content.startswith("\ufeff") or (like is not None and like.startswith(BOM))
    return BOM + body if keep_bom else body


def appended(old: bytes, content: str) -> bytes:
    """``old`` kept byte for byte, then a line break if it lacks one, then ``content``."""
    newline = _newline(old)
    separator = b"" if old in (b"", BOM) or old.endswith(b"\n") else newline
    return old + separator + _text_bytes(content, newline)


def unified_diff(rel: str, old: str | None, new: str) -> str:
    """A unified diff, with git's marker after a last line that has no line break."""
    lines = difflib.unified_diff(
        [] if old is None else old.replace("\r\n", "\n").splitlines(keepends=True),
        new.replace("\r\n", "\n").splitlines(keepends=True),
        fromfile="/dev/null" if old is None else f"a/{rel}",
        tofile=f"b/{rel}",
    )
    return "".join(
        line if line.endswith("\n") else f"{line}\n\\ No newline at end of file\n" for line in lines
    )


def apply_edits(rel: str, text: str, edits: Sequence[tuple[str, str]]) -> str:
    """``text`` with each search-and-replace edit applied in order; each old text must occur
    exactly once (VaultError invalid_edit naming the edit otherwise)."""
    normalised = text.replace("\r\n", "\n")
    for number, (old_text, new_text) in enumerate(edits, 1):
        needle = old_text.replace("\r\n", "\n")
        found = normalised.count(needle) if needle else 0
        if found != 1:
            why = (
                "is empty"
                if not needle
                else "is not in the note"
                if not found
                else (f"occurs {found} times")
            )
            raise VaultError(
                "invalid_edit",
                f"Edit {number} of '{rel}': its old text {why}; quote a passage that occurs "
                "exactly once, as the note is now.",
                path=rel,
            )
        normalised = normalised.replace(needle, new_text.replace("\r\n", "\n"), 1)
    return normalised
