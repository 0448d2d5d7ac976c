"""The assistant: every model call of the bridge goes through it, whatever the transport.

- :meth:`Assistant.turn`: a conversation's turn (``chat/send``; see :mod:`.turn.conversation`);
- :meth:`Assistant.ask` (the whole answer) and :meth:`Assistant.ask_events` (its events as they
  come): the one-off calls, the HTTP API's ``/chat`` and ``/v1``, the commands (rewrite, search
  and summarize), conversation titles;
- :meth:`Assistant.ask_for`: a typed value (command/createNote's note), a forced tool call
  where the provider can force one, else a JSON answer of the value's schema.

Who asks (the caller's key, the client program's name) comes in with each call, never from a
context variable. Everything a call needs is decided here, once:

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

``model="vault"`` is the assistant itself: the chat model with the vault tools run here (as the
access policy gives them to the caller over HTTP: :meth:`ToolAccess.over_http`), the system
prompt and the vault's context note, the client's earlier messages as its history.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final, TypeVar

from pydantic import ValidationError

from llm_service import (
    LLMError,
    LLMResponse,
    LLMService,
    Message,
    ResponseComplete,
    TextDelta,
    ToolCallDelta,
    ToolSpec,
    lazy,
)
from llm_service.catalog import max_output_for
from llm_service.options import ForcedTool, ResponseFormat, ToolChoice, forces_a_call
from llm_service.providers.base import DEFAULT_MAX_TOKENS
from llm_service.tools import ToolRegistry
from plugin_bridge.app.ask_options import AskOptions
from plugin_bridge.app.model_routes import ModelRoutes
from plugin_bridge.app.tool_args import ToolArgs
from plugin_bridge.app.turn.conversation import Turn, TurnParts, TurnRequest, start_turn
from plugin_bridge.app.turn.prompts import system_prompt
from plugin_bridge.wire.errors import RpcError, WireCode

if TYPE_CHECKING:
    import jsonschema

    from llm_service.providers.base import ChatOptions
    from plugin_bridge.app.access import ToolAccess
    from plugin_bridge.app.settings.providers import Route
else:
    jsonschema = lazy.module("jsonschema")

VAULT_MODEL: Final = "vault"
Event = TextDelta | ToolCallDelta | ResponseComplete
SCHEMA_TRIES: Final = 2
"""Answers asked for before a strict schema's refusal is the caller's error."""
ToolArgsT = TypeVar("ToolArgsT", bound=ToolArgs)


class Assistant:
    """Every model call of one server (see the module docstring), over the runtime in effect
    and a turn's parts; the access policy gives the ``vault`` model its tools."""

    def __init__(self, parts: TurnParts, access: ToolAccess) -> None:
        self._parts = parts
        """The runtime reader and what a call works with (the vault, spending, the context
        note): a turn's parts, the one-off calls' too."""
        self._runtime = parts.runtime
        self._access = access

    async def turn(self, request: TurnRequest) -> Turn:
        """A conversation's turn, ready to run: the provider, the conversation (the caller's
        own), the message's input, the route of its purpose, the budget checked; its events
        (``Turn.events``) stream the model's answer and commit the turn."""
        return await start_turn(self._parts, request)

    async def ask(
        self, purpose: str, messages: Sequence[Message], options: AskOptions
    ) -> LLMResponse:
        """The model's whole answer to ``messages``; usage recorded under ``purpose``."""
        async with aclosing(self._events(purpose, messages, options, stream=False)) as events:
            async for event in events:
                if isinstance(event, ResponseComplete):
                    return event.response
        raise RuntimeError("the model's answer ended without a reply")

    def ask_events(
        self, purpose: str, messages: Sequence[Message], options: AskOptions
    ) -> AsyncGenerator[Event, None]:
        """Text and tool-call deltas as they come, then ResponseComplete. A refusal (budget,
        model, tool choice) or a provider failure before the first event raises at the first
        ``anext``. With a strict schema the answer is checked whole, then sent."""
        return self._events(purpose, messages, options, stream=True)

    async def ask_for(
        self,
        purpose: str,
        messages: Sequence[Message],
        args: type[ToolArgsT],
        description: str,
        options: AskOptions,
    ) -> tuple[ToolArgsT | None, LLMResponse]:
        """A value of ``args`` from the model, and its reply: a forced call of the tool
        ``args.TOOL`` (``description``) where the route's provider and model can force one;
        else (Ollama, a model whose tools go in text) an answer in JSON that matches the
        schema of ``args`` (Ollama's ``format``, a structured output elsewhere), checked and
        asked for once more when it does not. The value is None when the reply holds none
        (the caller may read its text)."""
        await self._parts.spending.check()
        route = await self._route(options)
        if route.provider.forces_tools(route.model):
            spec = ToolSpec(args.TOOL, description, args.input_schema())
            asked = replace(options, tools=[spec], tool_choice=ForcedTool(args.TOOL))
        else:
            schema = args.input_schema()
            fmt = ResponseFormat(schema, args.TOOL, strict=True)
            asked = replace(options, tools=(), tool_choice=None, response_format=fmt)
        reply = await self._answer(purpose, route, messages, asked)
        return typed_value(reply, args), reply

    @property
    def routes(self) -> ModelRoutes:
        """The routing of client model ids over the runtime in effect (a settings change is a
        new runtime, so new routes; the model lists are kept with the providers)."""
        return ModelRoutes(self._runtime())

    async def models(self) -> list[str]:
        """The model ids a request can use: ``vault`` and :meth:`ModelRoutes.usable`."""
        return [VAULT_MODEL, *await self.routes.usable()]

    # -- internals ----------------------------------------------------------------------

    async def _events(
        self, purpose: str, messages: Sequence[Message], options: AskOptions, *, stream: bool
    ) -> AsyncGenerator[Event, None]:
        await self._parts.spending.check()
        if options.model == VAULT_MODEL:
            async with aclosing(self._vault(purpose, messages, options, stream)) as events:
                async for event in events:
                    if isinstance(event, ResponseComplete):
                        await self._parts.spending.recorded()  # its calls durable before it
                    yield event
            return
        _check_request(options)
        route = await self._route(options)
        self._check_forcible(route, options.tool_choice)
        fmt = options.response_format
        if not stream or (fmt is not None and fmt.strict and fmt.schema is not None):
            reply = await self._answer(purpose, route, messages, options)
            self._check_forcible(route, options.tool_choice)  # a refusal learned by the call
            for event in _replayed(reply) if stream else [ResponseComplete(reply)]:
                yield event
            return
        call = self._call_options(route, options)
        provider = route.provider
        async with aclosing(provider.stream(messages, options.tools, **call)) as events:
            async for event in events:
                if isinstance(event, ResponseComplete):
                    reply = await self._record(purpose, route, event.response, options)
                    event = ResponseComplete(reply)
                    self._check_forcible(route, options.tool_choice)
                yield event

    async def _answer(
        self, purpose: str, route: Route, messages: Sequence[Message], options: AskOptions
    ) -> LLMResponse:
        """The whole answer on ``route`` (the request checked before), a strict schema's
        answer checked (and asked for again once)."""
        call = self._call_options(route, options)
        fmt = options.response_format
        if fmt is not None and fmt.strict and fmt.schema is not None:
            return await self._conforming(purpose, route, messages, options, call, fmt.schema)
        return await self._chat(purpose, route, messages, options, call)

    async def _route(self, options: AskOptions) -> Route:
        if options.model is None:
            return self._runtime().route(options.route, options.client)
        return await self.routes.resolve(options.model)

    def _call_options(self, route: Route, options: AskOptions) -> ChatOptions:
        configured = self._runtime().answer_options
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
        return await self._record(purpose, route, reply, options)

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

    async def _record(
        self, purpose: str, route: Route, reply: LLMResponse, options: AskOptions
    ) -> LLMResponse:
        """Record the call's usage under ``purpose`` and the model asked for (as a
        conversation's turns are), committed; ``reply`` with what it cost."""
        model = route.model
        spending = self._parts.spending
        conversation, caller = options.conversation, options.caller
        cost = await spending.record_call(
            conversation, purpose, route.provider, model, reply.usage, caller
        )
        return replace(reply, cost_usd=cost)

    async def _vault(
        self, purpose: str, messages: Sequence[Message], options: AskOptions, stream: bool
    ) -> AsyncGenerator[Event, None]:
        """The ``vault`` model: one turn of a fresh LLMService over the client's history; its
        answer names ``vault`` as its model (the provider's model is the assistant's own)."""
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
            reply = await service.process_message(question, media=media)
            yield ResponseComplete(replace(reply, model=VAULT_MODEL))
            return
        async with aclosing(service.stream_message(question, media=media)) as events:
            async for event in events:
                if isinstance(event, ResponseComplete):
                    yield ResponseComplete(replace(event.response, model=VAULT_MODEL))
                elif isinstance(event, TextDelta):
                    yield event  # tool calls run here: the client sees the answer only

    def service(self, tools: ToolRegistry, options: AskOptions | None = None) -> LLMService:
        """A conversation's service on the chat route, with ``tools``, the vault's system
        prompt and the settings' answer length and temperature (``options``' own above them;
        its usage recorder is set by who uses it)."""
        options = options or AskOptions()
        runtime = self._runtime()
        answer = runtime.answer_options
        if options.max_tokens is not None:
            answer["max_tokens"] = options.max_tokens
        if options.temperature is not None:
            answer["temperature"] = options.temperature
        chat = runtime.route("chat", options.client)
        service = LLMService(chat.provider, model=chat.model, tools=tools, **answer)
        service.set_system_prompt(system_prompt(self._parts.vault.name))
        return service

    async def _service(self, purpose: str, options: AskOptions) -> LLMService:
        parts, vault, notes = self._parts, self._parts.vault, self._parts.context_notes
        service = self.service(self._access.over_http(options.caller).registry, options)
        service.on_usage = parts.spending.recorder(options.conversation, purpose, options.caller)
        path = self._runtime().config.context_note
        fresh, note = notes.cached(vault, path)
        if not fresh:
            note = await vault.notes.execute(lambda _: notes.read(vault, path))
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


def typed_value(reply: LLMResponse, args: type[ToolArgsT]) -> ToolArgsT | None:
    """The value of ``args`` in ``reply``: its tool call's arguments, else its text as JSON;
    None when neither matches the schema."""
    for call in reply.tool_calls:
        if call.name == args.TOOL and call.parse_error is None:
            try:
                return args.model_validate(call.arguments)
            except ValidationError:
                continue
    try:
        return args.model_validate_json(reply.text) if reply.text.strip() else None
    except ValidationError:
        return None


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
