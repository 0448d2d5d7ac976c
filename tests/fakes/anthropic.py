"""Anthropic Messages API replies, byte for byte as the API sends them (JSON and SSE)."""

from __future__ import annotations

import json
from typing import Any

from llm_service import AnthropicProvider, Usage
from tests.fakes.http import FakeHTTPServer, Reply

MODEL = "claude-sonnet-4-6"
REQUEST_ID = "req_011CTestRequest"


def make_provider(server: FakeHTTPServer, **kw: Any) -> AnthropicProvider:
    """An AnthropicProvider on the real SDK, pointed at ``server``, with tiny backoff."""
    options: dict[str, Any] = {"max_attempts": 3, "backoff_base": 0.001, "timeout": 5.0}
    options.update(kw)
    return AnthropicProvider(api_key="sk-ant-test", base_url=server.url, **options)


def sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _usage(usage: Usage) -> dict[str, int]:
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
    }


def _message(content: list[dict[str, Any]], stop_reason: str, usage: Usage) -> dict[str, Any]:
    return {
        "id": "msg_01Test",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": _usage(usage),
    }


def _chunks(text: str, size: int = 4) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def stream_events(content: list[dict[str, Any]], stop_reason: str, usage: Usage) -> list[bytes]:
    """The SSE events of a whole streamed message with these content blocks."""
    start_usage = Usage(usage.input_tokens, 1, usage.cache_read_tokens, usage.cache_write_tokens)
    events = [
        sse("message_start", {"type": "message_start", "message": _message([], None, start_usage)}),  # type: ignore[arg-type]
        sse("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(content):
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": t} for t in _chunks(block["text"])]
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            deltas = [
                {"type": "input_json_delta", "partial_json": part}
                for part in ["", *_chunks(json.dumps(block["input"]), 7)]
            ]
        events.append(
            sse(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
        )
        events += [
            sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
            for d in deltas
        ]
        events.append(sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": usage.output_tokens},
            },
        )
    )
    events.append(sse("message_stop", {"type": "message_stop"}))
    return events


def reply(
    content: list[dict[str, Any]], stop_reason: str, *, stream: bool, usage: Usage | None = None
) -> Reply:
    usage = usage or Usage(25, 12)
    headers = {"request-id": REQUEST_ID}
    if stream:
        return Reply.stream(stream_events(content, stop_reason, usage), headers=headers)
    return Reply.json(_message(content, stop_reason, usage), headers=headers)


def text_reply(
    text: str, *, stream: bool = True, usage: Usage | None = None, model: str = MODEL
) -> Reply:
    return reply([{"type": "text", "text": text}], "end_turn", stream=stream, usage=usage)


def tool_reply(
    calls: list[tuple[str, str, dict[str, Any]]], *, text: str = "", stream: bool = True
) -> Reply:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in calls]
    return reply(content, "tool_use", stream=stream)


def error_body(error_type: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": error_type, "message": message}}


def error_reply(
    status: int,
    message: str = "Something went wrong",
    *,
    error_type: str | None = None,
    headers: dict[str, str] | None = None,
) -> Reply:
    kind = error_type or {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        413: "request_too_large",
        429: "rate_limit_error",
        529: "overloaded_error",
    }.get(status, "api_error")
    return Reply.json(
        error_body(kind, message),
        status=status,
        headers={"request-id": REQUEST_ID, **(headers or {})},
    )


def midstream_error_reply(text: str, error_type: str = "overloaded_error") -> Reply:
    """Streams ``text``, then an SSE error event, as the API does when overloaded mid-answer."""
    events = stream_events([{"type": "text", "text": text}], "end_turn", Usage(5, 5))[:-3]
    events.append(sse("error", error_body(error_type, "Overloaded")))
    return Reply.stream(events, headers={"request-id": REQUEST_ID})


def early_error_reply(error_type: str = "overloaded_error") -> Reply:
    """A 200 stream whose first event is an error (nothing shown yet: safe to retry)."""
    return Reply.stream(
        [sse("error", error_body(error_type, "Overloaded"))], headers={"request-id": REQUEST_ID}
    )


def malformed_reply() -> Reply:
    """A stream whose data line is not JSON."""
    return Reply.stream([b"event: message_start\ndata: {not json\n\n"])


def hanging_reply(text: str) -> list[Any]:
    """Chunks that send a little text and then hang until the client leaves."""
    return stream_events([{"type": "text", "text": text}], "end_turn", Usage(5, 5))[:4]


def quota_reply() -> Reply:
    """Anthropic's answer when the account has no credit left."""
    return error_reply(
        400,
        "Your credit balance is too low to access the Anthropic API.",
        error_type="invalid_request_error",
    )


SUPPORTS_TOOL_CHOICE = True


def forced_tool(body: dict[str, Any]) -> str | None:
    """The tool a request body forces, if any."""
    choice = body.get("tool_choice") or {}
    return choice.get("name") if choice.get("type") == "tool" else None
