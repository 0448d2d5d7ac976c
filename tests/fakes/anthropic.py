"""Anthropic Messages API replies, byte for byte as the API sends them (JSON and SSE).

The SSE shapes follow the API's streaming documentation and the SDK's own fixtures
(anthropic-sdk-python ``tests/lib/streaming/fixtures/*.txt``): every event is an ``event:`` line
and a compact JSON ``data:`` line; ``message_delta`` usage is cumulative. Other helpers reuse
``make_provider``, ``text_reply``, ``tool_reply``, ``error_reply`` and ``hanging_reply`` in their
end-to-end tests, and the shared wire suite needs every public name below.
"""

from __future__ import annotations

import json
import weakref
from typing import Any

from llm_service import AnthropicProvider, Usage
from tests.fakes.http import FakeHTTPServer, Reply

MODEL = "claude-sonnet-4-6"
REQUEST_ID = "req_011CTestRequest"
API_KEY = "sk-ant-test-0123456789"
DEFAULT_USAGE = Usage(25, 12)
SUPPORTS_TOOL_CHOICE = True

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    409: "conflict_error",
    413: "request_too_large",
    429: "rate_limit_error",
    504: "timeout_error",
    529: "overloaded_error",
}


_OPEN: weakref.WeakSet[AnthropicProvider] = weakref.WeakSet()


def track(provider: AnthropicProvider) -> AnthropicProvider:
    """Remember ``provider`` so that :func:`close_providers` releases its connections."""
    _OPEN.add(provider)
    return provider


async def close_providers() -> None:
    """Close every tracked provider still alive (call it before the test's event loop ends, or
    the SDK closes its client from ``__del__`` on whatever loop runs then)."""
    for provider in list(_OPEN):
        await provider.aclose()
    _OPEN.clear()


def make_provider(server: FakeHTTPServer, **kw: Any) -> AnthropicProvider:
    """An AnthropicProvider on the real SDK, pointed at ``server``, with tiny backoff (tracked)."""
    options: dict[str, Any] = {"max_attempts": 3, "backoff_base": 0.001, "timeout": 5.0}
    options.update(kw)
    return track(AnthropicProvider(api_key=API_KEY, base_url=server.url, **options))


def sse(event: str, data: dict[str, Any]) -> bytes:
    """One server-sent event as the API writes it (UTF-8 unescaped JSON)."""
    body = json.dumps(data, ensure_ascii=False)
    return f"event: {event}\ndata: {body}\n\n".encode()


def wire_usage(usage: Usage) -> dict[str, int]:
    """A Usage in the API's field names."""
    return {
        "input_tokens": usage.input_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
        "output_tokens": usage.output_tokens,
    }


def message(
    content: list[dict[str, Any]],
    stop_reason: str | None,
    usage: Usage = DEFAULT_USAGE,
    model: str = MODEL,
) -> dict[str, Any]:
    """A whole Message object (the non-streaming response body)."""
    return {
        "id": "msg_01Test",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": wire_usage(usage),
    }


def pieces(text: str, size: int) -> list[str]:
    """``text`` in pieces of ``size`` characters (one empty piece for empty text)."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def stream_events(
    content: list[dict[str, Any]],
    stop_reason: str,
    usage: Usage = DEFAULT_USAGE,
    *,
    model: str = MODEL,
    delta_usage: dict[str, int] | None = None,
) -> list[bytes]:
    """The SSE events of a whole streamed message with these content blocks.

    Text arrives in 4-character deltas, tool input JSON in 7-character ``input_json_delta``
    pieces after an empty one (as the API does); a tool block's ``input`` given as a str is
    sent verbatim (to fake broken JSON). ``message_start`` carries the input side of
    ``usage`` and one output token; ``message_delta`` carries the cumulative totals, or
    ``delta_usage`` exactly when given.
    """
    start_usage = Usage(usage.input_tokens, 1, usage.cache_read_tokens, usage.cache_write_tokens)
    events = [
        sse(
            "message_start",
            {"type": "message_start", "message": message([], None, start_usage, model)},
        ),
    ]
    for index, block in enumerate(content):
        if block["type"] == "text":
            start: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": t} for t in pieces(block["text"], 4)]
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            raw = block["input"] if isinstance(block["input"], str) else json.dumps(block["input"])
            deltas = [
                {"type": "input_json_delta", "partial_json": part} for part in ["", *pieces(raw, 7)]
            ]
        events.append(
            sse(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
        )
        if index == 0:
            events.append(sse("ping", {"type": "ping"}))
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
                "usage": wire_usage(usage) if delta_usage is None else delta_usage,
            },
        )
    )
    events.append(sse("message_stop", {"type": "message_stop"}))
    return events


def reply(
    content: list[dict[str, Any]],
    stop_reason: str,
    *,
    stream: bool,
    usage: Usage | None = None,
    model: str = MODEL,
) -> Reply:
    """A 200 response with these content blocks, streamed as SSE or as one JSON message."""
    usage = usage or DEFAULT_USAGE
    headers = {"request-id": REQUEST_ID}
    if stream:
        return Reply.stream(
            stream_events(content, stop_reason, usage, model=model), headers=headers
        )
    return Reply.json(message(content, stop_reason, usage, model), headers=headers)


def text_reply(
    text: str, *, stream: bool = True, usage: Usage | None = None, model: str = MODEL
) -> Reply:
    """The model answers ``text`` (end_turn); streamed in several deltas by default."""
    return reply(
        [{"type": "text", "text": text}], "end_turn", stream=stream, usage=usage, model=model
    )


def tool_reply(
    calls: list[tuple[str, str, dict[str, Any]]], *, text: str = "", stream: bool = True
) -> Reply:
    """The model calls tools (tool_use): each call is (id, name, arguments); streamed, each
    call's argument JSON is split across several deltas."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in calls]
    return reply(content, "tool_use", stream=stream)


