"""PDFs made for tests and benchmarks (fpdf2): pages of given text, one or two columns, in a
Latin font or a CJK one found on this machine, optionally encrypted."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

CJK_FONTS = (
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",  # Debian fonts-wqy-microhei
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",  # Debian fonts-wqy-zenhei
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",  # Debian fonts-noto-cjk
    "/System/Library/Fonts/STHeiti Light.ttc",
    "C:/Windows/Fonts/msyh.ttc",
)
LATIN_FONTS = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",  # Debian fonts-dejavu-core
    "/Library/Fonts/Arial Unicode.ttf",
    "C:/Windows/Fonts/arial.ttf",
)


def cjk_font() -> Path | None:
    """A font with Chinese characters on this machine, or None (the tests then skip)."""
    return next((Path(p) for p in CJK_FONTS if Path(p).is_file()), None)


def latin_font() -> Path | None:
    """A Unicode TrueType font for German umlauts and the like (else the core Helvetica)."""
    return next((Path(p) for p in LATIN_FONTS if Path(p).is_file()), None)


def make_pdf(
    pages: Sequence[str | tuple[str, str]],
    *,
    font: Path | None = None,
    password: str | None = None,
) -> bytes:
    """A PDF with one page per item: a string fills the page, a (left, right) pair is set in
    two columns. ``font``: a TrueType/TTC file (default: a Unicode Latin font when found)."""
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(auto=False)
    chosen = font or latin_font()
    if chosen is not None:
        pdf.add_font("body", fname=str(chosen))
        pdf.set_font("body", size=11)
    else:
        pdf.set_font("helvetica", size=11)
    for page in pages:
        pdf.add_page()
        if isinstance(page, tuple):
            left, right = page
            top = pdf.get_y()
            pdf.multi_cell(85, 5, left)
            pdf.set_xy(115, top)
            pdf.multi_cell(85, 5, right)
        else:
            pdf.multi_cell(0, 5, page)
    if password is not None:
        pdf.set_encryption(owner_password=password, user_password=password)
    return bytes(pdf.output())
