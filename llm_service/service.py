"""LLMService: one conversation with a model that can call tools.

A turn sends the history plus the user's text to the provider; while the model answers with tool
calls, the calls run one after another in the order given and all their results go back in ONE
user message, until the model stops asking (``end_turn``, ``max_tokens``, ``stop_sequence``, ...)
or ``max_tool_iterations`` rounds of tools have run. In that last case the turn stops with
``stop_reason="max_tool_iterations"``; the calls of that final response are not run and are left
out of the history, which records the response's text (or a note saying the limit was reached)
as the assistant's answer, so the history stays valid and the next message can simply follow.

The reply's ``text`` is the text of every model response of the turn joined by a blank line:
exactly what ``stream_message``'s ``TextDelta`` events add up to.

The history holds at most ``max_history`` messages, tool calls and results included; see
:mod:`llm_service.history` for how it is trimmed. While a turn runs, its own exchange is kept
whole even when longer than the limit; once the turn is over, such an exchange is compacted to the
user's message and the reply text. A turn changes the history only when it completes: a provider
error, a cancelled task or a stream consumer that stops early leave the history as it was.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import aclosing
from typing import Any, TypeAlias, Unpack, overload

from llm_service.catalog import max_output_for
from llm_service.errors import LLMError
from llm_service.events import (
    ResponseComplete,
    ServiceEvent,
    TextDelta,
    ToolCallStarted,
    ToolResult,
)
from llm_service.history import NO_TEXT_REPLY, compact_exchange, trim_history
from llm_service.messages import (
    LLMResponse,
    MediaBlock,
    Message,
    StopReason,
    TextBlock,
    ToolCall,
    ToolResultBlock,
    ToolSpec,
    Usage,
)
from llm_service.pricing import DEFAULT_MODEL, cost_usd, price_for, retirement_date
from llm_service.providers.base import DEFAULT_MAX_TOKENS, ChatOptions, Provider
from llm_service.tools import (
    ConfirmCallback,
    ToolHandler,
    ToolOptions,
    ToolRegistry,
    tool_parts,
)

logger = logging.getLogger(__name__)

ROUND_SEPARATOR = "\n\n"
"""Joins the texts of the model's responses within one turn."""


UsageCallback: TypeAlias = Callable[[str, Usage, float | None, str], None]
"""``(model, usage, cost_usd, provider)`` of one provider call: cost None when the price is
unknown; ``provider`` the provider's ``kind`` ("anthropic", "openai", "ollama"; "" when none)."""


