"""Images made for tests and benchmarks (no tests here)."""

from __future__ import annotations

import io
import struct
import zlib

from PIL import Image


def small_png(size: tuple[int, int] = (20, 10)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (0, 120, 200)).save(out, "PNG")
    return out.getvalue()


def huge_png(width: int, height: int) -> bytes:
    """A valid black 1-bit PNG of ``width`` x ``height`` pixels (900 megapixels: about 110 KB),
    built without holding its pixels: every row is alike, so its deflated rows are repeated."""
    row = b"\x00" * (1 + (width + 7) // 8)  # filter byte, then the packed bits
    rows_per_block = max(1, (1 << 20) // len(row))
    block_data = row * rows_per_block
    repeat = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = repeat.compress(block_data) + repeat.flush(zlib.Z_FULL_FLUSH)
    blocks, rest = divmod(height, rows_per_block)
    last = zlib.compressobj(9, zlib.DEFLATED, -15)
    tail = last.compress(row * rest) + last.flush()
    checksum = 1
    for _ in range(blocks):
        checksum = zlib.adler32(block_data, checksum)
    checksum = zlib.adler32(row * rest, checksum)
    idat = b"\x78\xda" + block * blocks + tail + struct.pack(">I", checksum)
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", idat)
        + _chunk(b"IEND", b"")
    )


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
