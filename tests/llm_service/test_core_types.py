"""Core values: messages, usage arithmetic, errors, Retry-After parsing, cheap import."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import FrozenInstanceError

import pytest

from llm_service import LLMError, Message, ToolCall, ToolResultBlock, Usage
from llm_service.errors import RETRYABLE_CODES, parse_retry_after


def test_usage_adds_field_by_field() -> None:
    """Usages of several calls add up."""
    total = Usage(1, 2, 3, 4) + Usage(10, 20, 30, 40)
    assert total == Usage(11, 22, 33, 44)
    assert total.total_tokens == 110


def test_messages_are_immutable_and_typed() -> None:
    """A message's blocks keep their kinds and the message cannot be changed."""
    call = ToolCall("t1", "search_notes", {"query": "x"})
    assistant = Message.assistant("Looking.", [call])
    results = Message.tool_results([ToolResultBlock("t1", "[]")])
    assert assistant.text == "Looking." and assistant.tool_calls == [call]
    assert results.role == "user" and results.tool_results_blocks[0].tool_call_id == "t1"
    with pytest.raises(FrozenInstanceError):
        assistant.role = "user"  # type: ignore[misc]


def test_llm_error_defaults_retryable_from_code_and_keeps_request_id() -> None:
    """Retryability follows the code table; the request id stays in the sentence."""
    err = LLMError("Anthropic is overloaded (529).", code="overloaded", request_id="req_1")
    assert err.retryable and "req_1" in str(err)
    assert not LLMError("x", code="auth_error").retryable
    assert {
        "rate_limit",
        "overloaded",
        "server_error",
        "network_error",
        "timeout",
    } == RETRYABLE_CODES
    with pytest.raises(ValueError):
        LLMError("x", code="nope")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after-ms": "1500"}, 1.5),
        ({"retry-after": "7"}, 7.0),
        ({"retry-after-ms": "junk", "retry-after": "2"}, 2.0),
        ({}, None),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),
    ],
)
def test_retry_after_headers_are_parsed(headers: dict[str, str], expected: float | None) -> None:
    """retry-after-ms wins over retry-after; dates in the past mean no wait."""
    assert parse_retry_after(headers) == expected


def test_importing_llm_service_loads_no_sdk() -> None:
    """The package import stays cheap: no provider SDK, tenacity or jsonschema."""
    code = (
        "import sys, llm_service; "
        "heavy = {'anthropic', 'openai', 'httpx', 'tenacity', 'jsonschema', 'pydantic'}; "
        "print(sorted(heavy & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_stored_message_keeps_a_mention_of_its_images_not_their_bytes() -> None:
    from llm_service import DocumentBlock, ImageBlock, TextBlock
    from llm_service.messages import message_from_dict, message_to_dict

    message = Message(
        "user",
        (
            TextBlock("What is this?"),
            ImageBlock("image/png", b"\x89PNG", "Images/a.png"),
            DocumentBlock("application/pdf", b"%PDF", "Papers/x.pdf", "text"),
        ),
    )
    assert message.media == list(message.content[1:])
    stored = message_to_dict(message)
    assert "PNG" not in str(stored) and "%PDF" not in str(stored)
    back = message_from_dict(stored)
    assert back.text == (
        "What is this?[image Images/a.png was attached][document Papers/x.pdf was attached]"
    )
    assert back.media == []


def test_images_are_scaled_to_a_providers_limits_and_kept_when_they_fit() -> None:
    import io

    from PIL import Image

    from llm_service import ImageBlock
    from llm_service.images import ImageLimits, fit

    def png(size: tuple[int, int]) -> bytes:
        out = io.BytesIO()
        Image.new("RGB", size, (10, 20, 30)).save(out, "PNG")
        return out.getvalue()

    small = ImageBlock("image/png", png((100, 50)))
    assert fit(small, ImageLimits(1568, 5_000_000)) is small
    scaled = fit(ImageBlock("image/png", png((800, 400))), ImageLimits(200, 5_000_000))
    with Image.open(io.BytesIO(scaled.data)) as image:
        assert image.size == (200, 100) and scaled.media_type == "image/png"
    tiny = fit(ImageBlock("image/png", png((800, 400))), ImageLimits(400, 300))
    assert tiny.media_type == "image/jpeg"  # still over the bytes limit as a PNG
    broken = ImageBlock("image/png", b"not an image")
    assert fit(broken, ImageLimits(10, 10)) is broken
