"""OpenAI Chat Completions replies, byte for byte as the API sends them (JSON and SSE chunks)."""

from __future__ import annotations

import json
from typing import Any

from llm_service import OpenAIProvider, Usage
from tests.fakes.http import FakeHTTPServer, Reply

MODEL = "gpt-5.4-mini"
REQUEST_ID = "req_openai_test_1"
CREATED = 1763880000


def make_provider(server: FakeHTTPServer, **kw: Any) -> OpenAIProvider:
    """An OpenAIProvider on the real SDK, pointed at ``server`` (as a compatible endpoint)."""
    options: dict[str, Any] = {"max_attempts": 3, "backoff_base": 0.001, "timeout": 5.0}
    options.update(kw)
    return OpenAIProvider(api_key="sk-test", base_url=server.url + "/v1", **options)


def data(payload: dict[str, Any] | str) -> bytes:
    body = payload if isinstance(payload, str) else json.dumps(payload)
    return f"data: {body}\n\n".encode()


def _usage(usage: Usage) -> dict[str, Any]:
    prompt = usage.input_tokens + usage.cache_read_tokens
    return {
        "prompt_tokens": prompt,
        "completion_tokens": usage.output_tokens,
        "total_tokens": prompt + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read_tokens, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    }


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": MODEL,
        "system_fingerprint": "fp_test",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def stream_chunks(
    text: str, calls: list[tuple[str, str, Any]], finish: str, usage: Usage
) -> list[bytes]:
    """The SSE chunks of a streamed completion; call arguments may be dicts or raw strings."""
    chunks = [data(_chunk({"role": "assistant", "content": "", "refusal": None}))]
    chunks += [data(_chunk({"content": piece})) for piece in _pieces(text, 4) if text]
    for index, (call_id, name, arguments) in enumerate(calls):
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
        first = {"index": index, "id": call_id, "type": "function"}
        first["function"] = {"name": name, "arguments": ""}
        chunks.append(data(_chunk({"tool_calls": [first]})))
        for piece in _pieces(raw, 6):
            part = {"index": index, "function": {"arguments": piece}}
            chunks.append(data(_chunk({"tool_calls": [part]})))
    chunks.append(data(_chunk({}, finish)))
    final = {**_chunk({}), "choices": [], "usage": _usage(usage)}
    chunks.append(data(final))
    chunks.append(data("[DONE]"))
    return chunks


def reply(
    text: str,
    calls: list[tuple[str, str, Any]],
    finish: str,
    *,
    stream: bool,
    usage: Usage | None = None,
) -> Reply:
    usage = usage or Usage(25, 12)
    headers = {"x-request-id": REQUEST_ID}
    if stream:
        return Reply.stream(stream_chunks(text, calls, finish, usage), headers=headers)
    tool_calls = [
        {
            "id": i,
            "type": "function",
            "function": {"name": n, "arguments": a if isinstance(a, str) else json.dumps(a)},
        }
        for i, n, a in calls
    ]
    message: dict[str, Any] = {"role": "assistant", "content": text or None, "refusal": None}
    if tool_calls:
        message["tool_calls"] = tool_calls
    body = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": CREATED,
        "model": MODEL,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": _usage(usage),
    }
    return Reply.json(body, headers=headers)


def text_reply(
    text: str, *, stream: bool = True, usage: Usage | None = None, model: str = MODEL
) -> Reply:
    return reply(text, [], "stop", stream=stream, usage=usage)


def tool_reply(calls: list[tuple[str, str, Any]], *, text: str = "", stream: bool = True) -> Reply:
    return reply(text, calls, "tool_calls", stream=stream)


def error_reply(
    status: int,
    message: str = "Something went wrong",
    *,
    error_type: str | None = None,
    headers: dict[str, str] | None = None,
) -> Reply:
    kind = error_type or {
        400: "invalid_request_error",
        401: "invalid_request_error",
        429: "rate_limit_error" if status == 429 else "requests",
    }.get(status, "server_error")
    body = {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return Reply.json(body, status=status, headers={"x-request-id": REQUEST_ID, **(headers or {})})


def quota_reply() -> Reply:
    body = {
        "error": {
            "message": "You exceeded your current quota, please check your plan.",
            "type": "insufficient_quota",
            "param": None,
            "code": "insufficient_quota",
        }
    }
    return Reply.json(body, status=429, headers={"x-request-id": REQUEST_ID})


def _error_chunk() -> bytes:
    return data({"error": {"message": "The server is overloaded.", "type": "server_error"}})


def midstream_error_reply(text: str) -> Reply:
    chunks = stream_chunks(text, [], "stop", Usage(5, 5))[:-3]
    return Reply.stream([*chunks, _error_chunk()])


def early_error_reply() -> Reply:
    return Reply.stream([_error_chunk()])


def malformed_reply() -> Reply:
    return Reply.stream([b"data: {not json\n\n"])


def hanging_reply(text: str) -> list[Any]:
    return stream_chunks(text, [], "stop", Usage(5, 5))[:3]


SUPPORTS_TOOL_CHOICE = True


def forced_tool(body: dict[str, Any]) -> str | None:
    choice = body.get("tool_choice") or {}
    return (choice.get("function") or {}).get("name")
