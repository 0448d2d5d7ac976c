"""The assistant's one-off model calls: :meth:`Assistant.ask` (the whole answer) and
:meth:`Assistant.ask_stream` (its events as they come), for the HTTP API's ``/chat`` and ``/v1``
and any call that is not a conversation's turn.

Everything such a call needs is decided here, once:

- the route: a purpose's (``options.route``), or a client's model id (``options.model``)
  through :class:`~plugin_bridge.app.model_routes.ModelRoutes` (an id no provider lists is
  refused before any chat request);
- the budget check before the call, the usage recorded after it (under ``purpose``);
- the answer's token limit (the request's, else the settings', never above the model's own)
  and temperature;
- the tool choice: a forced call the provider or model cannot honour is a refusal (-32602,
  HTTP 400) naming it, never a silent drop;
- the structured-output retry: an answer that a strict JSON Schema refuses is asked for again
  once, with the reason; a second failure is an ``invalid_response`` LLMError (HTTP 502).

``model="vault"`` is the assistant itself: the chat model with the vault tools run here (reads
allowed; writes only with the setting ``http_allow_writes``, as nobody is there to review them),
the system prompt and the vault's context note, the client's earlier messages as its history.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from llm_service import (
    LLMError,
    LLMResponse,
    LLMService,
    Message,
    ResponseComplete,
    TextDelta,
    ToolCallDelta,
    lazy,
)
from llm_service.catalog import max_output_for
from llm_service.options import ForcedTool, ResponseFormat, ToolChoice, forces_a_call
from llm_service.providers.base import DEFAULT_MAX_TOKENS
from llm_service.tools import ToolRegistry
from plugin_bridge.app.model_routes import ModelRoutes
from plugin_bridge.app.turn.prompts import system_prompt
from plugin_bridge.app.vault_tools import register_vault_tools
from plugin_bridge.wire.errors import RpcError, WireCode

if TYPE_CHECKING:
    import jsonschema

    from llm_service import LLMService, Message, ToolSpec
    from llm_service.providers.base import ChatOptions
    from llm_service.tools import ToolRegistry
    from plugin_bridge.app.settings.providers import Purpose, Route
    from plugin_bridge.app.state import BridgeApp
else:
    jsonschema = lazy.module("jsonschema")

VAULT_MODEL: Final = "vault"
Event = TextDelta | ToolCallDelta | ResponseComplete
SCHEMA_TRIES: Final = 2
"""Answers asked for before a strict schema's refusal is the caller's error."""


@dataclass(frozen=True, slots=True)
class AskOptions:
    """What one call asks for besides its messages."""

    model: str | None = None
    """A client's model id (``vault``, ``provider/model``, a bare id; see
    :mod:`~plugin_bridge.app.model_routes`); None: the route of ``route``."""
    route: Purpose = "chat"
    system: str | None = None
    tools: Sequence[ToolSpec] = ()
    tool_choice: ToolChoice | None = None
    response_format: ResponseFormat | None = None
    max_tokens: int | None = None
    """None: the settings' answer length."""
    temperature: float | None = None
    """None: the settings' temperature."""
    writes: bool = True
    """False: the ``vault`` model's write tools are refused (a client key without ``write``);
    True: ``http_allow_writes`` decides."""


