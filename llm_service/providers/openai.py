"""OpenAI Chat Completions on the official ``openai`` SDK (imported on first call).

Also serves every OpenAI-compatible endpoint (LM Studio, vLLM, llama.cpp server, ...) through
``base_url``; a server that refuses tools for a model (vLLM without --enable-auto-tool-choice,
llama.cpp without --jinja) gets them in text from then on (text_tools.py). Tool arguments
arrive as JSON strings; malformed ones become a ``ToolCall`` with ``parse_error`` set, which the
tool loop feeds back to the model.

Replies are read defensively: the SDK does not validate responses (a missing field is ``None``,
a non-JSON body comes back as ``str``) and compatible servers leave out fields the official API
always sends, so what cannot be read becomes an ``invalid_response`` error, never a crash.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import AsyncGenerator, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Self, Unpack

from llm_service import lazy
from llm_service.catalog import ModelInfo
from llm_service.connections.errors import UnreadableResponse, error_details
from llm_service.connections.openai import OpenAIConnection
from llm_service.errors import LLMError
from llm_service.events import ResponseComplete, StreamEvent, TextDelta, ToolCallDelta
from llm_service.images import OPENAI_IMAGES, data_url, document_text, fit

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
from llm_service.options import ForcedTool, ResponseFormat
from llm_service.profiles import PROFILES
from llm_service.providers.base import ChatRequest, ProviderOptions
from llm_service.providers.common import (
    count,
    function_tool,
    parse_tool_arguments,
    sent_as_is,
    sse_data,
)
from llm_service.providers.text_tools import TextToolFallback

if TYPE_CHECKING:
    import openai
    from openai import AsyncOpenAI
else:
    openai = lazy.module("openai")

_FINISH_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


class OpenAIProvider(TextToolFallback):
    """OpenAI chat models, or any OpenAI-compatible server at ``base_url`` (``http://host:port/v1``)."""

    name = PROFILES["openai"].label
    kind = "openai"
    sdk_module = "openai"

    def __init__(
        self,
        api_key: str | None = None,
        model: str | None = None,
        *,
        name: str | None = None,
        connection: OpenAIConnection | None = None,
        **options: Unpack[ProviderOptions],
    ) -> None:
        """``OpenAIProvider(key, "gpt-5-mini")``: the key (default: OPENAI_API_KEY; none needed
        with a local ``base_url``), the default model, then keyword options; ``name`` names a
        compatible server in messages ("LM Studio"). Or a ``connection=`` shared with an
        embedder or other providers (its key, URL, timeout and name apply)."""
        super().__init__(model, **options)
        if connection is None:
            connection = OpenAIConnection(
                api_key,
                base_url=self.base_url,
                timeout=self.timeout,
                name=name,
                key_hint=self.key_hint,
            )
            self._owns_connection = True
        else:
            self._owns_connection = False
            self.base_url, self.timeout = connection.base_url, connection.timeout
        self.connection = connection
        self.name = connection.name

    @classmethod
    def build(
        cls, model: str | None, api_key: str | None = None, **options: Unpack[ProviderOptions]
    ) -> Self:
        return cls(api_key, model, **options)

    def _sdk(self) -> AsyncOpenAI:
        return self.connection.client()

    def _warm_client(self) -> None:
        with contextlib.suppress(LLMError):  # no key: the first call says so
            self._sdk()

    @property
    def price_provider(self) -> str | None:
        """OpenAI's prices for its API; a compatible server's (LM Studio...) are unknown."""
        return "openai" if self.base_url is None else "openai-compatible"

    async def aclose(self) -> None:
        if self._owns_connection:
            await self.connection.aclose()

    format_tool = staticmethod(function_tool)

    async def served_model(self) -> str | None:
        """The chat model a compatible server has loaded: the first listed that is not an
        embedding model (vLLM and llama.cpp list the one they serve); when several are listed,
        the first that LM Studio reports loaded (with just-in-time loading it lists every
        downloaded model). None when there is none. Retried and translated like ``chat``."""
        models = await self._with_retries(lambda: self._translated(self._listed()))
        chat = [m.id for m in models if not _is_embedding_model(m.id)]
        if len(chat) > 1:
            loaded = await self._lm_studio_loaded()
            chat = [model for model in chat if model in loaded] or chat
        return chat[0] if chat else None

    async def _lm_studio_loaded(self) -> set[str]:
        """The models LM Studio's own REST API (``/api/v0/models``, beside ``/v1``) says are
        loaded; empty from any other server or on any error."""
        root = (self.base_url or "").rstrip("/").removesuffix("/v1")
        try:
            body = await self._sdk().get(f"{root}/api/v0/models", cast_to=object)
        except openai.APIError:
            return set()
        entries = body.get("data") if isinstance(body, dict) else None
        return {
            entry["id"]
            for entry in entries or []
            if isinstance(entry, dict) and entry.get("state") == "loaded" and "id" in entry
        }

    async def _listed(self) -> list[Any]:
        """The models endpoint's entries that have an id, in the server's order."""
        page = await self._sdk().models.list()
        return [m for m in getattr(page, "data", None) or [] if isinstance(m.id, str)]

    async def _list_models_once(self) -> list[ModelInfo]:
        """Models from the models endpoint, newest first (by ``created``), then by name; from
        the official API only its chat models (not embeddings, speech, images...)."""
        models = await self._listed()
        if self.base_url is None:
            models = [m for m in models if _is_chat_model(m.id)]
        models.sort(key=lambda m: (-count(m.created), m.id))
        return [ModelInfo(m.id) for m in models]

    def _params(self, request: ChatRequest) -> dict[str, Any]:
        messages: list[dict[str, Any]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        for message in request.messages:
            messages.extend(_wire_messages(message))
        params: dict[str, Any] = {"model": request.model, "messages": messages}
        # The official API wants max_completion_tokens (reasoning models refuse max_tokens);
        # compatible local servers do not all know that newer field, but all know max_tokens.
        limit_field = "max_completion_tokens" if self.base_url is None else "max_tokens"
        params[limit_field] = request.max_tokens
        if request.tools:
            params["tools"] = [self.format_tool(t) for t in request.tools]
        choice = request.tool_choice
        if isinstance(choice, ForcedTool):
            params["tool_choice"] = {"type": "function", "function": {"name": choice.name}}
        elif choice is not None and request.tools:  # the API refuses one without tools
            params["tool_choice"] = choice
        if request.temperature is not None:
            params["temperature"] = request.temperature
        if request.response_format is not None:
            params["response_format"] = _wire_format(request.response_format)
        return sent_as_is(params, "messages", "tools", "response_format")

    async def _chat_native(self, request: ChatRequest) -> LLMResponse:
        completion = await self._sdk().chat.completions.create(**self._params(request))
        assembly = _OpenAIAssembly(request_id=getattr(completion, "_request_id", None))
        assembly.add_completion(completion)
        return assembly.response()

    async def _stream_native(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        """The SDK sends the request and checks its status; the SSE events are read here, as
        plain JSON: building the SDK's model object for every chunk cost more CPU than all the
        rest of a chunk's way to the client (bench/stalls.py)."""
        stream = self._sdk().chat.completions.with_streaming_response.create(
            **self._params(request), stream=True, stream_options={"include_usage": True}
        )
        async with stream as response:  # closes the HTTP response however the generator ends
            request_id = response.headers.get("x-request-id")
            assembly = _OpenAIAssembly(request_id=request_id)
            try:
                # Read to the end, past [DONE]: an HTTP/1.1 connection is reused only once its
                # response has been read whole (else each turn opens a new one).
                async for data in sse_data(response.iter_lines()):
                    if data.startswith("[DONE]"):
                        continue
                    chunk = _json_event(data, assembly)
                    if chunk.get("error"):
                        error = chunk["error"]
                        message = error.get("message") if isinstance(error, dict) else None
                        raise openai.APIError(
                            str(message or "An error occurred during streaming"),
                            response.http_request,
                            body=error,
                        )
                    for event in assembly.feed(_Fields(chunk)):
                        yield event
            except Exception as exc:  # only here is the stream's request id known
                raise self._convert_error(exc, request_id) from exc
        if assembly.chunks == 0:  # e.g. a server that ignored stream=True and sent JSON
            raise assembly.invalid("a stream without any chunk")
        if assembly.finish_reason is None:  # cut short: a shortened answer is not an answer
            raise assembly.invalid("the stream ended before a finish_reason")
        yield ResponseComplete(assembly.response())

    def _refusal_text(self, exc: Exception) -> str | None:
        if not isinstance(exc, openai.BadRequestError):
            return None
        return error_details(exc.body)[1] or exc.message

    def _convert_error(self, exc: Exception, request_id: str | None = None) -> LLMError:
        return self.connection.convert_error(exc, request_id)


def _wire_messages(message: Message) -> list[dict[str, Any]]:
    """One of our messages as Chat Completions messages (tool results are one message each)."""
    wire: list[dict[str, Any]] = [
        {
            "role": "tool",
            "tool_call_id": b.tool_call_id,
            "content": f"Error: {b.content}" if b.is_error else b.content,
        }
        for b in message.content
        if isinstance(b, ToolResultBlock)
    ]
    text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
    calls = [b for b in message.content if isinstance(b, ToolCall)]
    if message.role == "assistant":
        # The API takes a null content only next to tool calls.
        entry: dict[str, Any] = {"role": "assistant", "content": text or (None if calls else "")}
        if calls:
            entry["tool_calls"] = [_wire_call(c) for c in calls]
        wire.append(entry)
    elif message.media:
        wire.append({"role": "user", "content": _user_parts(message)})
    elif text or not wire:
        wire.append({"role": "user", "content": text})
    return wire


def _wire_format(fmt: ResponseFormat) -> dict[str, Any]:
    """``response_format`` as the API takes it."""
    if fmt.schema is None:
        return {"type": "json_object"}
    schema = {"name": fmt.name, "schema": fmt.schema, "strict": fmt.strict}
    return {"type": "json_schema", "json_schema": schema}


def _user_parts(message: Message) -> list[dict[str, Any]]:
    """A user message with images as content parts: text, ``image_url`` (a data: URL) for
    each image, and a document's text."""
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextBlock) and block.text:
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock):
            url = data_url(fit(block, OPENAI_IMAGES))
            parts.append({"type": "image_url", "image_url": {"url": url}})
        elif isinstance(block, DocumentBlock):
            parts.append({"type": "text", "text": document_text(block)})
    return parts


def _wire_call(call: ToolCall) -> dict[str, Any]:
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
    }


