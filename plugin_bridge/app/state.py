"""The bridge application's state: the vault, the model provider, conversations, the tools.

Built by whoever serves it (``cli/serve.py``, the tests) and handed, with the method router, to
:func:`plugin_bridge.wire.server.start_server`; handlers reach it as ``ctx.app``. It knows nothing
of connections or routing: the confirm round trip comes in as a callback
(:func:`plugin_bridge.app.turn.confirm.ask_client`).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from plugin_bridge.app.conversations.live import MAX_CONVERSATIONS, Conversations
from plugin_bridge.app.conversations.store import ConversationStore
from plugin_bridge.app.conversations.titles import make_title
from plugin_bridge.app.conversations.usage import Budgets, Spending
from plugin_bridge.app.settings.config import (
    NO_PROVIDER,
    NO_PROVIDER_IN_PLUGIN,
    PLUGIN_CLIENT,
    BridgeSettings,
)
from plugin_bridge.app.write_through import DEFAULT_APPLY_TIMEOUT, WriteThrough
from plugin_bridge.vault.semantic.ann import ANN_THRESHOLD
from plugin_bridge.wire.context import current_request
from plugin_bridge.wire.errors import RpcError, WireCode

if TYPE_CHECKING:
    from llm_service import LLMService, Message, Provider, ProviderName
    from llm_service.embedders import Embedder
    from llm_service.tools import ConfirmCallback, ToolRegistry
    from plugin_bridge.vault.notes.vault import Vault
    from plugin_bridge.vault.semantic.semantic_index import Progress, SemanticIndex

logger = logging.getLogger(__name__)
_DEFAULTS = BridgeSettings.model_construct()
"""Every setting at its default, without reading the environment or the settings file."""


def system_prompt(vault_name: str) -> str:
    """The system prompt of every chat conversation."""
    return (
        f"You are an assistant inside the user's Obsidian vault named “{vault_name}”. "
        "Use the tools to search and read notes before answering questions about them, and "
        "never invent notes. Cite every note you use as a [[wikilink]] with its path without "
        "the .md extension, e.g. [[Projects/Kafka]]. Create or change notes only when the "
        "user asks."
    )


class BridgeApp:
    """Shared state of one server; see the module docstring."""

    def __init__(
        self,
        vault: Vault,
        *,
        confirm: ConfirmCallback,
        provider: Provider | None = None,
        provider_name: ProviderName | None = None,
        model: str | None = None,
        no_provider_message: str = NO_PROVIDER,
        token: str | None = None,
        max_conversations: int = MAX_CONVERSATIONS,
        store: ConversationStore | None = None,
        budgets: Budgets | None = None,
        settings: BridgeSettings | None = None,
        apply_timeout: float = DEFAULT_APPLY_TIMEOUT,
    ) -> None:
        if provider is not None and not model:
            raise ValueError("a provider needs a model name")
        self.vault = vault
        self.provider = provider
        self.provider_name = provider_name if provider is not None else None
        self.model = model if provider is not None else None
        self.no_provider_message = no_provider_message
        self.token = token or secrets.token_urlsafe(32)
        self.confirm = confirm
        self.writes = WriteThrough(vault.notes, timeout=apply_timeout)
        """Every write the server makes goes through the plugin's editor when it is open."""
        self.settings = settings
        """What serve started with; settings/update replaces it (None in tests without one)."""
        store = store if store is not None else ConversationStore(vault.data_dir)
        self.spending = Spending(store, budgets or Budgets())
        self.conversations = Conversations(self._new_service, store, limit=max_conversations)
        self._tools: ToolRegistry | None = None
        self._setup_tools: ToolRegistry | None = None
        self._background: set[asyncio.Task[None]] = set()
        self.broadcast: Callable[[str, dict[str, Any]], None] = _nobody
        """Sends a notification to every client; the server sets it once it listens."""
        if vault.semantic is not None:
            self._follow(vault.semantic)

    def _follow(self, semantic: SemanticIndex) -> None:
        semantic.on_progress = self._embedding_progress
        semantic.on_spend = self._embedding_spend

    async def use_embedder(
        self, embedder: Embedder | None, confirm_over_usd: float, ann_threshold: int = ANN_THRESHOLD
    ) -> None:
        """Semantic search with ``embedder`` from now on: a running semantic index switches
        models (the old one serves until the new vectors are complete); None stops it."""
        vault = self.vault
        if embedder is None:
            if vault.semantic is not None:
                semantic, vault.semantic = vault.semantic, None
                await semantic.close()
            return
        if vault.semantic is not None:
            vault.semantic.confirm_over_usd = confirm_over_usd
            await vault.semantic.switch(embedder)
            return
        self._follow(
            vault.use_embedder(
                embedder, confirm_over_usd=confirm_over_usd, ann_threshold=ann_threshold
            )
        )
        assert vault.semantic is not None
        await vault.semantic.start()

    def _embedding_progress(self, progress: Progress) -> None:
        from plugin_bridge.wire.models import IndexProgress, dump

        self.broadcast(
            "index/progress", dump(IndexProgress.model_validate(progress, from_attributes=True))
        )

    def _embedding_spend(self, model: str, tokens: int) -> None:
        """Record a paid embedding batch like a chat call (purpose "embedding")."""
        from llm_service import Usage
        from llm_service.pricing import cost_usd

        usage = Usage(tokens, 0)
        self.spending.recorder(None, "embedding")(model, usage, cost_usd(model, usage))

    @property
    def tools(self) -> ToolRegistry:
        """The vault tools without a model (tools/list, tools/execute); built on first use."""
        if self._tools is None:
            from llm_service.tools import ToolRegistry
            from plugin_bridge.app.vault_tools import register_vault_tools

            self._tools = ToolRegistry(confirm=self.confirm)
            register_vault_tools(
                self._tools, self.vault, write_permission="ask", writer=self.writes.write
            )
        return self._tools

    @property
    def setup_tools(self) -> ToolRegistry:
        """The tools of a setup turn (chat/send with setup): the vault tools and
        ``complete_setup``, which writes the context note after the user's review."""
        if self._setup_tools is None:
            from llm_service.tools import ToolRegistry
            from plugin_bridge.app.turn.setup import register_setup_tool, showing_the_note
            from plugin_bridge.app.vault_tools import register_vault_tools

            def note_path() -> str:
                return self.config.context_note

            self._setup_tools = ToolRegistry(confirm=showing_the_note(self.confirm, note_path))
            register_vault_tools(self._setup_tools, self.vault, write_permission="ask")
            register_setup_tool(self._setup_tools, self.vault, note_path)
        return self._setup_tools

    def prepare_turn(self, service: LLMService, *, setup: bool, has_note: bool) -> None:
        """The system prompt and tools of a turn: the setup conversation's, or every chat's."""
        if setup:
            from plugin_bridge.app.turn.setup import setup_prompt

            service.tools = self.setup_tools
            prompt = setup_prompt(self.vault.name, self.config.context_note, has_note)
        else:
            service.tools = self.tools
            prompt = system_prompt(self.vault.name)
        service.set_system_prompt(prompt)

    @property
    def config(self) -> BridgeSettings:
        """The settings in effect; the defaults when the app was built without any (tests)."""
        return self.settings if self.settings is not None else _DEFAULTS

    def require_provider(self) -> Provider:
        """The provider, or -32011 saying what to configure: in the plugin's settings when the
        plugin asks, else with the flags and environment variables (the CLI, other clients)."""
        if self.provider is None:
            request = current_request.get()
            in_plugin = request is not None and request.client == PLUGIN_CLIENT
            message = NO_PROVIDER_IN_PLUGIN if in_plugin else self.no_provider_message
            raise RpcError(WireCode.NO_PROVIDER, message)
        return self.provider

    def model_for(self, purpose: str) -> str:
        """The model of a chat turn of ``purpose`` ("chat", "fast" or "deep"): the fast or deep
        model when asked for and configured, else the chat model."""
        model = self.require_model()
        settings = self.settings
        if purpose == "deep" and settings is not None and settings.deep_model:
            return settings.deep_model
        if purpose == "fast" and settings is not None and settings.fast_model:
            return settings.fast_model
        return model

    def title_later(self, conversation_id: str, exchange: list[Message]) -> None:
        """Ask the fast model, in the background, for the conversation's title (only when a
        fast model is configured: the first words of the question serve otherwise)."""
        fast = self.settings.fast_model if self.settings is not None else None
        if fast is None or self.provider is None:
            return
        title = make_title(
            self.provider,
            exchange,
            fast,
            on_usage=self.spending.recorder(conversation_id, "title"),
            rename=functools.partial(self.conversations.store.rename, conversation_id),
        )
        task = asyncio.create_task(title, name=f"title {conversation_id}")
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def answer_options(self) -> dict[str, Any]:
        """The answer length and temperature the settings give every chat turn."""
        if self.settings is None:
            return {}
        return {"max_tokens": self.settings.max_tokens, "temperature": self.settings.temperature}

    def require_model(self) -> str:
        self.require_provider()
        assert self.model is not None
        return self.model

    async def aclose(self) -> None:
        """Stop background work, close the conversation store and the provider's client."""
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        self.conversations.store.close()
        if self.provider is not None:
            await self.provider.aclose()

    def _new_service(self, conversation_id: str) -> LLMService:
        from llm_service import LLMService

        service = LLMService(
            self.require_provider(),
            model=self.require_model(),
            tools=self.tools,  # the same vault tools for every conversation: built once
            on_usage=self.spending.recorder(conversation_id, "chat"),
            **self.answer_options(),
        )
        service.set_system_prompt(system_prompt(self.vault.name))
        return service


def _nobody(method: str, params: dict[str, Any]) -> None:
    """No server yet: notifications go nowhere."""
