"""Ollama's native ``/api/chat`` over httpx (imported on first call), streaming NDJSON.

Ollama sends tool-call arguments as objects, gives tool calls no ids (we make them), reports
``done_reason: "stop"`` even after tool calls (we say ``tool_use``), and may put an
``{"error": ...}`` line in the middle of a stream (we raise it as an LLMError).
"""

from __future__ import annotations

import json
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
    import httpx

DEFAULT_BASE_URL = "http://127.0.0.1:11434"


class OllamaError(Exception):
    """An error Ollama (or a proxy before it) reported, before conversion to LLMError."""

    def __init__(
        self,
        message: str,
        status: int | None = None,
        *,
        kind: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.retry_after = retry_after


class OllamaProvider(Provider):
    """Local models served by Ollama. ``tool_choice`` has no Ollama equivalent and is not sent."""

    name = "Ollama"

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        *,
        max_attempts: int = 3,
        backoff_base: float = 1.0,
        timeout: float = 120.0,
    ) -> None:
        super().__init__(max_attempts=max_attempts, backoff_base=backoff_base)
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self._client: httpx.AsyncClient | None = None

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            import httpx

            self._client = httpx.AsyncClient(base_url=self.base_url, timeout=self.timeout)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
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
        try:
            response = await self._http().get("/api/tags")
            body = _checked(response.status_code, response.content, response.headers)
        except Exception as exc:
            raise self._convert_error(exc) from exc
        return [str(m.get("name")) for m in body.get("models", []) if m.get("name")]

    def _body(self, request: ChatRequest, *, stream: bool) -> dict[str, Any]:
        names = {
            b.id: b.name for m in request.messages for b in m.content if isinstance(b, ToolCall)
        }
        messages: list[dict[str, Any]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        for message in request.messages:
            messages.extend(_wire_messages(message, names))
        body: dict[str, Any] = {
            "model": request.model,
            "messages": messages,
            "stream": stream,
            "options": {"num_predict": request.max_tokens},
        }
        if request.tools:
            body["tools"] = [self.format_tool(t) for t in request.tools]
        return body

    async def _chat_once(self, request: ChatRequest) -> LLMResponse:
        response = await self._http().post("/api/chat", json=self._body(request, stream=False))
        assembly = _Assembly()
        assembly.feed(_checked(response.status_code, response.content, response.headers))
        return assembly.response()

    async def _stream_once(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        body = self._body(request, stream=True)
        async with self._http().stream("POST", "/api/chat", json=body) as response:
            if response.status_code >= 400:
                _checked(response.status_code, await response.aread(), response.headers)
            assembly = _Assembly()
            async for line in response.aiter_lines():
                if line.strip():
                    for event in assembly.feed(_checked(200, line.encode())):
                        yield event
        yield ResponseComplete(assembly.response())

    def _convert_error(self, exc: Exception) -> LLMError:
        if isinstance(exc, OllamaError):
            text = str(exc)
            code = code_for(exc.status, exc.kind, text)
            if code == "unknown":
                code = "server_error"
            hint = HINTS[code]
            if "not found" in text and "model" in text:
                hint = "pull the model first with `ollama pull <model>`"
            return LLMError(
                describe(code, self.name, exc.status, text, hint),
                code=code,
                provider=self.name,
                status=exc.status,
                retry_after=exc.retry_after,
            )
        code = transport_code(exc) or "unknown"
        if code == "network_error":
            message = f"Ollama is not reachable at {self.base_url}: start it with `ollama serve`."
        else:
            message = describe(code, self.name, None, "", HINTS[code])
        return LLMError(message, code=code, provider=self.name)


def _checked(status: int, raw: bytes, headers: object = None) -> dict[str, Any]:
    """One JSON object from Ollama, or the error it carries raised as OllamaError."""
    retry_after = parse_retry_after(headers)
    try:
        value = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        if status >= 400:
            text = raw.decode(errors="replace")[:200]
            raise OllamaError(text, status, retry_after=retry_after) from exc
        raise
    if not isinstance(value, dict):
        raise json.JSONDecodeError("expected a JSON object", raw.decode(errors="replace"), 0)
    if "error" in value:
        kind, detail = error_details(value)
        code_status = status if status >= 400 else None
        raise OllamaError(detail, code_status, kind=kind, retry_after=retry_after)
    if status >= 400:
        raise OllamaError(f"HTTP {status}", status, retry_after=retry_after)
    return value


def _wire_messages(message: Message, names: dict[str, str]) -> list[dict[str, Any]]:
    results = [b for b in message.content if isinstance(b, ToolResultBlock)]
    wire: list[dict[str, Any]] = [
        {
            "role": "tool",
            "content": f"Error: {r.content}" if r.is_error else r.content,
            "tool_name": names.get(r.tool_call_id, ""),
        }
        for r in results
    ]
    text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
    calls = [b for b in message.content if isinstance(b, ToolCall)]
    if message.role == "assistant":
        entry: dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            entry["tool_calls"] = [
                {"function": {"name": c.name, "arguments": c.arguments}} for c in calls
            ]
        wire.append(entry)
    elif text or not results:
        wire.append({"role": "user", "content": text})
    return wire


@dataclass
class _Assembly:
    """Builds one LLMResponse from Ollama's NDJSON objects."""

    text: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    done_reason: str | None = None
    done: bool = False
    model: str = ""
    usage: Usage = field(default_factory=Usage)

    def feed(self, line: dict[str, Any]) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        self.model = str(line.get("model") or self.model)
        message = line.get("message") or {}
        content = message.get("content") or ""
        if content:
            self.text.append(content)
            events.append(TextDelta(content))
        for raw in message.get("tool_calls") or []:
            function = raw.get("function") or {}
            arguments, error = parse_tool_arguments(function.get("arguments"))
            call_id = str(raw.get("id") or f"call_{uuid.uuid4().hex[:12]}")
            call = ToolCall(call_id, str(function.get("name") or ""), arguments, error)
            events.append(ToolCallDelta(len(self.calls), call.id, call.name, json.dumps(arguments)))
            self.calls.append(call)
        if line.get("done"):
            self.done = True
            self.done_reason = line.get("done_reason")
            self.usage = Usage(
                int(line.get("prompt_eval_count") or 0), int(line.get("eval_count") or 0)
            )
        return events

    def response(self) -> LLMResponse:
        if not self.done:
            raise LLMError(
                "Ollama ended the response early; send the message again.",
                code="invalid_response",
                provider="Ollama",
            )
        reason: StopReason = "max_tokens" if self.done_reason == "length" else "end_turn"
        return LLMResponse(
            text="".join(self.text),
            tool_calls=self.calls,
            stop_reason="tool_use" if self.calls else reason,
            usage=self.usage,
            model=self.model,
        )