def _usage(raw: Any) -> Usage:
    """Our usage from the API's: cached prompt tokens are reported apart from the rest."""
    details = getattr(raw, "prompt_tokens_details", None)
    cached = count(getattr(details, "cached_tokens", None))
    return Usage(
        input_tokens=max(count(getattr(raw, "prompt_tokens", None)) - cached, 0),
        output_tokens=count(getattr(raw, "completion_tokens", None)),
        cache_read_tokens=cached,
    )


@dataclass
class _OpenAIPartialCall:
    id: str
    name: str
    json: str = ""


@dataclass
class _OpenAIAssembly:
    """Builds one LLMResponse from a completion or its chunks (tool calls assembled by index).

    SDK objects are typed ``Any`` here on purpose: the SDK builds them without validation, so
    their declared types do not hold for what compatible servers send.
    """

    request_id: str | None = None
    model: str = ""
    text: list[str] = field(default_factory=list)
    calls: dict[int, _OpenAIPartialCall] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    chunks: int = 0

    def add_completion(self, completion: Any) -> None:
        """Read a whole (non-streamed) completion."""
        choice = (getattr(completion, "choices", None) or [None])[0]
        message = getattr(choice, "message", None)
        if message is None:
            raise self.invalid("a completion without a message")
        self.model = _text(getattr(completion, "model", None))
        self.usage = _usage(getattr(completion, "usage", None))
        self.finish_reason = getattr(choice, "finish_reason", None)
        self.text.append(_text(getattr(message, "content", None)))
        for index, call in enumerate(getattr(message, "tool_calls", None) or []):
            function = getattr(call, "function", None)
            partial = self.call(index, getattr(call, "id", None), getattr(function, "name", None))
            partial.json = _text(getattr(function, "arguments", None))

    def feed(self, chunk: Any) -> list[StreamEvent]:
        """Read one streamed chunk; return the events it makes."""
        self.chunks += 1
        self.model = _text(getattr(chunk, "model", None)) or self.model
        if getattr(chunk, "usage", None) is not None:  # the last chunk, which has no choices
            self.usage = _usage(chunk.usage)
        choices = getattr(chunk, "choices", None)
        if not choices:
            return []
        self.finish_reason = getattr(choices[0], "finish_reason", None) or self.finish_reason
        delta = getattr(choices[0], "delta", None)
        if delta is None:
            return []
        events: list[StreamEvent] = []
        content = _text(delta.content)
        if content:
            self.text.append(content)
            events.append(TextDelta(content))
        for position, piece in enumerate(delta.tool_calls or []):
            index = piece.index if isinstance(piece.index, int) else position
            function = getattr(piece, "function", None)
            is_new = index not in self.calls
            had_name = not is_new and bool(self.calls[index].name)
            partial = self.call(index, piece.id, getattr(function, "name", None))
            fragment = _text(getattr(function, "arguments", None))
            partial.json += fragment
            named_now = bool(partial.name) and not had_name
            events.append(
                ToolCallDelta(
                    index,
                    partial.id if is_new else None,
                    partial.name if named_now else None,
                    fragment,
                )
            )
        return events

    def call(self, index: int, call_id: object, name: object) -> _OpenAIPartialCall:
        """The call at ``index``; the first id wins (one is generated if the server sent none)."""
        if index not in self.calls:
            new_id = _text(call_id) or f"call_{uuid.uuid4().hex[:24]}"
            self.calls[index] = _OpenAIPartialCall(new_id, "")
        partial = self.calls[index]
        if not partial.name:
            partial.name = _text(name)
        return partial

    def response(self) -> LLMResponse:
        calls = []
        for index in sorted(self.calls):
            partial = self.calls[index]
            if not partial.name:
                raise self.invalid(f"tool call {partial.id} without a function name")
            arguments, error = parse_tool_arguments(partial.json)
            calls.append(ToolCall(partial.id, partial.name, arguments, error))
        reason = _FINISH_REASONS.get(self.finish_reason or "stop", "end_turn")
        if calls and reason == "end_turn":
            reason = "tool_use"  # some compatible servers say "stop" (or nothing) after tool calls
        return LLMResponse(
            text="".join(self.text),
            tool_calls=calls,
            stop_reason=reason,
            usage=self.usage,
            model=self.model,
            request_id=self.request_id,
        )

    def invalid(self, what: str) -> UnreadableResponse:
        return UnreadableResponse(what, self.request_id)


