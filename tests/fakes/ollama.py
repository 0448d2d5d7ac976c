"""Ollama /api/chat replies, byte for byte as Ollama sends them (JSON and NDJSON lines)."""

from __future__ import annotations

import json
from typing import Any

from llm_service import OllamaProvider, Usage
from tests.fakes.http import FakeHTTPServer, Reply

MODEL = "llama3.1:8b"
NDJSON = "application/x-ndjson"
CREATED_AT = "2026-11-23T08:00:00.000000Z"


def make_provider(server: FakeHTTPServer, **kw: Any) -> OllamaProvider:
    """An OllamaProvider over httpx, pointed at ``server``."""
    options: dict[str, Any] = {"max_attempts": 3, "backoff_base": 0.001, "timeout": 5.0}
    options.update(kw)
    return OllamaProvider(server.url, **options)


def line(payload: dict[str, Any]) -> bytes:
    return (json.dumps(payload) + "\n").encode()


def _message(content: str, calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return {"model": MODEL, "created_at": CREATED_AT, "message": message, "done": False}


def _final(done_reason: str, usage: Usage, content: str = "") -> dict[str, Any]:
    return {
        "model": MODEL,
        "created_at": CREATED_AT,
        "message": {"role": "assistant", "content": content},
        "done_reason": done_reason,
        "done": True,
        "total_duration": 4883583458,
        "load_duration": 1334875,
        "prompt_eval_count": usage.input_tokens,
        "prompt_eval_duration": 342546000,
        "eval_count": usage.output_tokens,
        "eval_duration": 4535599000,
    }


def _wire_calls(calls: list[tuple[str, str, Any]]) -> list[dict[str, Any]]:
    return [{"function": {"name": name, "arguments": args}} for _, name, args in calls]


def reply(
    text: str, calls: list[tuple[str, str, Any]], *, stream: bool, usage: Usage | None = None
) -> Reply:
    usage = usage or Usage(25, 12)
    if not stream:
        body = _final("stop", usage, text)
        body["message"] = _message(text, _wire_calls(calls))["message"]
        return Reply.json(body)
    lines = [line(_message(text[i : i + 4])) for i in range(0, len(text), 4)]
    if calls:
        lines.append(line(_message("", _wire_calls(calls))))
    lines.append(line(_final("stop", usage)))
    return Reply.stream(lines, content_type=NDJSON)


def text_reply(
    text: str, *, stream: bool = True, usage: Usage | None = None, model: str = MODEL
) -> Reply:
    return reply(text, [], stream=stream, usage=usage)


def tool_reply(calls: list[tuple[str, str, Any]], *, text: str = "", stream: bool = True) -> Reply:
    return reply(text, calls, stream=stream)


def error_reply(
    status: int,
    message: str = "Something went wrong",
    *,
    error_type: str | None = None,
    headers: dict[str, str] | None = None,
) -> Reply:
    return Reply.json({"error": message}, status=status, headers=headers)


def quota_reply() -> Reply:
    """Ollama has no quotas; a proxy in front of it may still say so (OpenAI's words)."""
    return Reply.json({"error": {"type": "insufficient_quota", "message": "quota"}}, status=429)


def midstream_error_reply(text: str) -> Reply:
    lines = [line(_message(text[i : i + 4])) for i in range(0, len(text), 4)]
    lines.append(line({"error": "server overloaded, please retry shortly"}))
    return Reply.stream(lines, content_type=NDJSON)


def early_error_reply() -> Reply:
    return Reply.stream([line({"error": "server overloaded, please retry shortly"})], NDJSON)


def malformed_reply() -> Reply:
    return Reply.stream([b"{not json\n"], content_type=NDJSON)


def hanging_reply(text: str) -> list[Any]:
    return [line(_message(text))]


SUPPORTS_TOOL_CHOICE = False


def forced_tool(body: dict[str, Any]) -> str | None:
    """Ollama's API cannot force a tool, so requests never name one."""
    return body.get("tool_choice")
