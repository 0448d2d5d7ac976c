"""Images of a turn are decoded and scaled on the images door, never on the event loop; one
over the pixels models accept (a 900-megapixel PNG: a decompression bomb) is left out with one
sentence while the rest of the turn goes on."""

from __future__ import annotations

import io
import threading

import pytest
from PIL import Image

from llm_service.images import ImageLimits
from llm_service.messages import ImageBlock, Message, TextBlock
from plugin_bridge.app.turn import images
from plugin_bridge.app.turn.images import blocks_within_limits, images_within_limits
from tests.helpers.images import huge_png, small_png

BOMB = huge_png(30_000, 30_000)


def _message(*blocks: TextBlock | ImageBlock) -> Message:
    return Message("user", blocks)


async def test_images_are_decoded_and_scaled_off_the_event_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    threads: list[str] = []
    real_fit = images.fit

    def recording_fit(block: ImageBlock, limits: ImageLimits) -> ImageBlock:
        threads.append(threading.current_thread().name)
        return real_fit(block, limits)

    monkeypatch.setattr(images, "fit", recording_fit)
    block = ImageBlock("image/png", small_png())
    await images_within_limits([_message(TextBlock("What is this?"), block)])
    assert len(threads) == 1
    assert threads[0].startswith("images") and threads[0] != threading.current_thread().name


async def test_a_900_megapixel_png_is_left_out_with_a_sentence_and_the_rest_kept() -> None:
    small = ImageBlock("image/png", small_png())
    question = _message(TextBlock("Compare these."), ImageBlock("image/png", BOMB), small)
    [sent], warnings = await images_within_limits([question])
    assert warnings == [
        "Image 1 of the request was left out: it is larger than the 64 megapixels models "
        "accept; scale it down to send it."
    ]
    assert sent.content == (TextBlock("Compare these."), TextBlock(f"[{warnings[0]}]"), small)


async def test_an_image_past_the_limit_that_pillow_only_warns_about_is_left_out_too() -> None:
    named = ImageBlock("image/png", huge_png(9000, 8000), "Images/panorama.png")
    kept, warnings = await blocks_within_limits([named])
    assert kept == []
    assert warnings == [
        "'Images/panorama.png' was left out: it is larger (9000 x 8000 pixels) than the 64 "
        "megapixels models accept; scale it down to send it."
    ]


async def test_a_large_image_within_the_limit_is_scaled_to_every_provider_s_size() -> None:
    out = io.BytesIO()
    Image.new("RGB", (3000, 1200), (200, 30, 30)).save(out, "PNG")
    [scaled], warnings = await blocks_within_limits([ImageBlock("image/png", out.getvalue())])
    assert warnings == [] and isinstance(scaled, ImageBlock)
    with Image.open(io.BytesIO(scaled.data)) as image:
        assert image.size == (1568, 627)
