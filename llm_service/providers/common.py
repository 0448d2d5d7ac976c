"""Pieces every provider translation shares: tool formats, token counts, tool-argument parsing
and server-sent events (the error table and sentences are the connections', in
``llm_service/connections/errors.py``)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

from llm_service.messages import ToolSpec


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
    null for "not given": :func:`llm_service.tools.without_null_optionals` reads it
    back); defaults go."""
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
