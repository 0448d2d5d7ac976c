"""Anthropic Messages API on the official ``anthropic`` SDK (imported on first call).

The SDK's own retries are off (``max_retries=0``): the Provider base retries. The system prompt and
the tool list carry ``cache_control`` so the stable prefix of every call is cached.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from llm_service.errors import LLMError, parse_retry_after
from llm_service.events import ResponseComplete, StreamEvent, TextDelta, ToolCallDelta
from llm_service.messages import (
    LLMResponse,
    Message,
    StopReason,
    TextBlock,
    ToolCall,
    ToolResultBlock,
    ToolSpec,
    Usage,
)
from llm_service.providers.base import ChatRequest, Provider
from llm_service.providers.common import (
    HINTS,
    code_for,
    describe,
    error_details,
    parse_tool_arguments,
    transport_code,
)

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

logger = logging.getLogger("llm_service.providers.anthropic")

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
    "pause_turn": "end_turn",
}
_EPHEMERAL = {"type": "ephemeral"}


class AnthropicProvider(Provider):
    """Claude models through the Anthropic Messages API."""

    name = "Anthropic"

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        max_attempts: int = 3,
        backoff_base: float = 1.0,
        timeout: float = 60.0,
    ) -> None:
        super().__init__(max_attempts=max_attempts, backoff_base=backoff_base)
        self._api_key = api_key
        self.base_url = base_url
        self.timeout = timeout
        self._client: AsyncAnthropic | None = None

    def _sdk(self) -> AsyncAnthropic:
        if self._client is None:
            key = self._api_key or os.environ.get("ANTHROPIC_API_KEY")
            if not key:
                raise LLMError(
                    "Anthropic API key is missing: set ANTHROPIC_API_KEY.",
                    code="auth_error",
                    provider=self.name,
                )
            from anthropic import AsyncAnthropic

            self._client = AsyncAnthropic(
                api_key=key, base_url=self.base_url, max_retries=0, timeout=self.timeout
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    @staticmethod
    def format_tool(spec: ToolSpec) -> dict[str, Any]:
        return {
            "name": spec.name,
            "description": spec.description,
            "input_schema": dict(spec.input_schema),
        }

    async def list_models(self) -> list[str]:
        client = self._sdk()
        try:
            page = await client.models.list(limit=100)
        except Exception as exc:
            raise self._convert_error(exc) from exc
        return [model.id for model in page.data]

    async def _chat_once(self, request: ChatRequest) -> LLMResponse:
        message = await self._sdk().messages.create(**_params(request))
        assembly = _Assembly(model=message.model, request_id=getattr(message, "_request_id", None))
        assembly.usage = _usage(message.usage)
        assembly.stop_reason = message.stop_reason
        for index, block in enumerate(message.content):
            if block.type == "text":
                assembly.texts.append(block.text)
            elif block.type == "tool_use":
                assembly.calls[index] = _PartialCall(block.id, block.name, dict(block.input))
        return assembly.response()

    async def _stream_once(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        stream = await self._sdk().messages.create(**_params(request), stream=True)
        async with stream:
            assembly = _Assembly(request_id=stream.response.headers.get("request-id"))
            async for event in stream:
                for out in assembly.feed(event):
                    yield out
        yield ResponseComplete(assembly.response())

    def _convert_error(self, exc: Exception) -> LLMError:
        import anthropic

        if isinstance(exc, anthropic.APIStatusError):
            kind, detail = error_details(exc.body)
            status = exc.status_code if exc.status_code >= 400 else None
            code = code_for(status, kind, detail)
            if code == "unknown" and status is None:
                code = "server_error"  # an error event inside a 200 stream
            hint = "check ANTHROPIC_API_KEY" if code == "auth_error" else HINTS[code]
            retry_after = parse_retry_after(exc.response.headers)
            return LLMError(
                describe(code, self.name, exc.status_code, detail, hint),
                code=code,
                provider=self.name,
                status=exc.status_code,
                retry_after=retry_after,
                request_id=exc.request_id,
            )
        if isinstance(exc, anthropic.APITimeoutError):
            code = "timeout"
        elif isinstance(exc, anthropic.APIConnectionError):
            code = transport_code(exc.__cause__ or exc) or "network_error"
        elif isinstance(exc, anthropic.APIResponseValidationError):
            code = "invalid_response"
        else:
            code = transport_code(exc) or "unknown"
        where = f" at {self.base_url}" if self.base_url and code == "network_error" else ""
        return LLMError(
            describe(code, self.name + where, None, "", HINTS[code]), code=code, provider=self.name
        )


def _params(request: ChatRequest) -> dict[str, Any]:
    params: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": [_wire_message(m) for m in request.messages],
    }
    if request.system:
        params["system"] = [{"type": "text", "text": request.system, "cache_control": _EPHEMERAL}]
    if request.tools:
        tools = [AnthropicProvider.format_tool(t) for t in request.tools]
        tools[-1]["cache_control"] = _EPHEMERAL
        params["tools"] = tools
    if request.tool_choice:
        params["tool_choice"] = {"type": "tool", "name": request.tool_choice}
    return params


def _wire_message(message: Message) -> dict[str, Any]:
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
    return {"role": message.role, "content": content}


def _usage(raw: Any, base: Usage | None = None) -> Usage:
    """Usage from an API usage object; fields it lacks keep ``base``'s (message_delta is
    cumulative: it replaces, never adds)."""
    base = base or Usage()

    def pick(name: str, current: int) -> int:
        value = getattr(raw, name, None)
        return current if value is None else int(value)

    return Usage(
        input_tokens=pick("input_tokens", base.input_tokens),
        output_tokens=pick("output_tokens", base.output_tokens),
        cache_read_tokens=pick("cache_read_input_tokens", base.cache_read_tokens),
        cache_write_tokens=pick("cache_creation_input_tokens", base.cache_write_tokens),
    )


@dataclass
class _PartialCall:
    id: str
    name: str
    arguments: dict[str, Any] | None = None
    json: str = ""

    def finish(self) -> ToolCall:
        if self.arguments is not None:
            return ToolCall(self.id, self.name, self.arguments)
        arguments, error = parse_tool_arguments(self.json)
        return ToolCall(self.id, self.name, arguments, error)


@dataclass
class _Assembly:
    """Builds one LLMResponse from a stream of raw Messages API events."""

    model: str = ""
    request_id: str | None = None
    texts: list[str] = field(default_factory=list)
    calls: dict[int, _PartialCall] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    stop_reason: str | None = None

    def feed(self, event: Any) -> list[StreamEvent]:
        kind = event.type
        if kind == "message_start":
            self.model = event.message.model
            self.usage = _usage(event.message.usage)
        elif kind == "content_block_start" and event.content_block.type == "tool_use":
            block = event.content_block
            self.calls[event.index] = _PartialCall(block.id, block.name)
            return [ToolCallDelta(event.index, block.id, block.name, "")]
        elif kind == "content_block_start" and event.content_block.type == "text":
            if event.content_block.text:
                self.texts.append(event.content_block.text)
                return [TextDelta(event.content_block.text)]
        elif kind == "content_block_delta":
            return self._delta(event.index, event.delta)
        elif kind == "message_delta":
            self.stop_reason = event.delta.stop_reason or self.stop_reason
            self.usage = _usage(event.usage, self.usage)
        return []

    def _delta(self, index: int, delta: Any) -> list[StreamEvent]:
        if delta.type == "text_delta":
            self.texts.append(delta.text)
            return [TextDelta(delta.text)]
        if delta.type == "input_json_delta" and index in self.calls:
            self.calls[index].json += delta.partial_json
            return [ToolCallDelta(index, arguments_delta=delta.partial_json)]
        return []

    def response(self) -> LLMResponse:
        if self.stop_reason is None:
            raise LLMError(
                "Anthropic ended the response without a stop reason; send the message again.",
                code="invalid_response",
                provider="Anthropic",
                request_id=self.request_id,
            )
        reason = _STOP_REASONS.get(self.stop_reason)
        if reason is None:
            logger.debug("unknown Anthropic stop_reason %r treated as end_turn", self.stop_reason)
            reason = "end_turn"
        return LLMResponse(
            text="".join(self.texts),
            tool_calls=[self.calls[i].finish() for i in sorted(self.calls)],
            stop_reason=reason,
            usage=self.usage,
            model=self.model,
            request_id=self.request_id,
        )