class Assistant:
    """The one-off calls of one app (see the module docstring)."""

    def __init__(self, app: BridgeApp) -> None:
        self.app = app
        self.routes = ModelRoutes(app)
        self._http_tools: dict[bool, ToolRegistry] = {}
        """Per "writes allowed": the owner's and a write key's, and a read or chat key's."""

    async def ask(
        self, purpose: str, messages: Sequence[Message], options: AskOptions
    ) -> LLMResponse:
        """The model's whole answer to ``messages``; usage recorded under ``purpose``."""
        async with aclosing(self._events(purpose, messages, options, stream=False)) as events:
            async for event in events:
                if isinstance(event, ResponseComplete):
                    return event.response
        raise RuntimeError("the model's answer ended without a reply")

    def ask_stream(
        self, purpose: str, messages: Sequence[Message], options: AskOptions
    ) -> AsyncGenerator[Event, None]:
        """Text and tool-call deltas as they come, then ResponseComplete. A refusal (budget,
        model, tool choice) or a provider failure before the first event raises at the first
        ``anext``. With a strict schema the answer is checked whole, then sent."""
        return self._events(purpose, messages, options, stream=True)

    async def models(self) -> list[str]:
        """The model ids a request can use: ``vault`` and :meth:`ModelRoutes.usable`."""
        return [VAULT_MODEL, *await self.routes.usable()]

    def http_tools(self, writes: bool = True) -> ToolRegistry:
        """The vault tools as HTTP clients and the ``vault`` model use them: reads allowed,
        writes refused unless ``http_allow_writes`` and ``writes`` (built once per value)."""
        allow = self.app.config.http_allow_writes and writes
        if allow not in self._http_tools:
            registry = ToolRegistry()
            register_vault_tools(
                registry,
                self.app.vault,
                write_permission="allow" if allow else "deny",
                writer=self.app.writes.write,
            )
            self._http_tools[allow] = registry
        return self._http_tools[allow]

    # -- internals ----------------------------------------------------------------------

    async def _events(
        self, purpose: str, messages: Sequence[Message], options: AskOptions, *, stream: bool
    ) -> AsyncGenerator[Event, None]:
        self.app.spending.check()
        if options.model == VAULT_MODEL:
            async with aclosing(self._vault(purpose, messages, options, stream)) as events:
                async for event in events:
                    yield event
            return
        _check_request(options)
        route = await self._route(options)
        self._check_forcible(route, options.tool_choice)
        call = self._call_options(route, options)
        fmt = options.response_format
        if fmt is not None and fmt.strict and fmt.schema is not None:
            reply = await self._conforming(purpose, route, messages, options, call, fmt.schema)
            for event in _replayed(reply) if stream else [ResponseComplete(reply)]:
                yield event
            return
        if not stream:
            yield ResponseComplete(await self._chat(purpose, route, messages, options, call))
            return
        provider = route.provider
        async with aclosing(provider.stream(messages, options.tools, **call)) as events:
            async for event in events:
                if isinstance(event, ResponseComplete):
                    self._record(purpose, route, event.response)
                    self._check_forcible(route, options.tool_choice)
                yield event

    async def _route(self, options: AskOptions) -> Route:
        if options.model is None:
            return self.app.route(options.route)
        return await self.routes.resolve(options.model)

    def _call_options(self, route: Route, options: AskOptions) -> ChatOptions:
        configured = self.app.answer_options()
        wanted = options.max_tokens or configured.get("max_tokens") or DEFAULT_MAX_TOKENS
        limit = max_output_for(route.model)
        temperature = options.temperature
        return {
            "model": route.model,
            "system": options.system,
            "tool_choice": options.tool_choice,
            "response_format": options.response_format,
            "max_tokens": min(wanted, limit) if limit else wanted,
            "temperature": configured.get("temperature") if temperature is None else temperature,
        }

    async def _chat(
        self,
        purpose: str,
        route: Route,
        messages: Sequence[Message],
        options: AskOptions,
        call: ChatOptions,
    ) -> LLMResponse:
        reply = await route.provider.chat(messages, options.tools, **call)
        self._record(purpose, route, reply)
        self._check_forcible(route, options.tool_choice)
        return reply

    async def _conforming(
        self,
        purpose: str,
        route: Route,
        messages: Sequence[Message],
        options: AskOptions,
        call: ChatOptions,
        schema: dict[str, Any],
    ) -> LLMResponse:
        """An answer that matches ``schema`` (or a tool call), asked for again once with the
        reason; an LLMError (invalid_response) when the second fails too."""
        asked = list(messages)
        problem = ""
        for _ in range(SCHEMA_TRIES):
            reply = await self._chat(purpose, route, asked, options, call)
            found = None if reply.tool_calls else schema_problem(reply.text, schema)
            if found is None:
                return reply
            problem = found
            asked += [
                Message.assistant(reply.text),
                Message.user(
                    f"That answer does not match the JSON Schema: {problem}. Answer again with "
                    "only a JSON value that matches it."
                ),
            ]
        name = options.response_format.name if options.response_format else "response"
        raise LLMError(
            f"The model answered {SCHEMA_TRIES} times with JSON that does not match the schema "
            f"'{name}' ({problem}); try again, or use another model.",
            code="invalid_response",
            provider=route.provider.name,
        )

    def _check_forcible(self, route: Route, choice: ToolChoice | None) -> None:
        """A refusal when ``choice`` forces a call that this provider and model cannot."""
        if forces_a_call(choice) and not route.provider.forces_tools(route.model):
            raise RpcError(
                WireCode.INVALID_PARAMS,
                f"{route.provider.name} cannot force a tool call with model {route.model} "
                f"(tool_choice {_choice_name(choice)}): use tool_choice 'auto', or a provider "
                "and model that take tool_choice.",
            )

    def _record(self, purpose: str, route: Route, reply: LLMResponse) -> None:
        model = reply.model or route.model
        self.app.spending.record_call(None, purpose, route.provider, model, reply.usage)

    async def _vault(
        self, purpose: str, messages: Sequence[Message], options: AskOptions, stream: bool
    ) -> AsyncGenerator[Event, None]:
        """The ``vault`` model: one turn of a fresh LLMService over the client's history."""
        if (
            options.tools
            or options.response_format is not None
            or forces_a_call(options.tool_choice)
        ):
            raise RpcError(
                WireCode.INVALID_PARAMS,
                "The 'vault' model runs the vault's own tools: send it no tools, tool_choice "
                "or response_format, or name another model.",
            )
        question = _question(messages)
        service = await self._service(purpose, options)
        service.load_history(list(messages[:-1]))
        media = messages[-1].media  # the question's images, in the provider's own form
        if not stream:
            yield ResponseComplete(await service.process_message(question, media=media))
            return
        async with aclosing(service.stream_message(question, media=media)) as events:
            async for event in events:
                if isinstance(event, TextDelta | ResponseComplete):
                    yield event  # tool calls run here: the client sees the answer only

    async def _service(self, purpose: str, options: AskOptions) -> LLMService:
        app = self.app
        answer = app.answer_options()
        if options.max_tokens is not None:
            answer["max_tokens"] = options.max_tokens
        if options.temperature is not None:
            answer["temperature"] = options.temperature
        chat = app.route("chat")
        service = LLMService(
            chat.provider,
            model=chat.model,
            tools=self.http_tools(options.writes),
            on_usage=app.spending.recorder(None, purpose),
            **answer,
        )
        service.set_system_prompt(system_prompt(app.vault.name))
        path = app.config.context_note
        fresh, note = app.context_notes.cached(app.vault, path)
        if not fresh:
            note = await app.vault.notes.execute(lambda _: app.context_notes.read(app.vault, path))
        service.set_conversation_context("\n\n".join(p for p in (note, options.system) if p))
        return service


