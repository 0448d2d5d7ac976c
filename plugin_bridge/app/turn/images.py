"""Images of a turn decoded and scaled off the event loop, within what the providers accept.

Every path that sends images to a model (the panel's chat, ``/v1/chat/completions``, ``/chat``,
and any chat-app transport) calls :func:`images_within_limits` (or :func:`blocks_within_limits`
for a message's gathered media) before the model call. On the :data:`IMAGES` door (one worker
thread: one image decoded at a time, so eight large images cost one image's memory) each image
is measured from its header and:

* over :data:`MAX_PIXELS` (Anthropic's 8000 x 8000; Pillow's own limit is set to it, so a
  decompression bomb is refused before it is decoded) it is left out of the turn, with one
  sentence in the turn's warnings (a message then holds that sentence instead, for the model);
* larger than :data:`SENT_IMAGES` it is scaled down, so the providers' own scaling
  (:func:`llm_service.images.fit`, on the event loop) finds it within their limits;
* one that is not an image Pillow reads goes as it is (the provider then says what is wrong).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Final

from llm_service import lazy
from llm_service.door import Door
from llm_service.images import ANTHROPIC_IMAGES, fit
from llm_service.messages import ContentBlock, ImageBlock, MediaBlock, Message, TextBlock

if TYPE_CHECKING:
    import PIL
    from PIL import Image
else:
    PIL = lazy.module("PIL")
    Image = lazy.module("PIL.Image")

MAX_PIXELS: Final = 8000 * 8000
"""The largest image sent (Anthropic refuses more than 8000 pixels a side)."""
SENT_IMAGES: Final = ANTHROPIC_IMAGES
"""Images are scaled to the smallest of the providers' limits (1568 px, 5 MB): within every
provider's, so none scales again on the event loop (OpenAI's high detail ends at 768 px on
the short side anyway)."""
IMAGES: Final = Door("images", threads=1)
"""Decoding and scaling, one image at a time."""


async def images_within_limits(messages: Sequence[Message]) -> tuple[list[Message], list[str]]:
    """``messages`` with each image within the limits, and a sentence for each image left
    out (its place in the message then holds that sentence)."""
    if not any(isinstance(b, ImageBlock) for m in messages for b in m.content):
        return list(messages), []
    return await IMAGES.run(_messages_within, list(messages))


async def blocks_within_limits(blocks: Sequence[MediaBlock]) -> tuple[list[MediaBlock], list[str]]:
    """A message's media with each image within the limits (those over them left out), and a
    sentence for each image left out."""
    if not any(isinstance(block, ImageBlock) for block in blocks):
        return list(blocks), []
    return await IMAGES.run(_blocks_within, list(blocks))


def _messages_within(messages: list[Message]) -> tuple[list[Message], list[str]]:
    warnings: list[str] = []
    out = []
    seen = 0
    for message in messages:
        content: list[ContentBlock] = []
        for block in message.content:
            if isinstance(block, ImageBlock):
                seen += 1
                fitted, problem = _within(block, seen)
                if problem is not None:
                    warnings.append(problem)
                    content.append(TextBlock(f"[{problem}]"))
                    continue
                block = fitted
            content.append(block)
        out.append(replace(message, content=tuple(content)))
    return out, warnings


def _blocks_within(blocks: list[MediaBlock]) -> tuple[list[MediaBlock], list[str]]:
    warnings: list[str] = []
    out: list[MediaBlock] = []
    for n, block in enumerate(blocks, 1):
        if isinstance(block, ImageBlock):
            fitted, problem = _within(block, n)
            if problem is not None:
                warnings.append(problem)
                continue
            block = fitted
        out.append(block)
    return out, warnings


def _within(block: ImageBlock, n: int) -> tuple[ImageBlock, str | None]:
    """``block`` scaled within :data:`SENT_IMAGES`, or a sentence why it is left out."""
    Image.MAX_IMAGE_PIXELS = MAX_PIXELS  # Pillow refuses a bomb at twice this, warns past it
    try:
        with Image.open(io.BytesIO(block.data)) as image:
            size: tuple[int, int] | None = image.size
    except Image.DecompressionBombError:
        size = None
    except (PIL.UnidentifiedImageError, OSError, ValueError):
        return block, None
    if size is None or size[0] * size[1] > MAX_PIXELS:
        name = f"'{block.name}'" if block.name else f"Image {n} of the request"
        pixels = "" if size is None else f" ({size[0]} x {size[1]} pixels)"
        return block, (
            f"{name} was left out: it is larger{pixels} than the "
            f"{MAX_PIXELS // 1_000_000} megapixels models accept; scale it down to send it."
        )
    return fit(block, SENT_IMAGES), None
