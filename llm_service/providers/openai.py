"""OpenAI Chat Completions on the official ``openai`` SDK (imported on first call).

Also serves every OpenAI-compatible endpoint (LM Studio, vLLM, llama.cpp server, ...) through
``base_url``. Tool arguments arrive as JSON strings; malformed ones become a ``ToolCall`` with
``parse_error`` set, which the tool loop feeds back to the model.
"""

from __future__ import annotations

import json
import os
import uuid
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
    from openai import AsyncOpenAI

_FINISH_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}
LOCAL_PLACEHOLDER_KEY = "not-needed"
"""Sent to compatible local servers that were given no key: they ignore it, the SDK needs one."""


class OpenAIProvider(Provider):
    """OpenAI chat models, or any OpenAI-compatible server at ``base_url`` (``http://host:port/v1``)."""

    name = "OpenAI"

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        max_attempts: int = 3,
        backoff_base: float = 1.0,
        timeout: float = 60.0,
        name: str | None = None,
    ) -> None:
        super().__init__(max_attempts=max_attempts, backoff_base=backoff_base)
        self._api_key = api_key
        self.base_url = base_url
        self.timeout = timeout
        if name:
            self.name = name
        self._client: AsyncOpenAI | None = None

    def _sdk(self) -> AsyncOpenAI:
        if self._client is None:
            key = self._api_key or os.environ.get("OPENAI_API_KEY")
            if not key and self.base_url is None:
                raise LLMError(
                    "OpenAI API key is missing: set OPENAI_API_KEY.",
                    code="auth_error",
                    provider=self.name,
                )
            from openai import AsyncOpenAI

            self._client = AsyncOpenAI(
                api_key=key or LOCAL_PLACEHOLDER_KEY,
                base_url=self.base_url,
                max_retries=0,
                timeout=self.timeout,
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    @staticmethod
    def format_tool(spec: ToolSpec) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": spec.name,
                "description": spec.description,
                "parameters": dict(spec.input_schema),
            },
        }

    async def list_models(self) -> list[str]:
        client = self._sdk()
        try:
            page = await client.models.list()
        except Exception as exc:
            raise self._convert_error(exc) from exc
        return sorted(model.id for model in page.data)

    def _params(self, request: ChatRequest) -> dict[str, Any]:
        messages: list[dict[str, Any]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        for message in request.messages:
            messages.extend(_wire_messages(message))
        params: dict[str, Any] = {"model": request.model, "messages": messages}
        # The official API wants max_completion_tokens (reasoning models refuse max_tokens);
        # compatible local servers mostly know only the older max_tokens.
        limit_field = "max_completion_tokens" if self.base_url is None else "max_tokens"
        params[limit_field] = request.max_tokens
        if request.tools:
            params["tools"] = [self.format_tool(t) for t in request.tools]
        if request.tool_choice:
            params["tool_choice"] = {"type": "function", "function": {"name": request.tool_choice}}
        return params

    async def _chat_once(self, request: ChatRequest) -> LLMResponse:
        completion = await self._sdk().chat.completions.create(**self._params(request))
        assembly = _Assembly(
            model=completion.model, request_id=getattr(completion, "_request_id", None)
        )
        if not completion.choices:
            raise LLMError(
                f"{self.name} sent a completion without choices; check that the base URL "
                "points at a chat completions API.",
                code="invalid_response",
                provider=self.name,
            )
        choice = completion.choices[0]
        assembly.text.append(choice.message.content or "")
        for index, call in enumerate(choice.message.tool_calls or []):
            function = getattr(call, "function", None)
            assembly.call(index, call.id, getattr(function, "name", None))
            assembly.calls[index].json = getattr(function, "arguments", "") or ""
        assembly.finish_reason = choice.finish_reason
        assembly.usage = _usage(completion.usage)
        return assembly.response()

    async def _stream_once(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        stream = await self._sdk().chat.completions.create(
            **self._params(request), stream=True, stream_options={"include_usage": True}
        )
        async with stream:
            assembly = _Assembly(request_id=stream.response.headers.get("x-request-id"))
            async for chunk in stream:
                for event in assembly.feed(chunk):
                    yield event
        yield ResponseComplete(assembly.response())

    def _convert_error(self, exc: Exception) -> LLMError:
        import openai

        status: int | None = None
        retry_after = None
        request_id = None
        detail = ""
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            kind, detail = error_details(exc.body)
            code = code_for(status, kind, detail)
            retry_after = parse_retry_after(exc.response.headers)
            request_id = exc.request_id
        elif isinstance(exc, openai.APITimeoutError):
            code = "timeout"
        elif isinstance(exc, openai.APIConnectionError):
            code = transport_code(exc.__cause__ or exc) or "network_error"
        elif isinstance(exc, openai.APIResponseValidationError):
            code = "invalid_response"
        elif isinstance(exc, openai.APIError):  # an error object inside a stream
            kind, detail = error_details(exc.body)
            code = code_for(None, kind, detail or exc.message)
            if code == "unknown":
                code = "server_error"
        else:
            code = transport_code(exc) or "unknown"
        hint = "check OPENAI_API_KEY" if code == "auth_error" else HINTS[code]
        where = f" at {self.base_url}" if self.base_url and code == "network_error" else ""
        return LLMError(
            describe(code, self.name + where, status, detail, hint),
            code=code,
            provider=self.name,
            status=status,
            retry_after=retry_after,
            request_id=request_id,
        )


def _wire_messages(message: Message) -> list[dict[str, Any]]:
    """One of our messages as Chat Completions messages (tool results are one message each)."""
    results = [b for b in message.content if isinstance(b, ToolResultBlock)]
    wire: list[dict[str, Any]] = [
        {
            "role": "tool",
            "tool_call_id": r.tool_call_id,
            "content": f"Error: {r.content}" if r.is_error else r.content,
        }
        for r in results
    ]
    text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
    calls = [b for b in message.content if isinstance(b, ToolCall)]
    if message.role == "assistant":
        entry: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            entry["tool_calls"] = [_wire_call(c) for c in calls]
        wire.append(entry)
    elif text or not results:
        wire.append({"role": "user", "content": text})
    return wire


def _wire_call(call: ToolCall) -> dict[str, Any]:
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
    }


def _usage(raw: Any) -> Usage:
    if raw is None:
        return Usage()
    details = getattr(raw, "prompt_tokens_details", None)
    cached = int(getattr(details, "cached_tokens", 0) or 0)
    return Usage(
        input_tokens=int(raw.prompt_tokens or 0) - cached,
        output_tokens=int(raw.completion_tokens or 0),
        cache_read_tokens=cached,
    )


@dataclass
class _PartialCall:
    id: str
    name: str
    json: str = ""


@dataclass
class _Assembly:
    """Builds one LLMResponse from chat completion chunks (tool calls assembled by index)."""

    model: str = ""
    request_id: str | None = None
    text: list[str] = field(default_factory=list)
    calls: dict[int, _PartialCall] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)

    def call(self, index: int, call_id: str | None, name: str | None) -> _PartialCall:
        if index not in self.calls:
            self.calls[index] = _PartialCall(call_id or f"call_{uuid.uuid4().hex[:12]}", name or "")
        elif name and not self.calls[index].name:
            self.calls[index].name = name
        return self.calls[index]

    def feed(self, chunk: Any) -> list[StreamEvent]:
        self.model = chunk.model or self.model
        if chunk.usage is not None:
            self.usage = _usage(chunk.usage)
        events: list[StreamEvent] = []
        for choice in chunk.choices[:1]:
            delta = choice.delta
            if delta.content:
                self.text.append(delta.content)
                events.append(TextDelta(delta.content))
            for piece in delta.tool_calls or []:
                function = piece.function
                is_new = piece.index not in self.calls
                partial = self.call(piece.index, piece.id, getattr(function, "name", None))
                fragment = getattr(function, "arguments", None) or ""
                partial.json += fragment
                events.append(
                    ToolCallDelta(
                        piece.index,
                        partial.id if is_new else None,
                        partial.name if is_new else None,
                        fragment,
                    )
                )
            self.finish_reason = choice.finish_reason or self.finish_reason
        return events

    def response(self) -> LLMResponse:
        calls = []
        for index in sorted(self.calls):
            partial = self.calls[index]
            arguments, error = parse_tool_arguments(partial.json)
            calls.append(ToolCall(partial.id, partial.name, arguments, error))
        reason = _FINISH_REASONS.get(self.finish_reason or "stop", "end_turn")
        if calls:
            reason = "tool_use"  # some compatible servers say "stop" after tool calls
        return LLMResponse(
            text="".join(self.text),
            tool_calls=calls,
            stop_reason=reason,
            usage=self.usage,
            model=self.model,
            request_id=self.request_id,
        )