def schema_problem(text: str, schema: dict[str, Any]) -> str | None:
    """Why ``text`` is not JSON that matches ``schema`` (None: it is)."""
    try:
        value = json.loads(text)
    except ValueError:
        return "the answer is not JSON"
    validator = jsonschema.validators.validator_for(schema)(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path)
    return f"{error.message} at '/{where}'" if where else error.message


def check_schema(schema: dict[str, Any]) -> str | None:
    """Why ``schema`` is not a JSON Schema (None: it is)."""
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        return exc.message
    return None


def _check_request(options: AskOptions) -> None:
    """Refuse a tool choice that names no tool, ``required`` without tools, and a response
    format whose schema is not one."""
    choice = options.tool_choice
    if isinstance(choice, ForcedTool) and not any(t.name == choice.name for t in options.tools):
        raise RpcError(
            WireCode.INVALID_PARAMS, f"tool_choice names '{choice.name}', which is not in tools."
        )
    if choice == "required" and not options.tools:
        raise RpcError(WireCode.INVALID_PARAMS, "tool_choice 'required' needs tools.")
    fmt = options.response_format
    problem = None if fmt is None or fmt.schema is None else check_schema(fmt.schema)
    if problem is not None:
        raise RpcError(
            WireCode.INVALID_PARAMS,
            f"The response format's schema is not a JSON Schema: {problem}.",
        )


def _choice_name(choice: ToolChoice | None) -> str:
    return f"'{choice.name}'" if isinstance(choice, ForcedTool) else f"'{choice}'"


def _replayed(reply: LLMResponse) -> list[Event]:
    """The events a stream of ``reply`` would have had."""
    events: list[Event] = [TextDelta(reply.text)] if reply.text else []
    events += [
        ToolCallDelta(index, call.id, call.name, json.dumps(call.arguments))
        for index, call in enumerate(reply.tool_calls)
    ]
    return [*events, ResponseComplete(reply)]


def _question(messages: Sequence[Message]) -> str:
    """The text of the last message, which must be the user's."""
    last = messages[-1]
    if last.role != "user" or last.tool_results_blocks or not last.text.strip():
        raise RpcError(
            WireCode.INVALID_PARAMS, "With model 'vault' the last message must be the user's text."
        )
    return last.text
