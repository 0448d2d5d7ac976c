"""OpenAI Chat Completions replies, byte for byte as the API sends them (JSON and SSE).

The shapes follow the API reference and real captured streams (compact JSON, ``"usage":null`` on
every chunk until the last one, which has no choices and carries the usage, then
``data: [DONE]``). Builders return :class:`Reply` objects for :class:`FakeHTTPServer`.
"""

from __future__ import annotations

import json
from typing import Any

from llm_service import OpenAIProvider, Usage
from tests.fakes.http import FakeHTTPServer, Reply

MODEL = "gpt-5.4-mini"
REQUEST_ID = "req_openai_test_1"
CREATED = 1763880000
SUPPORTS_TOOL_CHOICE = True
"""The API can force a named tool call (see ``forced_tool``)."""

_ERROR_KINDS: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    413: ("invalid_request_error", None),
    422: ("invalid_request_error", None),
    429: ("requests", "rate_limit_exceeded"),
}
"""The (type, code) the API puts in the error body for each status; 5xx are server_error."""


def make_provider(server: FakeHTTPServer, **kw: Any) -> OpenAIProvider:
    """An OpenAIProvider on the real SDK, pointed at ``server`` (as a compatible endpoint)."""
    options: dict[str, Any] = {"max_attempts": 3, "backoff_base": 0.001, "timeout": 5.0}
    options.update(kw)
    return OpenAIProvider(api_key="sk-test", base_url=server.url + "/v1", **options)


def data(payload: dict[str, Any] | str) -> bytes:
    """One SSE event: ``data: <compact json>`` and a blank line."""
    body = payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":"))
    return f"data: {body}\n\n".encode()


def usage_body(usage: Usage) -> dict[str, Any]:
    """The API's usage object; its prompt_tokens include the cached ones."""
    prompt = usage.input_tokens + usage.cache_read_tokens
    return {
        "prompt_tokens": prompt,
        "completion_tokens": usage.output_tokens,
        "total_tokens": prompt + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read_tokens, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def chunk(delta: dict[str, Any], finish: str | None = None, *, model: str = MODEL) -> bytes:
    """One ``chat.completion.chunk`` event with a single choice."""
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    return data({**_chunk_head(model), "choices": [choice], "usage": None})


def _chunk_head(model: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": model,
        "service_tier": "default",
        "system_fingerprint": "fp_test",
    }


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _raw(arguments: dict[str, Any] | str) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def stream_chunks(
    text: str,
    calls: list[tuple[str, str, Any]],
    finish: str,
    usage: Usage,
    *,
    model: str = MODEL,
) -> list[bytes]:
    """The SSE events of a streamed completion; call arguments may be dicts or raw strings.

    Text arrives 4 characters per delta; each call's id and name come first (with empty
    arguments), then its argument JSON 6 characters per delta, as the API streams them."""
    chunks = [chunk({"role": "assistant", "content": "", "refusal": None}, model=model)]
    chunks += [chunk({"content": piece}, model=model) for piece in _pieces(text, 4)]
    for index, (call_id, name, arguments) in enumerate(calls):
        head = {"index": index, "id": call_id, "type": "function"}
        head["function"] = {"name": name, "arguments": ""}
        chunks.append(chunk({"tool_calls": [head]}, model=model))
        for piece in _pieces(_raw(arguments), 6):
            part = {"index": index, "function": {"arguments": piece}}
            chunks.append(chunk({"tool_calls": [part]}, model=model))
    chunks.append(chunk({}, finish, model=model))
    chunks.append(data({**_chunk_head(model), "choices": [], "usage": usage_body(usage)}))
    chunks.append(data("[DONE]"))
    return chunks


def reply(
    text: str,
    calls: list[tuple[str, str, Any]],
    finish: str,
    *,
    stream: bool,
    usage: Usage | None = None,
    model: str = MODEL,
) -> Reply:
    """A whole completion (JSON) or its SSE stream, with an ``x-request-id`` header."""
    usage = usage or Usage(25, 12)
    headers = {"x-request-id": REQUEST_ID}
    if stream:
        return Reply.stream(stream_chunks(text, calls, finish, usage, model=model), headers=headers)
    message: dict[str, Any] = {"role": "assistant", "content": text or None, "refusal": None}
    if calls:
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": _raw(a)}}
            for i, n, a in calls
        ]
    body = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": CREATED,
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": usage_body(usage),
        "service_tier": "default",
        "system_fingerprint": "fp_test",
    }
    return Reply.json(body, headers=headers)


