"""Pieces every provider translation shares: tool formats, the HTTP status table, token counts,
tool-argument parsing and error sentences."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

from llm_service.errors import ErrorCode
from llm_service.messages import ToolSpec


class UnreadableResponse(Exception):
    """The API's answer does not have the API's shape; ``_convert_error`` makes it
    invalid_response (with the request id, when the response had one)."""

    def __init__(self, detail: str, request_id: str | None = None) -> None:
        super().__init__(detail)
        self.request_id = request_id


def anthropic_tool(spec: ToolSpec) -> dict[str, Any]:
    """``spec`` in Anthropic's tool shape (also the scripted provider's)."""
    return {
        "name": spec.name,
        "description": spec.description,
        "input_schema": dict(spec.input_schema),
    }


def function_tool(spec: ToolSpec) -> dict[str, Any]:
    """``spec`` in the ``{"type": "function", ...}`` shape of OpenAI and Ollama."""
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": dict(spec.input_schema),
        },
    }


def strict_function_tool(spec: ToolSpec) -> dict[str, Any]:
    """``spec`` in OpenAI's function shape with ``"strict": true`` (LM Studio, OpenAI's strict
    mode): its schema made to satisfy strict mode by :func:`strict_schema`."""
    tool = function_tool(spec)
    tool["function"]["parameters"] = strict_schema(spec.input_schema)
    tool["function"]["strict"] = True
    return tool


def strict_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON Schema that strict mode accepts: every object lists all its properties as
    required and allows no others; an optional property becomes nullable (a model then sends
    null for "not given": :func:`without_null_optionals` reads it back); defaults go."""
    strict = {key: value for key, value in schema.items() if key != "default"}
    if isinstance(strict.get("items"), Mapping):
        strict["items"] = strict_schema(strict["items"])
    properties = strict.get("properties")
    if strict.get("type") == "object" or isinstance(properties, Mapping):
        properties = properties if isinstance(properties, Mapping) else {}
        required = set(strict.get("required", ()))
        strict["properties"] = {
            name: strict_schema(sub) if name in required else _nullable(strict_schema(sub))
            for name, sub in properties.items()
        }
        strict["required"] = list(properties)
        strict["additionalProperties"] = False
    return strict


