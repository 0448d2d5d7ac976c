"""PDFs made for tests and benchmarks (fpdf2): pages of given text, one or two columns, in a
Latin font or a CJK one found on this machine, optionally encrypted; and hostile ones whose
content inflates far past their size."""

from __future__ import annotations

import struct
import zlib
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


def inflating_pdf(inflated: int, *, pages_before: Sequence[str] = ()) -> bytes:
    """A PDF of ``pages_before`` (plain text pages) then one page whose content stream
    (FlateDecode) inflates to about ``inflated`` bytes of spaces: a few hundred KB per GiB,
    built in a fraction of a second (one compressed megabyte, repeated)."""
    objects = [b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    contents = [_stream(zlib.compress(_text_ops(text))) for text in pages_before]
    contents.append(_stream(_deflate_spaces(_text_ops("Past the bomb"), inflated)))
    count = len(contents)
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(count)).encode()
    objects.append(b"<< /Type /Catalog /Pages 3 0 R >>")
    objects.insert(2, b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, count))
    for i, stream in enumerate(contents):
        page = 4 + 2 * i
        objects.append(
            b"<< /Type /Page /Parent 3 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
            b"/Resources << /Font << /F1 1 0 R >> >> >>" % (page + 1)
        )
        objects.append(stream)
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 2 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def _text_ops(text: str) -> bytes:
    return b"BT /F1 12 Tf 72 720 Td (%s) Tj ET\n" % text.encode("latin-1")


def _stream(data: bytes) -> bytes:
    return b"<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream" % (len(data), data)


def _deflate_spaces(head: bytes, total: int) -> bytes:
    """A zlib stream of ``head`` then spaces up to ``total`` bytes, without compressing them
    all: after a full flush the compressor starts afresh, so each megabyte's blocks are alike."""
    mb = 1 << 20
    chunk = b" " * mb
    first = zlib.compressobj(9, zlib.DEFLATED, -15)
    body = first.compress(head) + first.flush(zlib.Z_FULL_FLUSH)
    repeat = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = repeat.compress(chunk) + repeat.flush(zlib.Z_FULL_FLUSH)
    chunks = max(1, total // mb)
    checksum = zlib.adler32(head)
    for _ in range(chunks):
        checksum = zlib.adler32(chunk, checksum)
    tail = zlib.compressobj(9, zlib.DEFLATED, -15).flush()
    return b"\x78\xda" + body + block * chunks + tail + struct.pack(">I", checksum)
