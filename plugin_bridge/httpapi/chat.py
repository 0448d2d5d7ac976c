"""One chat request of the HTTP API, for ``/v1/chat/completions`` and ``/chat`` alike.

A routed model (see :mod:`.providers`) is one provider call with the client's own messages and
tools: tool calls go back to the client. ``model: "vault"`` is the assistant itself: the
configured chat model with the vault tools run here, the system prompt and the vault's context
note, the client's earlier messages as the history. Nobody is there to approve a write over
HTTP, so the vault's write tools are refused unless the setting ``http_allow_writes`` is on.

Every provider call is recorded with purpose ``http`` and held against the budgets (402 once
one is used up).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import TYPE_CHECKING, Final

from llm_service import LLMResponse, ResponseComplete, TextDelta, ToolCallDelta
from llm_service.catalog import max_output_for
from plugin_bridge.httpapi.openai_format import BadRequest, ChatInput
from plugin_bridge.httpapi.providers import ProviderPool

if TYPE_CHECKING:
    from llm_service import LLMService, Message, Provider, Usage
    from llm_service.providers.base import ChatOptions
    from llm_service.tools import ToolRegistry
    from plugin_bridge.app.state import BridgeApp

VAULT_MODEL: Final = "vault"
PURPOSE: Final = "http"

Event = TextDelta | ToolCallDelta | ResponseComplete


class HttpChat:
    """What the HTTP routes share: the bridge, its provider pool, the vault tools over HTTP."""

    def __init__(self, bridge: BridgeApp) -> None:
        self.bridge = bridge
        self.providers = ProviderPool(bridge)
        self._tools: tuple[bool, ToolRegistry] | None = None

    def tools(self) -> ToolRegistry:
        """The vault tools as HTTP clients and the ``vault`` model use them: reads allowed,
        writes refused unless ``http_allow_writes`` (built once per value of the setting)."""
        allow = self.bridge.config.http_allow_writes
        if self._tools is None or self._tools[0] != allow:
            from llm_service.tools import ToolRegistry
            from plugin_bridge.app.vault_tools import register_vault_tools

            registry = ToolRegistry()
            register_vault_tools(
                registry,
                self.bridge.vault,
                write_permission="allow" if allow else "deny",
                writer=self.bridge.writes.write,
            )
            self._tools = (allow, registry)
        return self._tools[1]

    async def complete(self, chat: ChatInput) -> LLMResponse:
        """The whole answer."""
        async with aclosing(self.stream(chat, stream=False)) as events:
            async for event in events:
                if isinstance(event, ResponseComplete):
                    return event.response
        raise RuntimeError("the model's answer ended without a reply")

    async def stream(self, chat: ChatInput, *, stream: bool = True) -> AsyncGenerator[Event, None]:
        """Text and tool-call deltas as they come (with ``stream``), then ResponseComplete."""
        self.bridge.spending.check()
        if chat.model == VAULT_MODEL:
            async with aclosing(self._assistant(chat, stream)) as events:
                async for event in events:
                    yield event
            return
        provider, model = self.providers.resolve(chat.model)
        options = self._options(chat, model)
        if not stream:
            reply = await provider.chat(chat.messages, chat.tools, **options)
            self._record(provider, reply.model or model, reply.usage)
            yield ResponseComplete(reply)
            return
        async with aclosing(provider.stream(chat.messages, chat.tools, **options)) as events:
            async for event in events:
                if isinstance(event, ResponseComplete):
                    self._record(provider, event.response.model or model, event.response.usage)
                yield event

    def _options(self, chat: ChatInput, model: str) -> ChatOptions:
        configured = self.bridge.answer_options()
        wanted = chat.max_tokens or configured.get("max_tokens") or 4096
        limit = max_output_for(model)
        temperature = chat.temperature
        return {
            "model": model,
            "system": chat.system,
            "tool_choice": chat.tool_choice,
            "max_tokens": min(wanted, limit) if limit else wanted,
            "temperature": configured.get("temperature") if temperature is None else temperature,
        }

    def _record(self, provider: Provider, model: str, usage: Usage) -> None:
        self.bridge.spending.record_call(None, PURPOSE, provider, model, usage)

    async def _assistant(self, chat: ChatInput, stream: bool) -> AsyncGenerator[Event, None]:
        """The ``vault`` model: one turn of a fresh LLMService over the client's history."""
        question = _question(chat.messages)
        service = await self._service(chat)
        service.load_history(chat.messages[:-1])
        media = chat.messages[-1].media  # the question's images, in the provider's own form
        if not stream:
            yield ResponseComplete(await service.process_message(question, media=media))
            return
        async with aclosing(service.stream_message(question, media=media)) as events:
            async for event in events:
                if isinstance(event, TextDelta | ResponseComplete):
                    yield event  # tool calls run here: the client sees the answer only

    async def _service(self, chat: ChatInput) -> LLMService:
        from llm_service import LLMService
        from plugin_bridge.app.state import system_prompt

        bridge = self.bridge
        options = bridge.answer_options()
        if chat.max_tokens is not None:
            options["max_tokens"] = chat.max_tokens
        if chat.temperature is not None:
            options["temperature"] = chat.temperature
        chat_route = bridge.route("chat")
        service = LLMService(
            chat_route.provider,
            model=chat_route.model,
            tools=self.tools(),
            on_usage=bridge.spending.recorder(None, PURPOSE),
            **options,
        )
        service.set_system_prompt(system_prompt(bridge.vault.name))
        path = bridge.config.context_note
        fresh, note = bridge.context_notes.cached(bridge.vault, path)
        if not fresh:
            note = await asyncio.to_thread(bridge.context_notes.read, bridge.vault, path)
        service.set_conversation_context("\n\n".join(p for p in (note, chat.system) if p))
        return service


def _question(messages: list[Message]) -> str:
    """The text of the last message, which must be the user's."""
    last = messages[-1]
    if last.role != "user" or last.tool_results_blocks or not last.text.strip():
        raise BadRequest("With model 'vault' the last message must be the user's text.")
    return last.text
