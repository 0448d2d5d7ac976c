"""Tool calls for models that have no tool API: the tools described in the system prompt, the
model's ```tool blocks parsed back into ToolCalls, tool results sent back as text.

The calls then go through the same ToolRegistry path as native ones (validated, run, their
errors fed back to the model), so the tool loop cannot tell the difference.
:class:`TextToolFallback` is the switch: a provider built on it tries native tools first and,
once a model's server refuses them, sends that model's tools in text from then on.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from abc import abstractmethod
from collections.abc import AsyncGenerator, Sequence
from dataclasses import replace
from typing import Final, Unpack

from llm_service.events import ResponseComplete, StreamEvent, TextDelta
from llm_service.messages import LLMResponse, Message, TextBlock, ToolCall, ToolResultBlock
from llm_service.providers.base import ChatRequest, Provider, ProviderOptions
from llm_service.providers.common import parse_tool_arguments

logger = logging.getLogger(__name__)

_BLOCK: Final = re.compile(r"```tool\s*\n(.*?)\n?```", re.DOTALL)
_TOOL_WORDS: Final = r"(?:tools|tool use|tool calling|tool calls|function calling)"
_REFUSAL: Final = re.compile(
    rf"(?:does not|doesn't|do not|don't|not) support {_TOOL_WORDS}"
    rf"|{_TOOL_WORDS} (?:is|are) not (?:supported|enabled|available)"
    r"|--enable-auto-tool-choice|tools param requires",
    re.IGNORECASE,
)
"""How servers say a model or the server cannot take tools: Ollama's "... does not support
tools", vLLM's "auto" tool choice requires --enable-auto-tool-choice, llama.cpp's "tools param
requires --jinja flag", and the usual "tools are not supported"."""


def refuses_tools(detail: str) -> bool:
    """Whether an API's error text says the model (or its server) cannot take tools."""
    return _REFUSAL.search(detail) is not None


class TextToolFallback(Provider):
    """A provider whose models may refuse tools. A 400 that says so (see :func:`refuses_tools`)
    is remembered per model; that call and every later one of that model with tools go on with
    the tools in text. Subclasses implement the native calls and :meth:`_refusal_text`."""

    def __init__(self, model: str | None = None, **options: Unpack[ProviderOptions]) -> None:
        super().__init__(model, **options)
        self._no_tool_models: set[str] = set()
        """Models that refused tools: their tools are described in text."""

    @abstractmethod
    async def _chat_native(self, request: ChatRequest) -> LLMResponse:
        """One non-streaming call of the API, tools sent natively."""

    @abstractmethod
    def _stream_native(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        """One streaming call of the API, tools sent natively (see ``Provider._stream_once``)."""

    @abstractmethod
    def _refusal_text(self, exc: Exception) -> str | None:
        """The API's words when ``exc`` is its 400 answer to a request, else None."""

    async def _chat_once(self, request: ChatRequest) -> LLMResponse:
        if self._text_tools(request):
            return parse_reply(await self._chat_native(as_text_request(request)))
        try:
            return await self._chat_native(request)
        except Exception as exc:
            if not self._refused_tools(request, exc):
                raise
        return await self._chat_once(request)

    async def _stream_once(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        if not self._text_tools(request):
            try:
                async for event in self._stream_native(request):
                    yield event
                return
            except Exception as exc:
                if not self._refused_tools(request, exc):
                    raise
        # Text tools: the reply is parsed whole, so its tool blocks never show as text.
        reply = await self._chat_once(request)
        if reply.text:
            yield TextDelta(reply.text)
        yield ResponseComplete(reply)

    def forces_tools(self, model: str) -> bool:
        """A model whose tools go in text cannot be forced to call one."""
        return model not in self._no_tool_models

    def _text_tools(self, request: ChatRequest) -> bool:
        return bool(request.tools) and request.model in self._no_tool_models

    def _refused_tools(self, request: ChatRequest, exc: Exception) -> bool:
        """True (and the model remembered) when the server refused tools for this model."""
        detail = self._refusal_text(exc) if request.tools else None
        if detail is None or not refuses_tools(detail):
            return False
        logger.info("%s has no tool support: tools are described in text instead", request.model)
        self._no_tool_models.add(request.model)
        return True


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
    return Message(message.role, (*_joined(blocks), *message.media))


def _joined(blocks: Sequence[TextBlock]) -> list[TextBlock]:
    return [TextBlock("\n\n".join(block.text for block in blocks))] if blocks else []
