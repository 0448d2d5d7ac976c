"""PDFs in the vault: their text page by page, page ranges, and the page a search hit is on.

Text comes from PDFium (``pypdfium2``: wheels for macOS, Windows and Linux). Measured against
pypdf on the same PDFs (bench/pdf.py, docs/search.md) it was about 5 times faster, with the
same text on one- and two-column, German and Chinese pages. A PDF that cannot be read
(encrypted, damaged, over :data:`MAX_PDF_BYTES`, or over the reader's time and memory limits)
is a :class:`PdfUnreadable` with a ``reason`` code. PDFium runs in a helper process, one PDF at
a time (:mod:`plugin_bridge.vault.pdf_worker`).

Pages are joined with :data:`PAGE_BREAK` in the index's body, so a snippet never spans two
pages; the index keeps one chunk per page (``seq`` = page - 1).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Final

from llm_service import lazy
from plugin_bridge.vault.errors import VaultError

if TYPE_CHECKING:
    import pypdfium2 as pdfium
else:
    pdfium = lazy.module("pypdfium2")

MAX_PDF_BYTES: Final = 50 * 1024 * 1024
"""The default size limit for a PDF to be indexed or read (setting ``pdf_max_mb``)."""
PAGE_BREAK: Final = "\n\f\n"
_PAGES: Final = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d*)\s*)?$")


def is_pdf_name(rel: str) -> bool:
    return rel.lower().endswith(".pdf")


class PdfUnreadable(VaultError):
    """A PDF whose text cannot be read; ``reason``: encrypted, damaged, too_large or
    too_costly (not one page within the reader's limits)."""

    def __init__(self, rel: str, reason: str, message: str) -> None:
        super().__init__("not_text", message, path=rel)
        self.reason = reason


class PdfiumFailure(Exception):
    """PDFium could not open a PDF; ``reason``: encrypted or damaged."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def pdfium_pages(raw: bytes) -> Iterator[tuple[str, int | str]]:
    """("count", pages) then ("page", text) for each page of the PDF ``raw``; PdfiumFailure
    when PDFium cannot open it. PDFium is not thread-safe: only the PDF helper process
    (:mod:`plugin_bridge.vault.pdf_worker`) calls this, one PDF at a time."""
    try:
        document = pdfium.PdfDocument(raw)
    except pdfium.PdfiumError as exc:
        encrypted = "password" in str(exc).lower()
        raise PdfiumFailure("encrypted" if encrypted else "damaged") from None
    try:
        yield "count", len(document)
        for page in document:
            textpage = page.get_textpage()
            yield "page", _clean(textpage.get_text_bounded())
            textpage.close()
            page.close()
    finally:
        document.close()


def unreadable(rel: str, reason: str) -> PdfUnreadable:
    """The error for a PDF PDFium could not open (``reason``: encrypted or damaged)."""
    if reason == "encrypted":
        return PdfUnreadable(
            rel,
            "encrypted",
            f"'{rel}' is encrypted: open it and save a copy without a password to have it read.",
        )
    return PdfUnreadable(rel, "damaged", f"'{rel}' is not a readable PDF (it may be damaged).")


def _clean(text: str) -> str:
    """PDFium's page text with Windows line ends and the odd NUL or form feed removed."""
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "").replace("\f", " ")


def too_large(rel: str, size: int, limit: int) -> PdfUnreadable:
    mb = 1024 * 1024
    return PdfUnreadable(
        rel,
        "too_large",
        f"'{rel}' is {size / mb:.1f} MB, over the {limit / mb:.0f} MB limit "
        "for PDFs (setting pdf_max_mb).",
    )


def page_range(spec: str | None, count: int, rel: str = "") -> range:
    """Pages (0-based) of ``"3-5"``, ``"4"`` or ``"7-"`` (1-based, inclusive) in a PDF of
    ``count`` pages; every page for None. VaultError(not_found) when it is not a range or
    falls outside the PDF."""
    if spec is None:
        return range(count)
    match = _PAGES.match(spec)
    if match is None:
        raise VaultError(
            "not_found", f"Pages '{spec}' are not a range like 3-5, 4 or 7-.", path=rel
        )
    first = int(match.group(1))
    last = count if match.group(2) == "" else int(match.group(2) or first)
    if not 1 <= first <= last <= count:
        raise VaultError(
            "not_found",
            f"Pages '{spec}' are outside '{rel}', which has {count} page(s).",
            path=rel,
        )
    return range(first - 1, last)


def with_markers(pages: Sequence[str], chosen: range) -> str:
    """The chosen pages' text, each after a ``--- page N of M ---`` line."""
    return "\n\n".join(f"--- page {i + 1} of {len(pages)} ---\n{pages[i].strip()}" for i in chosen)


def split_body(body: str) -> list[str]:
    """A PDF's pages from its indexed body."""
    return body.split(PAGE_BREAK)


def page_of_snippet(pages: Sequence[str], snippet: str) -> int | None:
    """The page (0-based) holding the text of a search snippet (``**`` marks and ``…`` cuts
    removed), or None when no page holds its longest piece."""
    pieces = [" ".join(p.split()) for p in snippet.replace("**", "").split("…")]
    longest = max(pieces, key=len, default="")
    if len(longest) < 3:
        return None
    for i, page in enumerate(pages):
        if longest in " ".join(page.split()):
            return i
    return None


def page_of_words(pages: Sequence[str], words: Sequence[str]) -> int:
    """The page (0-based) holding most of ``words`` (then most often); 0 when none does."""
    folded = [w.casefold() for w in words if w]
    best, best_key = 0, (0, 0)
    for i, page in enumerate(pages):
        text = page.casefold()
        key = (sum(w in text for w in folded), sum(text.count(w) for w in folded))
        if key > best_key:
            best, best_key = i, key
    return best