def text_reply(
    text: str, *, stream: bool = True, usage: Usage | None = None, model: str = MODEL
) -> Reply:
    """The model answers ``text`` and stops (finish_reason "stop")."""
    return reply(text, [], "stop", stream=stream, usage=usage, model=model)


def tool_reply(calls: list[tuple[str, str, Any]], *, text: str = "", stream: bool = True) -> Reply:
    """The model calls tools ``(id, name, arguments)`` (finish_reason "tool_calls")."""
    return reply(text, calls, "tool_calls", stream=stream)


def error_body(message: str, error_type: str, code: str | None = None) -> dict[str, Any]:
    """The API's error object, as sent in error responses and inside streams."""
    return {"error": {"message": message, "type": error_type, "param": None, "code": code}}


def error_reply(
    status: int,
    message: str = "Something went wrong",
    *,
    error_type: str | None = None,
    headers: dict[str, str] | None = None,
) -> Reply:
    """An HTTP error with the API's error body; ``error_type`` also becomes its ``code``."""
    kind, code = _ERROR_KINDS.get(status, ("server_error", None))
    if error_type is not None:
        kind = code = error_type
    return Reply.json(
        error_body(message, kind, code),
        status=status,
        headers={"x-request-id": REQUEST_ID, **(headers or {})},
    )


def not_found_reply(model: str) -> Reply:
    """The API's 404 for a model it does not serve (code ``model_not_found``)."""
    return error_reply(404, f"The model `{model}` does not exist or you do not have access to it.")


def quota_reply() -> Reply:
    """429 insufficient_quota: the account has no credit left."""
    return error_reply(
        429,
        "You exceeded your current quota, please check your plan and billing details.",
        error_type="insufficient_quota",
    )


def _error_event(message: str, error_type: str) -> bytes:
    return data(error_body(message, error_type))


def midstream_error_reply(
    text: str, *, message: str = "The server is overloaded.", error_type: str = "server_error"
) -> Reply:
    """A stream that shows ``text``, then carries an error object instead of finishing."""
    return Reply.stream(
        [*hanging_reply(text), _error_event(message, error_type)],
        headers={"x-request-id": REQUEST_ID},
    )


def early_error_reply() -> Reply:
    """A 200 stream whose first event is an (overloaded) error object."""
    return Reply.stream([_error_event("The server is overloaded.", "server_error")])


def malformed_reply() -> Reply:
    """A stream whose event is not JSON."""
    return Reply.stream([b"data: {not json\n\n"])


def hanging_reply(text: str) -> list[Any]:
    """The opening SSE events of a stream showing ``text`` (append HANG / RESET to them)."""
    return stream_chunks(text, [], "stop", Usage())[: 1 + len(_pieces(text, 4))]


def models_reply(*ids: str) -> Reply:
    """GET /models: a list of model objects (all created at the same time)."""
    models = [{"id": i, "object": "model", "created": CREATED, "owned_by": "system"} for i in ids]
    return Reply.json({"object": "list", "data": models}, headers={"x-request-id": REQUEST_ID})


def forced_tool(body: dict[str, Any]) -> str | None:
    """The tool name a request body forces through ``tool_choice``, if any."""
    choice = body.get("tool_choice") or {}
    return (choice.get("function") or {}).get("name")
