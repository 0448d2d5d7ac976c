"""Images and PDFs as chat/send context, through the real SDKs to the fake servers: Anthropic
image and document blocks, OpenAI image_url parts, Ollama images, a text-only model's notice,
embeds in a context note followed one level, images scaled to the provider's limits."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

import anthropic as _sdk  # noqa: F401  # imported here: seconds on a busy machine, not in a reply's wait
from PIL import Image

from llm_service.providers.base import Provider
from tests.fakes import anthropic, ollama, openai
from tests.fakes.http import FakeHTTPServer, Reply
from tests.helpers.bridge import Bridge, running_bridge
from tests.helpers.images import huge_png
from tests.helpers.pdfs import make_pdf


def _image(fmt: str, size: tuple[int, int] = (40, 30)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (200, 30, 30)).save(out, fmt)
    return out.getvalue()


def _vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "Images").mkdir(parents=True)
    (root / "Papers").mkdir()
    (root / "Images" / "diagram.png").write_bytes(_image("PNG", (3000, 1200)))
    (root / "Images" / "photo.jpg").write_bytes(_image("JPEG"))
    (root / "Images" / "sketch.webp").write_bytes(_image("WEBP"))
    (root / "Papers" / "paper.pdf").write_bytes(make_pdf(["Abstract.", "Results on page two."]))
    (root / "Board.md").write_text("# Board\n\n![[photo.jpg]]\n\nSee the photo.\n")
    return root


async def _send(bridge: Bridge, context: list[dict[str, Any]]) -> dict[str, Any]:
    wire = await bridge.wire()
    result: dict[str, Any] = await wire.result(
        "chat/send", {"text": "What is in this?", "context": context}
    )
    return result


def _user_content(server: FakeHTTPServer) -> Any:
    body = server.requests[-1].json()
    return body["messages"][-1]["content"]


async def _bridge(tmp_path: Path, provider: Provider, name: str, model: str) -> Any:
    return running_bridge(
        tmp_path, vault_root=_vault(tmp_path), provider=provider, provider_name=name, model=model
    )


async def test_anthropic_gets_image_and_document_blocks(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    fake_http.enqueue(anthropic.text_reply("A red square."))
    provider = anthropic.make_provider(fake_http)
    async with await _bridge(tmp_path, provider, "anthropic", "claude-sonnet-4-5") as bridge:
        context = [{"note": "Images/diagram.png"}, {"note": "Papers/paper.pdf"}]
        result = await _send(bridge, context)
    assert result["warnings"] == []
    assert result["sources"][:2] == ["Images/diagram.png", "Papers/paper.pdf"]
    blocks = _user_content(fake_http)
    [image] = [b for b in blocks if b["type"] == "image"]
    assert image["source"]["media_type"] == "image/png"
    with Image.open(io.BytesIO(base64.b64decode(image["source"]["data"]))) as sent:
        assert max(sent.size) == 1568  # scaled to Anthropic's limit, aspect kept
    [document] = [b for b in blocks if b["type"] == "document"]
    assert document["source"]["media_type"] == "application/pdf"
    assert base64.b64decode(document["source"]["data"]).startswith(b"%PDF")
    assert document["title"] == "Papers/paper.pdf"


async def test_a_context_note_s_image_embeds_are_followed(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    fake_http.enqueue(anthropic.text_reply("A photo."))
    provider = anthropic.make_provider(fake_http)
    async with await _bridge(tmp_path, provider, "anthropic", "claude-sonnet-4-5") as bridge:
        result = await _send(bridge, [{"note": "Board.md"}])
    assert result["sources"][:2] == ["Board.md", "Images/photo.jpg"]
    [image] = [b for b in _user_content(fake_http) if b["type"] == "image"]
    assert image["source"]["media_type"] == "image/jpeg"


async def test_openai_gets_image_url_parts_and_the_pdf_text(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    fake_http.enqueue(openai.text_reply("A sketch.", model="gpt-4o"))
    provider = openai.make_provider(fake_http)
    async with await _bridge(tmp_path, provider, "openai", "gpt-4o") as bridge:
        context = [{"note": "Images/sketch.webp"}, {"note": "Papers/paper.pdf"}]
        result = await _send(bridge, context)
    assert result["warnings"] == []
    parts = _user_content(fake_http)
    [image] = [p for p in parts if p["type"] == "image_url"]
    assert image["image_url"]["url"].startswith("data:image/webp;base64,")
    texts = " ".join(p["text"] for p in parts if p["type"] == "text")
    assert "--- page 2 of 2 ---\nResults on page two." in texts


def _shown(capabilities: list[str]) -> Reply:
    return Reply.json({"capabilities": capabilities, "model_info": {}})


async def test_ollama_vision_model_gets_images(tmp_path: Path, fake_http: FakeHTTPServer) -> None:
    fake_http.enqueue(_shown(["completion", "vision", "tools"]))
    fake_http.enqueue(ollama.text_reply("A photo."))
    provider = ollama.make_provider(fake_http)
    async with await _bridge(tmp_path, provider, "ollama", "llava") as bridge:
        result = await _send(bridge, [{"note": "Images/photo.jpg"}])
    assert result["warnings"] == []
    message = fake_http.requests[-1].json()["messages"][-1]
    assert message["role"] == "user" and "What is in this?" in message["content"]
    [image] = message["images"]
    assert base64.b64decode(image) == (tmp_path / "vault/Images/photo.jpg").read_bytes()


async def test_a_text_only_model_gets_the_rest_and_a_notice(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    fake_http.enqueue(_shown(["completion", "tools"]))
    fake_http.enqueue(ollama.text_reply("I cannot see it."))
    provider = ollama.make_provider(fake_http)
    async with await _bridge(tmp_path, provider, "ollama", "llama3.1") as bridge:
        result = await _send(bridge, [{"note": "Images/photo.jpg"}])
    assert result["text"] == "I cannot see it."
    assert result["warnings"] == [
        "llama3.1 cannot see images, so Images/photo.jpg was not sent: choose a model that "
        "accepts images to ask about them."
    ]
    message = fake_http.requests[-1].json()["messages"][-1]
    assert "images" not in message and "What is in this?" in message["content"]
    assert "Images/photo.jpg" not in result["sources"]  # it never reached the model


async def test_a_900_megapixel_png_in_the_context_is_left_out_and_the_turn_answered(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    root = _vault(tmp_path)
    (root / "Images" / "bomb.png").write_bytes(huge_png(30_000, 30_000))
    fake_http.enqueue(anthropic.text_reply("A red photo."))
    provider = anthropic.make_provider(fake_http)
    async with running_bridge(
        tmp_path, vault_root=root, provider=provider, provider_name="anthropic", model="claude-x"
    ) as bridge:
        result = await _send(bridge, [{"note": "Images/bomb.png"}, {"note": "Images/photo.jpg"}])
    assert result["text"] == "A red photo."
    assert result["warnings"] == [
        "'Images/bomb.png' was left out: it is larger than the 64 megapixels models accept; "
        "scale it down to send it."
    ]
    assert [b["type"] for b in _user_content(fake_http)].count("image") == 1
