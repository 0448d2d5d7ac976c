"""Ollama /api/chat replies, byte for byte as Ollama sends them (a JSON body or NDJSON lines).

Shapes follow Ollama's docs/api.md ("Chat request (Streaming with tools)", "Chat request (No
streaming)", docs/api/errors.mdx) and server/routes.go: every streamed line is one JSON object
and a newline; the last has ``done: true``, ``done_reason`` and the token counts; errors are
``{"error": "<text>"}``. Ollama sends each tool call whole (its arguments an object), so unlike
the SSE fakes nothing splits a call's argument JSON: a streamed reply puts each call on its own
line instead. A call given a non-empty id is sent the way current servers send it (``id`` and
``function.index``); an empty id gives the id-less shape of older servers.

Other test modules import these names: ``MODEL``, ``NDJSON``, ``make_provider``, ``line``,
``text_reply``, ``tool_reply``, ``error_reply``, ``quota_reply``, ``midstream_error_reply``,
``early_error_reply``, ``malformed_reply``, ``hanging_reply``, ``not_found_reply``,
``tags_reply``, ``SUPPORTS_TOOL_CHOICE`` and ``forced_tool``.
"""

from __future__ import annotations

import json
from typing import Any

from llm_service import OllamaProvider, Usage
from tests.fakes.http import FakeHTTPServer, Reply

MODEL = "llama3.1:8b"
NDJSON = "application/x-ndjson"
CREATED_AT = "2026-11-23T08:00:00.000000Z"
DEFAULT_USAGE = Usage(25, 12)
BUSY = "server busy, please try again.  maximum pending requests exceeded"
"""Ollama's words (server/sched.go ErrMaxQueue) when its request queue is full."""
SUPPORTS_TOOL_CHOICE = False
"""Ollama's API has no field that forces a tool call."""

Call = tuple[str, str, Any]
"""(id, name, arguments) of one tool call; arguments may be a dict or a raw JSON string."""


def make_provider(server: FakeHTTPServer, **kw: Any) -> OllamaProvider:
    """An OllamaProvider over httpx, pointed at ``server``, with a tiny backoff."""
    options: dict[str, Any] = {"max_attempts": 3, "backoff_base": 0.001, "timeout": 5.0}
    options.update(kw)
    return OllamaProvider(base_url=server.url, **options)


def line(payload: dict[str, Any]) -> bytes:
    """One NDJSON line."""
    return (json.dumps(payload) + "\n").encode()


def wire_calls(calls: list[Call]) -> list[dict[str, Any]]:
    """Tool calls as Ollama writes them in ``message.tool_calls``."""
    wire: list[dict[str, Any]] = []
    for index, (call_id, name, arguments) in enumerate(calls):
        if call_id:
            wire.append(
                {"id": call_id, "function": {"index": index, "name": name, "arguments": arguments}}
            )
        else:
            wire.append({"function": {"name": name, "arguments": arguments}})
    return wire


def chunk(content: str, calls: list[Call] | None = None, *, model: str = MODEL) -> dict[str, Any]:
    """A streamed object that is not the last one."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = wire_calls(calls)
    return {"model": model, "created_at": CREATED_AT, "message": message, "done": False}


def final(
    done_reason: str = "stop",
    usage: Usage | None = None,
    *,
    content: str = "",
    calls: list[Call] | None = None,
    model: str = MODEL,
) -> dict[str, Any]:
    """The last object of a stream, or the whole body of a non-streaming reply."""
    usage = usage or DEFAULT_USAGE
    return {
        **chunk(content, calls, model=model),
        "done_reason": done_reason,
        "done": True,
        "total_duration": 4883583458,
        "load_duration": 1334875,
        "prompt_eval_count": usage.input_tokens,
        "prompt_eval_duration": 342546000,
        "eval_count": usage.output_tokens,
        "eval_duration": 4535599000,
    }


def ndjson(*objects: dict[str, Any]) -> Reply:
    """A 200 NDJSON stream, one HTTP chunk per line."""
    return Reply.stream([line(o) for o in objects], content_type=NDJSON)


def text_lines(text: str, size: int = 4, *, model: str = MODEL) -> list[dict[str, Any]]:
    """``text`` as streamed pieces of ``size`` characters."""
    return [chunk(text[i : i + size], model=model) for i in range(0, len(text), size)]


def reply(
    text: str,
    calls: list[Call],
    *,
    stream: bool,
    usage: Usage | None = None,
    done_reason: str = "stop",
    model: str = MODEL,
) -> Reply:
    """Text then tool calls, streamed (text in pieces, one line per call) or as one body."""
    if not stream:
        return Reply.json(final(done_reason, usage, content=text, calls=calls, model=model))
    objects = text_lines(text, model=model)
    objects += [chunk("", [call], model=model) for call in calls]
    return ndjson(*objects, final(done_reason, usage, model=model))


def text_reply(
    text: str, *, stream: bool = True, usage: Usage | None = None, model: str = MODEL
) -> Reply:
    """A plain answer; streamed in several text pieces."""
    return reply(text, [], stream=stream, usage=usage, model=model)


def tool_reply(calls: list[Call], *, text: str = "", stream: bool = True) -> Reply:
    """Tool calls (each (id, name, arguments)), after optional text; done_reason stays "stop"."""
    return reply(text, calls, stream=stream)


def error_reply(
    status: int,
    message: str = "Something went wrong",
    *,
    error_type: str | None = None,
    headers: dict[str, str] | None = None,
) -> Reply:
    """An HTTP error: Ollama's ``{"error": text}``, or with ``error_type`` the object shape
    an OpenAI-style proxy in front of Ollama sends."""
    error: Any = {"type": error_type, "message": message} if error_type else message
    return Reply.json({"error": error}, status=status, headers=headers)


def not_found_reply(model: str) -> Reply:
    """Ollama's 404 for a model it has not pulled (server/routes.go)."""
    return error_reply(404, f"model '{model}' not found")


def tags_reply(*names: str) -> Reply:
    """GET /api/tags: the models pulled, each by its tagged name (``llama3.2:latest``)."""
    models = [{"name": name, "model": name, "size": 2019393189} for name in names]
    return Reply.json({"models": models})


def quota_reply() -> Reply:
    """Ollama has no quotas; a proxy in front of it may still say so (OpenAI's words)."""
    return error_reply(429, "You exceeded your current quota", error_type="insufficient_quota")


def midstream_error_reply(
    text: str, error: str = "server overloaded, please retry shortly"
) -> Reply:
    """``text`` streams, then an error line arrives inside the 200 stream."""
    return Reply.stream([*hanging_reply(text), line({"error": error})], content_type=NDJSON)


def early_error_reply(error: str = "server overloaded, please retry shortly") -> Reply:
    """A 200 stream whose first line is an error."""
    return ndjson({"error": error})


def malformed_reply() -> Reply:
    """A 200 stream whose line is not JSON."""
    return Reply.stream([b"{not json\n"], content_type=NDJSON)


def hanging_reply(text: str) -> list[Any]:
    """The chunks of a stream's beginning, for tests that append HANG or RESET."""
    return [line(o) for o in text_lines(text)]


def forced_tool(body: dict[str, Any]) -> str | None:
    """The tool a request forces; Ollama requests never name one."""
    return body.get("tool_choice")
