"""Images and documents within a provider's limits, and as the data each API takes.

Each provider translates an :class:`~llm_service.messages.ImageBlock` after :func:`fit`
scaled it to its :class:`ImageLimits` (Pillow, imported on first use): the longest side at most
``max_side`` pixels and the bytes at most ``max_bytes`` (a picture still over that is sent as
a JPEG). An image that fits is sent as it is. Results are cached, so the images of a
conversation are not scaled again at each of its turns.
"""

from __future__ import annotations

import base64
import functools
import io
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final

from llm_service import lazy
from llm_service.messages import DocumentBlock, ImageBlock

if TYPE_CHECKING:
    import PIL
    from PIL import Image
else:
    PIL = lazy.module("PIL")
    Image = lazy.module("PIL.Image")


@dataclass(frozen=True)
class ImageLimits:
    max_side: int
    max_bytes: int


ANTHROPIC_IMAGES: Final = ImageLimits(1568, 5 * 1024 * 1024)
"""Anthropic scales anything larger down itself (and refuses over 5 MB or 8000 px)."""
OPENAI_IMAGES: Final = ImageLimits(2048, 20 * 1024 * 1024)
"""OpenAI's high detail fits an image in 2048 x 2048 first."""
OLLAMA_IMAGES: Final = ImageLimits(1568, 10 * 1024 * 1024)
"""Local vision models see a few hundred pixels; a smaller image is less to send and decode."""
ANTHROPIC_MAX_DOCUMENT_BYTES: Final = 32 * 1024 * 1024
"""Anthropic's limit for a PDF document; a larger one is sent as its text."""
_JPEG_QUALITY: Final = 85


def base64_of(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def data_url(block: ImageBlock) -> str:
    return f"data:{block.media_type};base64,{base64_of(block.data)}"


def document_text(block: DocumentBlock) -> str:
    """A document as text, for a provider that takes no documents."""
    return f"The document {block.name or 'attached'} (its text):\n{block.text}"


@functools.lru_cache(maxsize=32)
def fit(block: ImageBlock, limits: ImageLimits) -> ImageBlock:
    """``block`` within ``limits`` (unchanged when it already is, or when it cannot be read,
    or is a decompression bomb: the provider then says what is wrong with it). Blocking; an
    application scales images off its event loop first (the bridge's
    ``plugin_bridge.app.turn.images``), so that here they already fit."""
    try:
        with Image.open(io.BytesIO(block.data)) as image:
            width, height = image.size
            if max(width, height) <= limits.max_side and len(block.data) <= limits.max_bytes:
                return block
            image.thumbnail((limits.max_side, limits.max_side))
            fmt = {"image/png": "PNG", "image/gif": "GIF", "image/webp": "WEBP"}.get(
                block.media_type, "JPEG"
            )
            data = _encoded(image, fmt)
            if len(data) > limits.max_bytes or fmt == "GIF":
                fmt, data = "JPEG", _encoded(image, "JPEG")
    except (PIL.UnidentifiedImageError, Image.DecompressionBombError, OSError, ValueError):
        return block
    media_type = "image/jpeg" if fmt == "JPEG" else block.media_type
    return replace(block, media_type=media_type, data=data)


def _encoded(image: object, fmt: str) -> bytes:
    assert isinstance(image, Image.Image)
    out = io.BytesIO()
    if fmt == "JPEG":
        image = image.convert("RGB")
        assert isinstance(image, Image.Image)
        image.save(out, "JPEG", quality=_JPEG_QUALITY)
    else:
        image.save(out, fmt)
    return out.getvalue()