class LLMService:
    """One conversation: history, system prompt, tools and the tool loop over a provider.

    Concurrent ``process_message`` / ``stream_message`` calls on one instance run one after
    another (an ``asyncio.Lock``), never interleaved.
    """

    def __init__(
        self,
        provider: Provider,
        *,
        model: str | None = None,
        max_history: int = 20,
        max_tool_iterations: int = 10,
        confirm: ConfirmCallback | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        on_usage: UsageCallback | None = None,
        temperature: float | None = None,
        tools: ToolRegistry | None = None,
    ) -> None:
        model = model or provider.model
        if not model:
            raise ValueError(
                "No model to use: pass model= to LLMService, or give the provider a default "
                'model, e.g. AnthropicProvider(api_key, "claude-haiku-5-5").'
            )
        if max_history < 2:
            raise ValueError("max_history must be at least 2 (a question and its answer).")
        if max_tool_iterations < 0:
            raise ValueError("max_tool_iterations must not be negative.")
        if max_tokens < 1:
            raise ValueError("max_tokens must be at least 1.")
        if tools is not None and confirm is not None:
            raise ValueError("Pass confirm= or tools=, not both: a shared registry has its own.")
        self.provider = provider
        self.on_usage = on_usage
        """Told of every provider call: model, tokens and cost (None when the price is
        unknown), failed turns' calls included."""
        self.tools = tools if tools is not None else ToolRegistry(confirm=confirm)
        """The tools the model may call: this service's own, or a registry shared by several
        services (``tools=``; registering on it registers for all of them)."""
        self.max_history = max_history
        self.max_tool_iterations = max_tool_iterations
        self.max_tokens = max_tokens
        self.temperature = temperature
        self._model = ""
        self.model = model
        self._system_prompt = ""
        self._context = ""
        self._history: list[Message] = []
        self.last_exchange: list[Message] = []
        """The messages the last completed turn added: the question, any tool calls and results,
        the answer (uncompacted: what a transcript should store)."""
        self._lock = asyncio.Lock()
        self._usage = Usage()
        self._cost = 0.0
        self._priced_calls = 0
        self._unpriced_calls = 0

    # -- configuration --------------------------------------------------------------------

    @property
    def model(self) -> str:
        """The model of the next provider call; a deprecated one logs a WARNING when set."""
        return self._model

    @model.setter
    def model(self, model: str) -> None:
        retires = retirement_date(model)
        if retires is not None:
            logger.warning(
                "Model %s is deprecated and retires on %s; switch to a current model such as %s.",
                model,
                retires,
                DEFAULT_MODEL,
            )
        self._model = model

    @property
    def confirm(self) -> ConfirmCallback | None:
        """Asked before a tool with permission "ask" runs (the tool registry's callback)."""
        return self.tools.confirm

    @confirm.setter
    def confirm(self, confirm: ConfirmCallback | None) -> None:
        self.tools.confirm = confirm

    def set_system_prompt(self, text: str | None) -> None:
        """Replace the system prompt; None or "" removes it."""
        self._system_prompt = text or ""

    def set_conversation_context(self, text: str | None) -> None:
        """Replace the context sent after the system prompt; None or "" removes it."""
        self._context = text or ""

    def load_history(self, messages: Sequence[Message]) -> None:
        """Continue a stored conversation: its last messages become the working history,
        trimmed to ``max_history`` by whole exchanges (a tool call never loses its result)."""
        self._history = trim_history(list(messages), self.max_history)

    def clear_conversation(self) -> None:
        """Start a new conversation: empty history and usage; tools and prompts stay."""
        self._history = []
        self._usage = Usage()
        self._cost = 0.0
        self._priced_calls = self._unpriced_calls = 0

    # -- tools ----------------------------------------------------------------------------

    # The library's pinned entry point; it only delegates to ToolRegistry.register_tool, whose
    # overloads it repeats (duplicates lists the pair: a deliberate choice).
    @overload
    def register_tool(self, tool: object, /, **options: Unpack[ToolOptions]) -> None: ...

    @overload
    def register_tool(
        self,
        name: str,
        description: str,
        input_schema: Mapping[str, Any],
        handler: ToolHandler,
        /,
        **options: Unpack[ToolOptions],
    ) -> None: ...

    def register_tool(
        self,
        tool: object,
        description: str | None = None,
        input_schema: Mapping[str, Any] | None = None,
        handler: ToolHandler | None = None,
        /,
        **options: Unpack[ToolOptions],
    ) -> None:
        """Add or replace a tool (``permission="allow"``, ``timeout=30.0`` by default):
        ``register_tool(name, description, input_schema, handler)`` or one definition,
        ``register_tool({"name", "description", "input_schema", "execute"})``, an object with
        those attributes, or ``{"tool": {...}, "execute": fn}``; see
        :meth:`ToolRegistry.register_tool`, which ``self.tools`` is."""
        parts = tool_parts(tool, description, input_schema, handler)
        self.tools.register_tool(*parts, **options)

    def get_registered_tools(self) -> list[str]:
        """The registered tools' names, in registration order (their specs:
        :meth:`tool_specs`)."""
        return self.tools.get_registered_tools()

    def tool_specs(self) -> list[ToolSpec]:
        """The registered tools' specs, as the model receives them."""
        return self.tools.tool_specs()

    def validate_tool_call(self, call: ToolCall) -> str | None:
        """None if ``call`` can run, else why not (unknown tool, bad arguments)."""
        return self.tools.validate_tool_call(call)

    async def run_tool_call(self, call: ToolCall) -> ToolResultBlock:
        """Run one call as the tool loop would; never raises except CancelledError."""
        return await self.tools.run_tool_call(call)

    # -- state ----------------------------------------------------------------------------

    @property
    def history(self) -> list[Message]:
        """A copy of the conversation's messages."""
        return list(self._history)

    @property
    def usage(self) -> Usage:
        """Tokens of every provider call of this conversation, failed turns included."""
        return self._usage

    @property
    def cost_usd(self) -> float | None:
        """What this conversation's provider calls cost; None when a price is unknown."""
        unknown = price_for(self.model, self.provider.price_provider) is None
        if self._unpriced_calls or (not self._priced_calls and unknown):
            return None
        return self._cost

    # -- turns ----------------------------------------------------------------------------

    async def process_message(
        self,
        text: str,
        *,
        context: str | None = None,
        model: str | None = None,
        provider: Provider | None = None,
        media: Sequence[MediaBlock] = (),
    ) -> LLMResponse:
        """Run one turn with ``provider.chat`` and return the reply (``tool_calls`` is []).

        ``context`` (the note the user is in, a selection...) goes with this question only, as
        a second text block of its message, and stays in the history with it. ``model`` and
        ``provider`` run this turn on another model (a bigger one for a hard question) or
        another provider; the service's own stay for the turns after. ``media`` (images,
        documents) go in the same message, after the text."""
        reply: LLMResponse | None = None
        turn = self._turn(text, context, model, provider, media, stream=False)
        async with aclosing(turn) as events:
            async for event in events:
                if isinstance(event, ResponseComplete):
                    reply = event.response
        assert reply is not None  # _turn always ends with ResponseComplete or raises
        return reply

    def stream_message(
        self,
        text: str,
        *,
        context: str | None = None,
        model: str | None = None,
        provider: Provider | None = None,
        media: Sequence[MediaBlock] = (),
    ) -> AsyncGenerator[ServiceEvent, None]:
        """Run one turn with ``provider.stream``, yielding events; the last is ResponseComplete.

        ``TextDelta`` as the model writes, a ``ToolCallStarted`` / ``ToolResult`` pair per tool
        run, then ``ResponseComplete(reply)``. Close the generator (``aclose``) when stopping early.
        ``context``, ``model``, ``provider`` and ``media`` as for :meth:`process_message`.
        """
        return self._turn(text, context, model, provider, media, stream=True)

    async def _turn(
        self,
        text: str,
        context: str | None,
        model: str | None,
        provider: Provider | None,
        media: Sequence[MediaBlock],
        *,
        stream: bool,
    ) -> AsyncGenerator[ServiceEvent, None]:
        async with self._lock:
            provider = provider or self.provider
            model = model or self.model
            system = self._system()
            tools = self.tools.tool_specs()
            previous = list(self._history)
            question = (TextBlock(text), TextBlock(context)) if context else (TextBlock(text),)
            exchange = [Message("user", (*question, *media))]
            texts: list[str] = []
            rounds_done: list[tuple[str, Sequence[ToolCall]]] = []
            usage = Usage()
            rounds = 0
            while True:
                messages = trim_history([*previous, *exchange], self.max_history)
                call = self._call_model(
                    provider, messages, model, system, tools, stream, bool(texts)
                )
                async with aclosing(call) as events:
                    async for event in events:
                        if isinstance(event, ResponseComplete):
                            response = event.response
                        else:
                            yield event
                usage += response.usage
                self._account(provider, model, response.usage)
                if response.text:
                    texts.append(response.text)
                stop = _final_stop_reason(response, rounds, self.max_tool_iterations)
                ran = response.tool_calls if stop is None else ()  # a last round's calls never run
                rounds_done.append((response.text, ran))
                if stop is not None:
                    exchange.append(Message.assistant(response.text or _empty_note(stop, rounds)))
                    break
                exchange.append(response.to_message())
                results: list[ToolResultBlock] = []
                async with aclosing(self._run_tools(response.tool_calls, results)) as runs:
                    async for tool_event in runs:
                        yield tool_event
                exchange.append(Message.tool_results(results))
                rounds += 1
            reply_text = ROUND_SEPARATOR.join(texts)
            self._commit(previous, exchange, reply_text)
            logger.info(
                "Turn done: %d tool round(s), stop %s, %d tokens", rounds, stop, usage.total_tokens
            )
            cost = cost_usd(model, usage, provider.price_provider)
            last = response.model or model, cost, response.request_id, tuple(rounds_done)
            yield ResponseComplete(LLMResponse(reply_text, [], stop, usage, *last))

    async def _call_model(
        self,
        provider: Provider,
        messages: list[Message],
        model: str,
        system: str | None,
        tools: list[ToolSpec],
        stream: bool,
        after_text: bool,
    ) -> AsyncGenerator[TextDelta | ResponseComplete, None]:
        """One provider call: its text deltas (streaming only), then its ResponseComplete.

        ``after_text``: earlier responses of this turn had text, so this one's text starts with
        the round separator. The provider stream is closed when this generator is.
        """
        limit = max_output_for(model)
        options: ChatOptions = {
            "model": model,
            "max_tokens": min(self.max_tokens, limit) if limit else self.max_tokens,
            "temperature": self.temperature,
        }
        if not stream:
            yield ResponseComplete(await provider.chat(messages, tools, system, **options))
            return
        async with aclosing(provider.stream(messages, tools, system, **options)) as events:
            async for event in events:
                if isinstance(event, ResponseComplete):
                    yield event
                    return
                if isinstance(event, TextDelta) and event.text:
                    if after_text:
                        after_text = False
                        yield TextDelta(ROUND_SEPARATOR)
                    yield event
        raise LLMError(
            f"{provider.name} ended its stream without a final response; try again.",
            code="invalid_response",
            provider=provider.name,
        )

    async def _run_tools(
        self, calls: list[ToolCall], results: list[ToolResultBlock]
    ) -> AsyncGenerator[ServiceEvent, None]:
        """Run ``calls`` one after another, appending to ``results``; yield their events."""
        for call in calls:
            yield ToolCallStarted(call)
            result = await self.tools.run_tool_call(call)
            results.append(result)
            yield ToolResult(call.id, call.name, result.content, result.is_error)

    def _commit(self, previous: list[Message], exchange: list[Message], reply_text: str) -> None:
        """Store the finished exchange (compacted if longer than the limit) and trim."""
        self.last_exchange = list(exchange)
        if len(exchange) > self.max_history:
            exchange = compact_exchange(exchange, reply_text)
        self._history = trim_history([*previous, *exchange], self.max_history)

    def _system(self) -> str | None:
        return "\n\n".join(part for part in (self._system_prompt, self._context) if part) or None

    def _account(self, provider: Provider, model: str, usage: Usage) -> None:
        self._usage += usage
        cost = cost_usd(model, usage, provider.price_provider)
        if self.on_usage is not None:
            self.on_usage(model, usage, cost, provider.kind or "")
        if cost is None:
            self._unpriced_calls += 1
        else:
            self._priced_calls += 1
            self._cost += cost


def _final_stop_reason(response: LLMResponse, rounds: int, max_rounds: int) -> StopReason | None:
    """Why the turn ends with ``response``, or None when its tool calls should run."""
    if not response.tool_calls:
        return "end_turn" if response.stop_reason == "tool_use" else response.stop_reason
    if rounds >= max_rounds:
        return "max_tool_iterations"
    return None


def _empty_note(stop: StopReason, rounds: int) -> str:
    """The assistant message recorded for a final response without text."""
    if stop == "max_tool_iterations":
        return f"(Stopped: the limit of {rounds} tool rounds for one message was reached.)"
    return NO_TEXT_REPLY
