"""Ollama's native ``/api/chat`` over httpx (imported on first call), streaming NDJSON.

Wire facts this module translates (Ollama's docs/api.md and server/routes.go):

* Tool-call arguments arrive as JSON objects, whole, one or more calls per NDJSON line. Older
  servers send no call ids (we make ``call_<uuid hex>`` ones); newer ones send ``id`` and we
  keep it. Tool results go back as ``{"role": "tool", "tool_name": ...}`` messages.
* ``done_reason`` is ``"stop"`` even after tool calls (we report ``tool_use``); ``"length"``
  means the ``num_predict`` cap was hit (``max_tokens``).
* Errors are ``{"error": "<text>"}``, as an HTTP error body or as a line in the middle of a
  200 stream. Ollama has no tool_choice field, so a forced tool call is not sent
  (:meth:`OllamaProvider.forces_tools` says so); ``"none"`` sends no tools. A response format
  is Ollama's ``format``: ``"json"``, or the JSON Schema. It has no request ids and no
  prompt-cache counters either.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Unpack

from llm_service import lazy
from llm_service.catalog import ModelInfo
from llm_service.connections.ollama import (
    OllamaConnection,
    OllamaError,
    OllamaResponseError,
    decode_json,
)
from llm_service.errors import LLMError
from llm_service.events import ResponseComplete, StreamEvent, TextDelta, ToolCallDelta
from llm_service.images import OLLAMA_IMAGES, base64_of, document_text, fit

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
    Usage,
)
from llm_service.profiles import PROFILES
from llm_service.providers.base import ChatRequest, ProviderOptions
from llm_service.providers.common import count, function_tool, parse_tool_arguments
from llm_service.providers.text_tools import TextToolFallback

if TYPE_CHECKING:
    import httpx
else:
    httpx = lazy.module("httpx")


class OllamaProvider(TextToolFallback):
    """Local models served by Ollama. ``tool_choice`` has no Ollama equivalent and is not sent."""

    name = PROFILES["ollama"].label
    kind = "ollama"
    sdk_module = "httpx"
    default_timeout = 120.0  # a model may have to load first

    def __init__(
        self,
        *,
        model: str | None = None,
        connection: OllamaConnection | None = None,
        **options: Unpack[ProviderOptions],
    ) -> None:
        """``OllamaProvider(model="llama3.1", base_url=...)``: keywords only (a URL can never
        be taken for a model name); ``base_url`` defaults to the local Ollama. Or a
        ``connection=`` shared with an embedder (its URL and timeout apply)."""
        super().__init__(model, **options)
        if connection is None:
            connection = OllamaConnection(self.base_url, timeout=self.timeout)
            self._owns_connection = True
        else:
            self._owns_connection = False
        self.connection = connection
        self.base_url: str = connection.base_url
        self.timeout = connection.timeout
        self._sees: dict[str, bool] = {}
        """Per model, whether ``/api/show`` listed ``vision`` (asked once)."""

    def _http(self) -> httpx.AsyncClient:
        return self.connection.http()

    async def aclose(self) -> None:
        """Close the pooled HTTP connections (of a connection of its own); the next call opens
        new ones."""
        if self._owns_connection:
            await self.connection.aclose()

    def _convert_error(self, exc: Exception) -> LLMError:
        return self.connection.convert_error(exc)

    format_tool = staticmethod(function_tool)

    async def _list_models_once(self) -> list[ModelInfo]:
        """The models pulled into this Ollama (``GET /api/tags``), each with what
        ``/api/show`` says of it."""
        return [await self._shown(name) for name in await self._tags()]

    async def list_model_ids(self) -> list[str]:
        """The names of the models pulled into this Ollama (``GET /api/tags`` alone)."""
        return await self._with_retries(lambda: self._translated(self._tags()))

    async def _tags(self) -> list[str]:
        response = await self._http().get("/api/tags")
        models = decode_json(response.status_code, response.content, response.headers).get("models")
        if not isinstance(models, list):
            raise OllamaResponseError("/api/tags has no model list")
        return [m["name"] for m in models if isinstance(m, dict) and m.get("name")]

    async def _shown(self, model: str) -> ModelInfo:
        """``model`` with its tool support (``capabilities``, Ollama 0.6.4 and later) and
        context length (``model_info``) from ``/api/show``; unknown where it does not say. A
        model without tools gets them in text from its first call on, with no refused call."""
        try:
            response = await self._http().post("/api/show", json={"model": model})
            shown = decode_json(response.status_code, response.content)
        except (OllamaError, OllamaResponseError, httpx.HTTPError):
            return ModelInfo(model)
        capabilities = shown.get("capabilities")
        listed = capabilities if isinstance(capabilities, list) else None
        tools = None if listed is None else "tools" in listed
        images = None if listed is None else "vision" in listed
        if tools is False:
            self._no_tool_models.add(model)
        self._sees[model] = bool(images)
        details = shown.get("model_info")
        lengths = details.items() if isinstance(details, dict) else []
        context = next(
            (v for k, v in lengths if k.endswith(".context_length") and isinstance(v, int)), None
        )
        embedding = "embedding" in capabilities if isinstance(capabilities, list) else None
        return ModelInfo(
            model,
            context_window=context,
            supports_tools=tools,
            supports_images=images,
            embedding=embedding,
        )

    async def sees_images(self, model: str) -> bool:
        """Whether ``model`` has ``vision`` among its capabilities (``/api/show``, asked once
        per model); a model that does not say is taken as text-only."""
        if model not in self._sees:
            await self._shown(model)
        return self._sees.get(model, False)

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
        if request.temperature is not None:
            body["options"]["temperature"] = request.temperature
        if request.tools and request.tool_choice != "none":
            body["tools"] = [self.format_tool(t) for t in request.tools]
        fmt = request.response_format
        if fmt is not None:
            body["format"] = "json" if fmt.schema is None else fmt.schema
        return body

    def forces_tools(self, model: str) -> bool:
        """Ollama's API has no field that forces a tool call."""
        return False

    def _refusal_text(self, exc: Exception) -> str | None:
        return exc.detail if isinstance(exc, OllamaError) and exc.status == 400 else None

    async def _chat_native(self, request: ChatRequest) -> LLMResponse:
        response = await self._http().post("/api/chat", json=self._body(request, stream=False))
        assembly = _OllamaAssembly()
        assembly.feed(decode_json(response.status_code, response.content, response.headers))
        return assembly.response()

    async def _stream_native(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        body = self._body(request, stream=True)
        async with self._http().stream("POST", "/api/chat", json=body) as response:
            if response.status_code >= 400:
                decode_json(response.status_code, await response.aread(), response.headers)
            assembly = _OllamaAssembly()
            async for line in response.aiter_lines():
                if line.strip():
                    for event in assembly.feed(decode_json(200, line.encode())):
                        yield event
        yield ResponseComplete(assembly.response())


def _wire_messages(message: Message, names: dict[str, str]) -> list[dict[str, Any]]:
    """One of our messages as Ollama messages: tool results become one ``tool`` message each."""
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
    elif message.media:
        documents = [document_text(b) for b in message.media if isinstance(b, DocumentBlock)]
        images = [
            base64_of(fit(b, OLLAMA_IMAGES).data)
            for b in message.media
            if isinstance(b, ImageBlock)
        ]
        entry = {"role": "user", "content": "\n\n".join([text, *documents]).strip()}
        wire.append(entry | ({"images": images} if images else {}))
    elif text or not results:
        wire.append({"role": "user", "content": text})
    return wire


def _tool_call(raw: object, index: int) -> tuple[ToolCall, ToolCallDelta]:
    """A wire tool call as a ToolCall and the one delta that carries it whole."""
    if not isinstance(raw, dict) or not isinstance(raw.get("function"), dict):
        raise OllamaResponseError("a tool call has no function")
    function: dict[str, Any] = raw["function"]
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise OllamaResponseError("a tool call has no function name")
    wire_args = function.get("arguments")
    if wire_args is None or isinstance(wire_args, (str, dict)):
        arguments, error = parse_tool_arguments(wire_args)
    else:
        arguments, error = {}, f"arguments must be a JSON object, got {type(wire_args).__name__}"
    wire_id = raw.get("id")
    call_id = wire_id if isinstance(wire_id, str) and wire_id else f"call_{uuid.uuid4().hex}"
    call = ToolCall(call_id, name, arguments, error)
    delta = wire_args if isinstance(wire_args, str) else json.dumps(arguments, ensure_ascii=False)
    return call, ToolCallDelta(index, call.id, call.name, delta)


@dataclass
class _OllamaAssembly:
    """Builds one LLMResponse from Ollama's JSON objects (one, or one per NDJSON line)."""

    text: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    done_reason: object = None
    done: bool = False
    model: str = ""
    usage: Usage = field(default_factory=Usage)

    def feed(self, line: dict[str, Any]) -> list[StreamEvent]:
        """Take in one object; return the events it carries."""
        events: list[StreamEvent] = []
        if isinstance(line.get("model"), str):
            self.model = line["model"]
        message = line.get("message") or {}
        if not isinstance(message, dict):
            raise OllamaResponseError("`message` is not an object")
        content = message.get("content") or ""
        calls = message.get("tool_calls") or []
        if not isinstance(content, str) or not isinstance(calls, list):
            raise OllamaResponseError("`message` has a malformed content or tool_calls field")
        if content:
            self.text.append(content)
            events.append(TextDelta(content))
        for raw in calls:
            call, delta = _tool_call(raw, len(self.calls))
            self.calls.append(call)
            events.append(delta)
        if line.get("done") is True:
            self.done = True
            self.done_reason = line.get("done_reason")
            self.usage = Usage(count(line.get("prompt_eval_count")), count(line.get("eval_count")))
        return events

    def response(self) -> LLMResponse:
        """The whole response; raises if Ollama never sent its ``done`` line."""
        if not self.done:
            raise OllamaResponseError("the stream ended before its final `done` line")
        reason: StopReason = "max_tokens" if self.done_reason == "length" else "end_turn"
        return LLMResponse(
            text="".join(self.text),
            tool_calls=self.calls,
            stop_reason="tool_use" if self.calls else reason,
            usage=self.usage,
            model=self.model,
        )
