"""The LLM proxy's routes, as its clients know them:

- ``POST /chat {model?, messages, tools?, tool_choice?, response_format?}`` → ``{content,
  tool_calls, usage: {prompt_tokens, completion_tokens}, model, finish_reason}``; a message's
  ``content`` is a string or a list of blocks in OpenAI's, Anthropic's or the Rust thin client's
  shape (see :mod:`.bodies`);
- ``POST /chat/stream``, the same as Server-Sent Events ``data: {"content": "…"}`` …
  ``data: [DONE]``; an error is one ``data: {"error", "message"}`` event, the last.

Errors of ``/chat``: ``{"error": "auth_failed"|"budget_exceeded"|"rate_limit"|"api_error",
"message"}`` with 401, 402, 429 and 502 (and 400 ``invalid_request`` for a body that cannot be
used).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from llm_service import ResponseComplete, TextDelta
from plugin_bridge.app.turn.images import images_within_limits
from plugin_bridge.httpapi.chat import PURPOSE
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
)
from plugin_bridge.wire.errors import to_http_error


async def chat(request: Request) -> Response:
    try:
        body = chat_input(await json_body(request), caller=caller_of(request))
        assistant = chat_of(request).bridge.assistant
        messages, warnings = await images_within_limits(body.messages)
        reply = await assistant.ask(PURPOSE, messages, body.options)
    except Exception as exc:
        return error_response(request.url.path, exc)
    usage = usage_out(reply.usage)
    return json_response(
        {
            "content": reply.text,
            "tool_calls": tool_calls_out(reply.tool_calls),
            "usage": {key: usage[key] for key in ("prompt_tokens", "completion_tokens")},
            "model": reply.model,
            "finish_reason": finish_reason(reply.stop_reason),
        }
        | ({"warnings": warnings} if warnings else {})  # images left out
    )


async def chat_streamed(request: Request) -> Response:
    try:
        body = chat_input(await json_body(request), caller=caller_of(request))
    except Exception as exc:
        return error_response(request.url.path, exc)
    return StreamingResponse(
        _events(request, body), media_type="text/event-stream", headers=SSE_HEADERS
    )


async def _events(request: Request, body: ChatInput) -> AsyncIterator[bytes]:
    try:
        assistant = chat_of(request).bridge.assistant
        messages, warnings = await images_within_limits(body.messages)
        for warning in warnings:
            yield sse({"warning": warning})
        async with aclosing(assistant.ask_events(PURPOSE, messages, body.options)) as events:
            async for event in events:
                if isinstance(event, TextDelta):
                    yield sse({"content": event.text})
                elif isinstance(event, ResponseComplete) and event.response.tool_calls:
                    yield sse({"tool_calls": tool_calls_out(event.response.tool_calls)})
    except Exception as exc:
        error = to_http_error(exc)
        yield sse({"error": error.code, "message": error.message})
        return
    yield DONE


PROXY_ROUTES = [
    Route("/chat", chat, methods=["POST"]),
    Route("/chat/stream", chat_streamed, methods=["POST"]),
]