_CHAT_PREFIXES: Final = ("gpt-", "o1", "o3", "o4", "chatgpt-")
_NOT_CHAT: Final = (
    "embedding",
    "tts",
    "whisper",
    "dall-e",
    "image",
    "audio",
    "realtime",
    "transcribe",
    "moderation",
    "search",
)


def first_chat_model(ids: Iterable[str]) -> str | None:
    """The first of a compatible server's model ids that is not an embedding model."""
    return next((model for model in ids if not _is_embedding_model(model)), None)


def _is_embedding_model(model: str) -> bool:
    return "embed" in model.lower()


def _json_event(data: str, assembly: _OpenAIAssembly) -> dict[str, Any]:
    try:
        chunk = json.loads(data)
    except ValueError:
        raise assembly.invalid("a stream event that is not JSON") from None
    if not isinstance(chunk, dict):
        raise assembly.invalid("a stream event that is not a JSON object")
    return chunk


class _Fields:
    """A JSON object read the way the assembly reads the SDK's objects: by attribute, None
    for a missing field, nested objects wrapped alike."""

    __slots__ = ("_data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def __getattr__(self, name: str) -> Any:
        value = self._data.get(name)
        if isinstance(value, dict):
            return _Fields(value)
        if isinstance(value, list):
            return [_Fields(v) if isinstance(v, dict) else v for v in value]
        return value


def _is_chat_model(model: str) -> bool:
    return model.startswith(_CHAT_PREFIXES) and not any(word in model for word in _NOT_CHAT)


def _text(value: object) -> str:
    """``value`` if the server sent a string there, else ""."""
    return value if isinstance(value, str) else ""
