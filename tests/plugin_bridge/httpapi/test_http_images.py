"""Image parts on /v1 (the openai SDK) and /chat (httpx): a data: URL reaches each provider in
its own form (Anthropic image block, OpenAI image_url part), Anthropic-style image blocks on
/chat too; a remote URL is refused with 400 naming the reason, and nothing is sent."""

from __future__ import annotations

import base64
import io

import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam
from PIL import Image

from tests.fakes import anthropic as anthropic_fake
from tests.fakes import openai as openai_fake
from tests.helpers.images import huge_png
from tests.plugin_bridge.httpapi.conftest import Served

pytestmark = pytest.mark.asyncio(loop_scope="module")


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (20, 10), (0, 120, 200)).save(out, "PNG")
    return out.getvalue()


PNG = _png()
DATA_URL = "data:image/png;base64," + base64.b64encode(PNG).decode()


def _question(url: str) -> list[dict[str, object]]:
    parts = [{"type": "text", "text": "What is this?"}]
    parts.append({"type": "image_url", "image_url": {"url": url}})  # type: ignore[dict-item]
    return [{"role": "user", "content": parts}]


async def test_a_data_image_reaches_openai_as_an_image_url_part(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    served.openai.enqueue(openai_fake.text_reply("A blue box.", stream=False))
    completion = await client.chat.completions.create(
        model="openai/gpt-5.4-mini",
        messages=_question(DATA_URL),  # type: ignore[arg-type]
    )
    assert completion.choices[0].message.content == "A blue box."
    parts = served.chats(served.openai)[0].json()["messages"][-1]["content"]
    assert parts[0] == {"type": "text", "text": "What is this?"}
    assert parts[1] == {"type": "image_url", "image_url": {"url": DATA_URL}}


async def test_a_data_image_reaches_anthropic_as_an_image_block(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    served.anthropic.enqueue(anthropic_fake.text_reply("A blue box.", stream=False))
    await client.chat.completions.create(model="claude-test", messages=_question(DATA_URL))  # type: ignore[arg-type]
    blocks = served.chats(served.anthropic)[0].json()["messages"][-1]["content"]
    [image] = [b for b in blocks if b["type"] == "image"]
    assert image["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": base64.b64encode(PNG).decode(),
    }


async def test_a_remote_image_url_is_refused_with_the_reason(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.chat.completions.create(
            model="claude-test",
            messages=_question("https://example.com/cat.png"),  # type: ignore[arg-type]
        )
    assert caught.value.status_code == 400
    assert "fetches nothing from the network" in caught.value.message
    assert "messages[0].content[1].image_url.url" in caught.value.message
    assert not served.anthropic.requests and not served.openai.requests


async def test_chat_takes_anthropic_style_image_blocks(served: Served) -> None:
    served.anthropic.enqueue(anthropic_fake.text_reply("A blue box.", stream=False))
    source = {"type": "base64", "media_type": "image/png", "data": base64.b64encode(PNG).decode()}
    content = [{"type": "text", "text": "What is this?"}, {"type": "image", "source": source}]
    async with served.http() as http:
        ok = await http.post("/chat", json={"messages": [{"role": "user", "content": content}]})
        assert ok.status_code == 200, ok.text
        bad_type = {**source, "media_type": "image/tiff"}
        refused = await http.post(
            "/chat",
            json={
                "messages": [{"role": "user", "content": [{"type": "image", "source": bad_type}]}]
            },
        )
    blocks = served.chats(served.anthropic)[0].json()["messages"][-1]["content"]
    assert [b["type"] for b in blocks] == ["text", "image"]
    assert refused.status_code == 400 and "image/tiff" in refused.text
    assert len(served.chats(served.anthropic)) == 1


BOMB_URL = "data:image/png;base64," + base64.b64encode(huge_png(30_000, 30_000)).decode()
LEFT_OUT = (
    "Image 1 of the request was left out: it is larger than the 64 megapixels models accept; "
    "scale it down to send it."
)


async def test_a_900_megapixel_png_is_left_out_with_a_warning_and_the_turn_answered(
    served: Served, client: openai.AsyncOpenAI
) -> None:
    served.openai.enqueue(openai_fake.text_reply("One blue box.", stream=False))
    messages: list[ChatCompletionMessageParam] = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is this?"},
                {"type": "image_url", "image_url": {"url": BOMB_URL}},
                {"type": "image_url", "image_url": {"url": DATA_URL}},
            ],
        }
    ]
    completion = await client.chat.completions.create(
        model="openai/gpt-5.4-mini", messages=messages
    )
    assert completion.choices[0].message.content == "One blue box."
    assert (completion.model_extra or {})["warnings"] == [LEFT_OUT]
    parts = served.chats(served.openai)[0].json()["messages"][-1]["content"]
    assert parts[1] == {"type": "text", "text": f"[{LEFT_OUT}]"}
    assert parts[2] == {"type": "image_url", "image_url": {"url": DATA_URL}}
    served.openai.enqueue(openai_fake.text_reply("One blue box."))
    stream = await client.chat.completions.create(
        model="openai/gpt-5.4-mini", messages=messages, stream=True
    )
    chunks = [chunk async for chunk in stream]
    assert (chunks[0].model_extra or {})["warnings"] == [LEFT_OUT]
    served.anthropic.enqueue(anthropic_fake.text_reply("Nothing to see.", stream=False))
    async with served.http() as http:
        answered = await http.post("/chat", json={"messages": _question(BOMB_URL)})
    assert answered.status_code == 200, answered.text
    assert answered.json()["warnings"] == [LEFT_OUT]
