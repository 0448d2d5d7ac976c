"""Image parts of a user message on ``/v1`` and ``/chat``, as :class:`llm_service.ImageBlock`.

OpenAI's ``{type: "image_url", image_url: {url: "data:image/png;base64,…"}}`` and Anthropic's
``{type: "image", source: {type: "base64", media_type, data}}``; each provider then sends the
image in its own form. Only inline images: a remote ``http(s)`` URL is refused (400), because
the server fetches nothing from the network on a client's behalf.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Final

from llm_service import ImageBlock

MEDIA_TYPES: Final = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_DATA_URL: Final = re.compile(r"^data:([\w.+-]+/[\w.+-]+)(?:;[\w=.+-]+)*;base64,(.*)$", re.S)


def is_image_part(part: object) -> bool:
    return isinstance(part, dict) and part.get("type") in ("image_url", "image")


def image_in(part: dict[str, object], where: str) -> ImageBlock:
    """The image of an ``image_url`` or ``image`` part; ValueError with one sentence (the
    caller's 400) otherwise."""
    if part.get("type") == "image_url":
        inner = part.get("image_url")
        url = inner.get("url") if isinstance(inner, dict) else inner
        if not isinstance(url, str):
            raise _bad(f"'{where}.image_url.url' must be a data: URL.")
        return _from_url(url, f"{where}.image_url.url")
    source = part.get("source")
    if not isinstance(source, dict):
        raise _bad(f"'{where}.source' must be {{type: 'base64', media_type, data}}.")
    if source.get("type") == "url":
        return _from_url(str(source.get("url", "")), f"{where}.source.url")
    if source.get("type") != "base64":
        raise _bad(f"'{where}.source.type' must be base64.")
    return _image(source.get("media_type"), source.get("data"), f"{where}.source")


def _from_url(url: str, where: str) -> ImageBlock:
    if url.lower().startswith(("http://", "https://")):
        raise _bad(
            f"'{where}' is a remote URL, and this server fetches nothing from the network on a "
            "client's behalf: send the image inline as a data: URL (base64)."
        )
    match = _DATA_URL.match(url)
    if match is None:
        raise _bad(f"'{where}' must be a data: URL with base64 data (data:image/png;base64,…).")
    return _image(match.group(1).lower(), match.group(2), where)


def _image(media_type: object, data: object, where: str) -> ImageBlock:
    if media_type not in MEDIA_TYPES:
        kinds = ", ".join(sorted(MEDIA_TYPES))
        raise _bad(f"'{where}' has media type {media_type!r}: send one of {kinds}.")
    if not isinstance(data, str) or not data:
        raise _bad(f"'{where}' has no base64 data.")
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise _bad(f"'{where}' data is not valid base64.") from None
    return ImageBlock(str(media_type), raw)


def _bad(message: str) -> ValueError:
    return ValueError(message)