def without_null_optionals(schema: Mapping[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` without the nulls a strict-mode model sends for optional properties it
    does not give (top level: the schema's ``required`` says which are optional)."""
    required = set(schema.get("required", ()))
    return {
        name: value for name, value in arguments.items() if value is not None or name in required
    }


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return {**schema, "type": [kind, "null"]}
    if isinstance(kind, list):
        return schema if "null" in kind else {**schema, "type": [*kind, "null"]}
    return {"anyOf": [schema, {"type": "null"}]}


def count(value: object) -> int:
    """A token count or timestamp as sent, or 0 when a server left it out (or sent junk)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def shorten(text: str, limit: int = 200) -> str:
    """The first sentence of an API's message, on one line, without its full stop, cut."""
    sentence = " ".join(text.split()).split(". ", 1)[0].rstrip(".")
    return sentence if len(sentence) <= limit else sentence[: limit - 3] + "..."


_STATUS_CODES: dict[int, ErrorCode] = {
    400: "invalid_request",
    401: "auth_error",
    402: "quota_exceeded",  # "insufficient credits" from OpenAI-compatible APIs (OpenRouter)
    403: "auth_error",
    404: "invalid_request",
    408: "timeout",
    413: "invalid_request",
    422: "invalid_request",
    429: "rate_limit",
    529: "overloaded",
}

_BODY_TYPES: dict[str, ErrorCode] = {
    "overloaded_error": "overloaded",
    "rate_limit_error": "rate_limit",
    "insufficient_quota": "quota_exceeded",
    "authentication_error": "auth_error",
    "permission_error": "auth_error",
    "invalid_request_error": "invalid_request",
    "not_found_error": "invalid_request",
    "request_too_large": "invalid_request",
    "api_error": "server_error",
    "timeout_error": "timeout",
}


def code_for(status: int | None, error_type: str | None = None, message: str = "") -> ErrorCode:
    """The LLMError code for an HTTP status and the API's own error type.

    Quota and overload are recognised by type first; then the status decides; the type alone
    decides only for errors without one (an error event inside a 200 stream)."""
    lowered = message.lower()
    if error_type == "insufficient_quota" or "credit balance is too low" in lowered:
        return "quota_exceeded"
    server_side = status is None or status >= 500
    if error_type == "overloaded_error" or (server_side and "overloaded" in lowered):
        return "overloaded"
    if status is not None and status in _STATUS_CODES:
        return _STATUS_CODES[status]
    if status is not None and status >= 500:
        return "server_error"
    return _BODY_TYPES.get(error_type or "", "unknown")


def error_details(body: object) -> tuple[str | None, str]:
    """(error type or code, message) from an API error body in any of the usual shapes."""
    if not isinstance(body, dict):
        return None, str(body or "")
    error = body.get("error", body)
    if isinstance(error, str):
        return None, error
    if not isinstance(error, dict):
        return None, ""
    kind = error.get("code") if error.get("code") == "insufficient_quota" else error.get("type")
    return (str(kind) if kind else None), str(error.get("message") or "")


def sent_as_is(params: dict[str, Any], *fields: str) -> dict[str, Any]:
    """``params`` with ``fields`` (the messages, the tools) moved into ``extra_body``: they are
    already in the API's wire shape, and the SDKs' parameter transform walked every message and
    every tool's JSON Schema on every request (~4 ms for the six vault tools; about 1 ms more
    for a conversation's messages). The JSON body sent is the same; a required parameter is
    handed to the SDK empty and ``extra_body`` fills it."""
    moved = {name: params[name] for name in fields if name in params}
    kept = {name: value for name, value in params.items() if name not in moved}
    if "messages" in moved:
        kept["messages"] = []
    return {**kept, "extra_body": moved}


def parse_tool_arguments(raw: str | dict[str, Any] | None) -> tuple[dict[str, Any], str | None]:
    """Tool arguments as a dict, or ({}, reason) when they are not a JSON object."""
    if isinstance(raw, dict):
        return raw, None
    if raw is None or not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        excerpt = raw if len(raw) <= 80 else raw[:77] + "..."
        return {}, f"arguments are not valid JSON ({exc.msg} at char {exc.pos}): {excerpt}"
    if not isinstance(value, dict):
        return {}, f"arguments must be a JSON object, got {type(value).__name__}"
    return value, None


def describe(code: ErrorCode, provider: str, status: int | None, detail: str, hint: str) -> str:
    """One sentence: what happened, with the status, the API's words, and what to do."""
    what = {
        "auth_error": "rejected the API key",
        "rate_limit": "rate limit reached",
        "quota_exceeded": "quota or credit is used up",
        "overloaded": "is overloaded",
        "server_error": "had a server error",
        "invalid_request": "refused the request",
        "timeout": "did not answer in time",
        "network_error": "could not be reached",
        "invalid_response": "sent a response that could not be read",
        "cancelled": "request was cancelled",
        "unknown": "failed",
    }[code]
    status_text = f" ({status})" if status else ""
    detail_text = f": {detail.rstrip('.')}" if detail else ""
    return f"{provider} {what}{status_text}{detail_text}; {hint}."


HINTS: dict[ErrorCode, str] = {
    "auth_error": "check the API key",
    "rate_limit": "wait a moment and send the message again",
    "quota_exceeded": "add credit or raise the quota in your provider account",
    "overloaded": "try again in a minute",
    "server_error": "try again in a minute",
    "invalid_request": "check the model name and the request",
    "timeout": "try again, or raise the timeout",
    "network_error": "check your connection and the base URL",
    "invalid_response": "check that the base URL points at a compatible API",
    "cancelled": "send the message again if you still need the answer",
    "unknown": "see the server log for details",
}


def transport_code(exc: BaseException) -> ErrorCode | None:
    """The code for an httpx / httpx2 transport failure, judged by class name (both libraries
    share their exception hierarchy's names), or None when ``exc`` is not one."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    if "TimeoutException" in names or isinstance(exc, TimeoutError):
        return "timeout"
    if "DecodingError" in names:
        return "invalid_response"
    if names & {"TransportError", "NetworkError", "ProtocolError"} or isinstance(
        exc, ConnectionError
    ):
        return "network_error"
    if isinstance(exc, (json.JSONDecodeError, UnicodeDecodeError)):
        return "invalid_response"
    return None


async def sse_data(lines: AsyncIterator[str]) -> AsyncIterator[str]:
    """The ``data`` of each server-sent event in ``lines`` (an event's data lines joined by
    newlines); an event cut off by the end of the stream is dropped, as the SSE spec says."""
    data: list[str] = []
    async for line in lines:
        if line.startswith("data:"):
            data.append(line[6:] if line.startswith("data: ") else line[5:])
        elif not line and data:
            yield "\n".join(data)
            data = []
