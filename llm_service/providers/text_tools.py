"""Tool calls for models that have no tool API: the tools described in the system prompt, the
model's ```tool blocks parsed back into ToolCalls, tool results sent back as text.

The calls then go through the same ToolRegistry path as native ones (validated, run, their
errors fed back to the model), so the tool loop cannot tell the difference.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from dataclasses import replace
from typing import Final

from llm_service.messages import LLMResponse, Message, TextBlock, ToolCall, ToolResultBlock
from llm_service.providers.base import ChatRequest
from llm_service.providers.common import parse_tool_arguments

_BLOCK: Final = re.compile(r"```tool\s*\n(.*?)\n?```", re.DOTALL)


def instructions(request: ChatRequest) -> str:
    """The system prompt's part that teaches the model the tools and the call format."""
    described = "\n".join(
        f"- {tool.name}: {tool.description}\n  arguments (JSON Schema): "
        f"{json.dumps(tool.input_schema, ensure_ascii=False)}"
        for tool in request.tools
    )
    return (
        "You can use these tools:\n"
        f"{described}\n"
        "To call one, answer with only a block like this, then stop and wait for the result:\n"
        '```tool\n{"name": "TOOL_NAME", "arguments": {...}}\n```\n'
        "Results come back in a message that starts with 'Tool result'. When you have what you "
        "need, answer the user normally, without a tool block."
    )


def as_text_request(request: ChatRequest) -> ChatRequest:
    """``request`` without tools: described in the system prompt, earlier calls and results
    written as text."""
    system = "\n\n".join(part for part in (request.system, instructions(request)) if part)
    messages = [_as_text(message) for message in request.messages]
    return replace(request, system=system, messages=messages, tools=[], tool_choice=None)


def parse_reply(response: LLMResponse) -> LLMResponse:
    """The model's text with its tool blocks taken out as ToolCalls (a block that is not a
    JSON object with a name becomes a call with a parse_error, which the loop feeds back)."""
    calls: list[ToolCall] = []
    for raw in _BLOCK.findall(response.text):
        arguments, error = parse_tool_arguments(raw)
        name = arguments.get("name") if isinstance(arguments.get("name"), str) else ""
        inner = arguments.get("arguments", {})
        if error is None and not name:
            error = 'the tool block needs {"name": ..., "arguments": {...}}'
        if error is None and not isinstance(inner, dict):
            error = "arguments must be a JSON object"
        calls.append(
            ToolCall(
                f"call_{uuid.uuid4().hex[:24]}",
                str(name or "invalid_tool_block"),
                inner if isinstance(inner, dict) and error is None else {},
                error,
            )
        )
    if not calls:
        return response
    text = _BLOCK.sub("", response.text).strip()
    return replace(response, text=text, tool_calls=calls, stop_reason="tool_use")


def _as_text(message: Message) -> Message:
    blocks: list[TextBlock] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            blocks.append(block)
        elif isinstance(block, ToolCall):
            call = {"name": block.name, "arguments": block.arguments}
            blocks.append(TextBlock(f"```tool\n{json.dumps(call, ensure_ascii=False)}\n```"))
        elif isinstance(block, ToolResultBlock):
            status = "error" if block.is_error else "ok"
            blocks.append(TextBlock(f"Tool result ({status}):\n{block.content}"))
    return Message(message.role, tuple(_joined(blocks)))


def _joined(blocks: Sequence[TextBlock]) -> list[TextBlock]:
    return [TextBlock("\n\n".join(block.text for block in blocks))] if blocks else []