def error_body(error_type: str, message: str, error_code: str | None = None) -> dict[str, Any]:
    """The API's error object, optionally with ``error.details.error_code``."""
    error: dict[str, Any] = {"type": error_type, "message": message}
    if error_code is not None:
        error["details"] = {"error_code": error_code}
    return {"type": "error", "error": error, "request_id": REQUEST_ID}


def error_reply(
    status: int,
    message: str = "Something went wrong",
    *,
    error_type: str | None = None,
    headers: dict[str, str] | None = None,
    error_code: str | None = None,
) -> Reply:
    """An HTTP error with the API's JSON error body; the type defaults to the status's own."""
    kind = error_type or _ERROR_TYPES.get(status, "api_error")
    return Reply.json(
        error_body(kind, message, error_code),
        status=status,
        headers={"request-id": REQUEST_ID, **(headers or {})},
    )


def not_found_reply(model: str) -> Reply:
    """The API's 404 for a model it does not serve (``not_found_error``, "model: X")."""
    return error_reply(404, f"model: {model}")


def models_reply(*ids: str) -> Reply:
    """GET /v1/models: one page of model objects (the API lists dated ids only)."""
    data = [
        {"type": "model", "id": i, "display_name": i, "created_at": "2026-01-01T00:00:00Z"}
        for i in ids
    ]
    first, last = (ids[0], ids[-1]) if ids else (None, None)
    return Reply.json({"data": data, "has_more": False, "first_id": first, "last_id": last})


def quota_reply() -> Reply:
    """Anthropic's answer when the account has no credit left."""
    return error_reply(
        400,
        "Your credit balance is too low to access the Anthropic API. "
        "Please go to Plans & Billing to upgrade or purchase credits.",
        error_type="invalid_request_error",
    )


def error_event(error_type: str = "overloaded_error", message: str = "Overloaded") -> bytes:
    """The ``event: error`` the API sends inside a 200 stream."""
    return sse("error", error_body(error_type, message))


def midstream_error_reply(text: str, error_type: str = "overloaded_error") -> Reply:
    """Streams ``text``, then an SSE error event, as the API does when overloaded mid-answer."""
    events = stream_events([{"type": "text", "text": text}], "end_turn", Usage(5, 5))[:-3]
    return Reply.stream([*events, error_event(error_type)], headers={"request-id": REQUEST_ID})


def early_error_reply(error_type: str = "overloaded_error") -> Reply:
    """A 200 stream whose first event is an error (nothing shown yet: safe to retry)."""
    return Reply.stream([error_event(error_type)], headers={"request-id": REQUEST_ID})


def malformed_reply() -> Reply:
    """A stream whose data line is not JSON."""
    return Reply.stream([b"event: message_start\ndata: {not json\n\n"])


def hanging_reply(text: str) -> list[Any]:
    """The first chunks of a streamed answer: the message starts and ``text`` arrives (append
    HANG or RESET to stall or break the stream there)."""
    return stream_events([{"type": "text", "text": text}], "end_turn", Usage(5, 5))[:4]


def rechunk(events: list[bytes], size: int) -> list[bytes]:
    """The same bytes in ``size``-byte chunks, cutting lines and UTF-8 characters anywhere."""
    data = b"".join(events)
    return [data[i : i + size] for i in range(0, len(data), size)]


def forced_tool(body: dict[str, Any]) -> str | None:
    """The tool a request body forces, if any."""
    choice = body.get("tool_choice") or {}
    return choice.get("name") if choice.get("type") == "tool" else None
