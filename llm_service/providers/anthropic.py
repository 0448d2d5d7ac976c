"""Anthropic Messages API on the official ``anthropic`` SDK (imported on the first call).

* The SDK's own retries are off (``max_retries=0``): the Provider base retries.
* The system prompt and the last tool carry ``cache_control`` so the stable prefix of every call
  is served from Anthropic's prompt cache.
* Streaming reads the raw SSE events (``messages.create(stream=True)``) and assembles them here;
  ``ToolCallDelta.index`` is the call's position among the response's tool calls (0, 1, ...),
  not Anthropic's content-block index.
* Responses that do not follow the API's shapes raise ``invalid_response``; unknown event, block
  and delta types are skipped, as the API's versioning policy asks of clients.
* ``tool_choice``: ``auto``, ``none``, ``required`` (Anthropic's ``any``) and a named tool
  (``tool``). A ``response_format`` is the documented technique for JSON output: one more tool
  whose input schema is the format's, which the model must call; its input comes back as the
  answer's text (streamed as text deltas), never as a tool call.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Self, TypeVar, Unpack

from llm_service.catalog import ModelInfo
from llm_service.connections.anthropic import AnthropicConnection
from llm_service.connections.errors import UnreadableResponse
from llm_service.errors import LLMError
from llm_service.events import ResponseComplete, StreamEvent, TextDelta, ToolCallDelta
from llm_service.images import (
    ANTHROPIC_IMAGES,
    ANTHROPIC_MAX_DOCUMENT_BYTES,
    base64_of,
    document_text,
    fit,
)

# Each provider translates the same message types, so the three import lists match (deliberate).
from llm_service.messages import (
    DocumentBlock,
    ImageBlock,
    LLMResponse,
    Message,
    StopReason,
    TextBlock,
    ToolCall,
    ToolResultBlock,
    ToolSpec,
    Usage,
)
from llm_service.options import ForcedTool, ResponseFormat, ToolChoice
from llm_service.profiles import PROFILES
from llm_service.providers.base import ChatRequest, Provider, ProviderOptions
from llm_service.providers.common import anthropic_tool, parse_tool_arguments, sent_as_is

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

logger = logging.getLogger(__name__)

FieldT = TypeVar("FieldT")


_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
    "pause_turn": "end_turn",
    "model_context_window_exceeded": "max_tokens",  # cut short for length, like max_tokens
}
_EPHEMERAL = {"type": "ephemeral"}


class AnthropicProvider(Provider):
    """Claude models through the Anthropic Messages API."""

    name = PROFILES["anthropic"].label
    kind = "anthropic"
    sdk_module = "anthropic"

    def __init__(
        self,
        api_key: str | None = None,
        model: str | None = None,
        *,
        connection: AnthropicConnection | None = None,
        **options: Unpack[ProviderOptions],
    ) -> None:
        """``AnthropicProvider(key, "claude-haiku-4-5")``: the key (default: ANTHROPIC_API_KEY),
        the default model, then keyword options (``base_url``, ``timeout``, retries); or a
        ``connection=`` shared with other providers (its key, URL and timeout apply)."""
        super().__init__(model, **options)
        if connection is None:
            connection = AnthropicConnection(
                api_key, base_url=self.base_url, timeout=self.timeout, key_hint=self.key_hint
            )
            self._owns_connection = True
        else:
            self._owns_connection = False
            self.base_url, self.timeout = connection.base_url, connection.timeout
        self.connection = connection

    @classmethod
    def build(
        cls, model: str | None, api_key: str | None = None, **options: Unpack[ProviderOptions]
    ) -> Self:
        return cls(api_key, model, **options)

    def _sdk(self) -> AsyncAnthropic:
        return self.connection.client()

    def _warm_client(self) -> None:
        with contextlib.suppress(LLMError):  # no key: the first call says so
            self._sdk()

    async def aclose(self) -> None:
        if self._owns_connection:
            await self.connection.aclose()

    format_tool = staticmethod(anthropic_tool)

    async def _list_models_once(self) -> list[ModelInfo]:
        """The models this key may use, newest first (all pages of GET /v1/models)."""
        return [
            ModelInfo(model.id, getattr(model, "display_name", None))
            async for model in self._sdk().models.list(limit=100)
        ]

    async def _chat_once(self, request: ChatRequest) -> LLMResponse:
        message = await self._sdk().messages.create(**_params(request))
        assembly = _AnthropicAssembly(request.model, getattr(message, "_request_id", None))
        assembly.add_message(message)
        return _answer(assembly.response(), request.response_format)

    async def _stream_once(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        stream = await self._sdk().messages.create(**_params(request), stream=True)
        fmt = request.response_format
        answer = _FormatStream(fmt.name) if fmt is not None else None
        async with stream:
            assembly = _AnthropicAssembly(request.model, stream.response.headers.get("request-id"))
            async for event in stream:
                for out in assembly.feed(event):
                    translated = out if answer is None else answer.translate(out)
                    if translated is not None:
                        yield translated
        yield ResponseComplete(_answer(assembly.response(), fmt))

    def _convert_error(self, exc: Exception) -> LLMError:
        return self.connection.convert_error(exc)


def _params(request: ChatRequest) -> dict[str, Any]:
    params: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": [_wire_message(m) for m in request.messages],
    }
    if request.system:
        params["system"] = [{"type": "text", "text": request.system, "cache_control": _EPHEMERAL}]
    specs, choice = _with_format(request.tools, request.tool_choice, request.response_format)
    if specs:
        tools = [AnthropicProvider.format_tool(t) for t in specs]
        tools[-1]["cache_control"] = _EPHEMERAL
        params["tools"] = tools
    if choice is not None and specs:  # the API takes a tool choice only beside tools
        params["tool_choice"] = _wire_choice(choice)
    # API version 2026-10-21 (SDK 2.x) refuses temperature, top_p and top_k on every model.
    return sent_as_is(params, "messages", "system", "tools")


_FORMAT_TOOL = "Give your answer by calling this tool: its input is the whole answer."


def _with_format(
    tools: list[ToolSpec], choice: ToolChoice | None, fmt: ResponseFormat | None
) -> tuple[list[ToolSpec], ToolChoice | None]:
    """The tools and tool choice of a request: with a response format, its tool is added and a
    call forced (any tool when the request has others the model may call first)."""
    if fmt is None:
        return tools, choice
    schema = fmt.schema or {"type": "object"}
    specs = [*tools, ToolSpec(fmt.name, _FORMAT_TOOL, schema)]
    if isinstance(choice, ForcedTool):
        return specs, choice
    return specs, "required" if tools and choice != "none" else ForcedTool(fmt.name)


def _wire_choice(choice: ToolChoice) -> dict[str, Any]:
    if isinstance(choice, ForcedTool):
        return {"type": "tool", "name": choice.name}
    return {"type": "any" if choice == "required" else choice}


def _answer(response: LLMResponse, fmt: ResponseFormat | None) -> LLMResponse:
    """``response`` with its call of the format's tool (if any) as the answer's JSON text."""
    if fmt is None:
        return response
    answers = [call for call in response.tool_calls if call.name == fmt.name]
    if not answers:
        return response
    others = [call for call in response.tool_calls if call.name != fmt.name]
    text = json.dumps(answers[0].arguments, ensure_ascii=False)
    return replace(
        response,
        text=text,
        tool_calls=others,
        stop_reason="tool_use" if others else "end_turn",
    )


@dataclass
class _FormatStream:
    """Streamed events with the format tool's input JSON as text deltas; the other calls keep
    their order, numbered without it."""

    name: str
    answers: set[int] = field(default_factory=set)

    def translate(self, event: StreamEvent) -> StreamEvent | None:
        if not isinstance(event, ToolCallDelta):
            return event
        if event.name == self.name:
            self.answers.add(event.index)
        if event.index in self.answers:
            return TextDelta(event.arguments_delta) if event.arguments_delta else None
        before = sum(1 for index in self.answers if index < event.index)
        return replace(event, index=event.index - before)


def _wire_message(message: Message) -> dict[str, Any]:
    """Our blocks as Anthropic content blocks; empty text is dropped (the API refuses it)."""
    content: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            if block.text:
                content.append({"type": "text", "text": block.text})
        elif isinstance(block, ToolCall):
            content.append(
                {"type": "tool_use", "id": block.id, "name": block.name, "input": block.arguments}
            )
        elif isinstance(block, ToolResultBlock):
            content.append(
                {
                    "type": "tool_result",
                    "tool_use_id": block.tool_call_id,
                    "content": block.content,
                    "is_error": block.is_error,
                }
            )
        elif isinstance(block, ImageBlock):
            image = fit(block, ANTHROPIC_IMAGES)
            source = {
                "type": "base64",
                "media_type": image.media_type,
                "data": base64_of(image.data),
            }
            content.append({"type": "image", "source": source})
        elif not isinstance(block, DocumentBlock):
            continue
        elif len(block.data) <= ANTHROPIC_MAX_DOCUMENT_BYTES:
            source = {
                "type": "base64",
                "media_type": block.media_type,
                "data": base64_of(block.data),
            }
            document = {"type": "document", "source": source}
            content.append(document | ({"title": block.name} if block.name else {}))
        else:
            content.append({"type": "text", "text": document_text(block)})
    return {"role": message.role, "content": content}


def _source(media_type: str, data: bytes) -> dict[str, str]:
    return {"type": "base64", "media_type": media_type, "data": base64_of(data)}


def _usage(raw: object, base: Usage | None = None) -> Usage:
    """Usage from an API usage object; fields it lacks keep ``base``'s (message_delta is
    cumulative: it replaces, never adds)."""
    base = base or Usage()

    def pick(name: str, current: int) -> int:
        value = getattr(raw, name, None)
        return value if isinstance(value, int) else current

    return Usage(
        input_tokens=pick("input_tokens", base.input_tokens),
        output_tokens=pick("output_tokens", base.output_tokens),
        cache_read_tokens=pick("cache_read_input_tokens", base.cache_read_tokens),
        cache_write_tokens=pick("cache_creation_input_tokens", base.cache_write_tokens),
    )


@dataclass
class _AnthropicPartialCall:
    id: str
    name: str
    ordinal: int
    start_input: object
    json: str = ""

    def finish(self) -> ToolCall:
        raw = self.json if self.json.strip() else self.start_input
        if not (raw is None or isinstance(raw, (str, dict))):
            raw = json.dumps(raw)
        arguments, error = parse_tool_arguments(raw)
        return ToolCall(self.id, self.name, arguments, error)


@dataclass
class _AnthropicAssembly:
    """Builds one LLMResponse from raw Messages API events, or from a whole message."""

    model: str
    request_id: str | None
    texts: list[str] = field(default_factory=list)
    blocks: set[int] = field(default_factory=set)
    pending: dict[int, _AnthropicPartialCall] = field(default_factory=dict)
    calls: dict[int, ToolCall] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    stop_reason: str | None = None
    complete: bool = False

    def feed(self, event: object) -> list[StreamEvent]:
        kind = getattr(event, "type", None)
        if kind == "message_start":
            self._begin(self._field(event, "message", object))
        elif kind == "content_block_start":
            block = self._field(event, "content_block", object)
            return self._start_block(self._field(event, "index", int), block)
        elif kind == "content_block_delta":
            delta = self._field(event, "delta", object)
            return self._delta(self._field(event, "index", int), delta)
        elif kind == "content_block_stop":
            self._stop_block(self._field(event, "index", int))
        elif kind == "message_delta":
            delta = self._field(event, "delta", object)
            self.stop_reason = self._optional(delta, "stop_reason", str) or self.stop_reason
            self.usage = _usage(getattr(event, "usage", None), self.usage)
        elif kind == "message_stop":
            self.complete = True
        else:
            logger.debug("skipping Anthropic stream event of type %r", kind)
        return []

    def add_message(self, message: object) -> None:
        """A whole (non-streamed) message."""
        if isinstance(message, str):  # the SDK hands back bodies that are not JSON as text
            raise self._unreadable("the response body is not JSON")
        self._begin(message)
        for index, block in enumerate(self._field(message, "content", list)):
            self._start_block(index, block)
            self._stop_block(index)
        self.stop_reason = self._optional(message, "stop_reason", str)
        self.complete = True

    def response(self) -> LLMResponse:
        if not self.complete:
            raise self._unreadable("the stream ended before message_stop")
        if self.stop_reason is None:
            raise self._unreadable("the message has no stop_reason")
        for index in list(self.pending):
            self._stop_block(index)
        reason = _STOP_REASONS.get(self.stop_reason)
        if reason is None:
            logger.debug("unknown Anthropic stop_reason %r treated as end_turn", self.stop_reason)
            reason = "end_turn"
        return LLMResponse(
            text="".join(self.texts),
            tool_calls=[self.calls[i] for i in sorted(self.calls)],
            stop_reason=reason,
            usage=self.usage,
            model=self.model,
            request_id=self.request_id,
        )

    def _begin(self, message: object) -> None:
        self.model = self._optional(message, "model", str) or self.model
        self.usage = _usage(getattr(message, "usage", None))

    def _start_block(self, index: int, block: object) -> list[StreamEvent]:
        kind = self._field(block, "type", str)
        self.blocks.add(index)
        if kind == "text":
            return self._text(self._field(block, "text", str))
        if kind == "tool_use":
            ordinal = len(self.pending) + len(self.calls)
            call_id, name = self._field(block, "id", str), self._field(block, "name", str)
            self.pending[index] = _AnthropicPartialCall(
                call_id, name, ordinal, getattr(block, "input", None)
            )
            return [ToolCallDelta(ordinal, call_id, name, "")]
        return []

    def _delta(self, index: int, delta: object) -> list[StreamEvent]:
        if index not in self.blocks:
            raise self._unreadable(f"content block {index} got a delta before it started")
        kind = self._field(delta, "type", str)
        if kind == "text_delta":
            return self._text(self._field(delta, "text", str))
        if kind == "input_json_delta" and index in self.pending:
            part = self._field(delta, "partial_json", str)
            call = self.pending[index]
            call.json += part
            return [ToolCallDelta(call.ordinal, arguments_delta=part)] if part else []
        return []

    def _stop_block(self, index: int) -> None:
        call = self.pending.pop(index, None)
        if call is not None:
            self.calls[call.ordinal] = call.finish()

    def _text(self, text: str) -> list[StreamEvent]:
        if not text:
            return []
        self.texts.append(text)
        return [TextDelta(text)]

    def _field(self, obj: object, name: str, kind: type[FieldT]) -> FieldT:
        value = self._optional(obj, name, kind)
        if value is None:
            raise self._unreadable(f"{type(obj).__name__}.{name} is missing")
        return value

    def _optional(self, obj: object, name: str, kind: type[FieldT]) -> FieldT | None:
        value = getattr(obj, name, None)
        if value is None:
            return None
        if not isinstance(value, kind):
            raise self._unreadable(f"{type(obj).__name__}.{name} is not a {kind.__name__}")
        return value

    def _unreadable(self, detail: str) -> UnreadableResponse:
        return UnreadableResponse(detail, self.request_id)
