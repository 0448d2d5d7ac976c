"""OpenAI-compatible routes: ``GET /v1/models`` and ``POST /v1/chat/completions`` (messages,
tools, ``tool_choice``, ``response_format``, ``stream: true`` as SSE chunks ending in
``data: [DONE]``, usage). Errors keep OpenAI's shape ``{"error": {"message", "type", "code"}}``;
a failure before the first streamed byte keeps its HTTP status, a later one is an
``{"error": …}`` chunk (the OpenAI SDK raises it). Every chunk of a stream names the same model:
the one the request asked for (else the configured chat model)."""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from llm_service import LLMResponse, ResponseComplete, TextDelta, ToolCallDelta
from plugin_bridge import DISTRIBUTION
from plugin_bridge.app.assistant import Event
from plugin_bridge.app.turn.images import images_within_limits
from plugin_bridge.httpapi.chat import PURPOSE
from plugin_bridge.httpapi.guard import OPENAI_TYPES
from plugin_bridge.httpapi.openai_format import (
    ChatInput,
    chat_input,
    finish_reason,
    tool_calls_out,
    usage_out,
)
from plugin_bridge.httpapi.responses import (
    DONE,
    SSE_HEADERS,
    caller_of,
    chat_of,
    error_response,
    json_body,
    json_response,
    sse,
    started,
)
from plugin_bridge.wire.errors import to_http_error


async def models(request: Request) -> Response:
    """The models a request can use (``Assistant.models``)."""
    try:
        ids = await chat_of(request).bridge.assistant.models()
    except Exception as exc:
        return error_response(request.url.path, exc)
    return json_response(
        {
            "object": "list",
            "data": [
                {"id": m, "object": "model", "created": 0, "owned_by": DISTRIBUTION} for m in ids
            ],
        }
    )


async def chat_completions(request: Request) -> Response:
    path = request.url.path
    try:
        body = chat_input(await json_body(request), caller=caller_of(request))
        assistant = chat_of(request).bridge.assistant
        messages, warnings = await images_within_limits(body.messages)
        if not body.stream:
            reply = await assistant.ask(PURPOSE, messages, body.options)
            return json_response(_completion(body, reply, warnings))
        events = await started(assistant.ask_events(PURPOSE, messages, body.options))
        model = body.options.model or chat_of(request).bridge.providers.model or ""
    except Exception as exc:
        return error_response(path, exc)
    return StreamingResponse(
        _chunks(body, model, events, warnings),
        media_type="text/event-stream",
        headers=SSE_HEADERS,
    )


def _completion(body: ChatInput, reply: LLMResponse, warnings: list[str]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = tool_calls_out(reply.tool_calls)
    return {
        "id": _completion_id(),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": reply.model or body.options.model or "",
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": finish_reason(reply.stop_reason),
            }
        ],
        "usage": usage_out(reply.usage),
    } | ({"warnings": warnings} if warnings else {})


async def _chunks(
    body: ChatInput, model: str, events: AsyncGenerator[Event, None], warnings: list[str]
) -> AsyncIterator[bytes]:
    head = {
        "id": _completion_id(),
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }

    def chunk(
        delta: dict[str, Any], finish: str | None = None, extra: dict[str, Any] | None = None
    ) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return sse({**head, "choices": [choice], **(extra or {})})

    noted = {"warnings": warnings} if warnings else None  # images left out, on the first chunk
    yield chunk({"role": "assistant", "content": ""}, extra=noted)
    try:
        async for event in events:
            if isinstance(event, TextDelta):
                yield chunk({"content": event.text})
            elif isinstance(event, ToolCallDelta):
                yield chunk({"tool_calls": [_call_delta(event)]})
            else:
                assert isinstance(event, ResponseComplete)
                reply = event.response
                yield chunk({}, finish_reason(reply.stop_reason))
                if body.include_usage:
                    yield sse({**head, "choices": [], "usage": usage_out(reply.usage)})
    except Exception as exc:
        error = to_http_error(exc)
        kind = OPENAI_TYPES.get(error.status, "api_error")
        yield sse({"error": {"message": error.message, "type": kind, "code": error.code}})
    yield DONE


def _call_delta(event: ToolCallDelta) -> dict[str, Any]:
    delta: dict[str, Any] = {"index": event.index}
    if event.id is not None:
        delta["id"] = event.id
        delta["type"] = "function"
    function: dict[str, str] = {"arguments": event.arguments_delta}
    if event.name is not None:
        function["name"] = event.name
    delta["function"] = function
    return delta


def _completion_id() -> str:
    return f"chatcmpl-{secrets.token_hex(12)}"


OPENAI_ROUTES = [
    Route("/v1/models", models, methods=["GET"]),
    Route("/v1/chat/completions", chat_completions, methods=["POST"]),
]
