"""The bridge application's state: the vault, the model provider, conversations, the tools.

Built by whoever serves it (``cli/serve.py``, the tests) and handed, with the method router, to
:func:`plugin_bridge.wire.server.start_server`; handlers reach it as ``ctx.app``. It knows nothing
of connections or routing: the confirm round trip comes in as a callback
(:func:`plugin_bridge.app.turn.confirm.ask_client`).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from llm_service import LLMService, Usage
from llm_service.pricing import cost_usd
from llm_service.tools import ToolRegistry
from plugin_bridge.app.assistant import Assistant
from plugin_bridge.app.bot_state import BotState
from plugin_bridge.app.clients import OWNER_CALLER, Caller, ClientKeys
from plugin_bridge.app.conversations.live import MAX_CONVERSATIONS, Conversations
from plugin_bridge.app.conversations.store import ConversationStore
from plugin_bridge.app.conversations.titles import make_title
from plugin_bridge.app.conversations.usage import Budgets, Spending
from plugin_bridge.app.conversations.usage_log import UsageLog
from plugin_bridge.app.live_settings import save_fields, stage
from plugin_bridge.app.settings.config import (
    NO_PROVIDER_IN_PLUGIN,
    PLUGIN_CLIENT,
    BridgeSettings,
    McpSettings,
    SettingsError,
)
from plugin_bridge.app.settings.providers import ProviderSetup, Route
from plugin_bridge.app.tool_sources import McpSources, SourceStatus
from plugin_bridge.app.turn.prompts import ContextNoteCache, system_prompt
from plugin_bridge.app.turn.setup import register_setup_tool, setup_prompt, showing_the_note
from plugin_bridge.app.vault_tools import WRITE_TOOL_NAMES, offer_related, register_vault_tools
from plugin_bridge.app.write_through import DEFAULT_APPLY_TIMEOUT, WriteThrough
from plugin_bridge.vault.semantic.ann import ANN_THRESHOLD
from plugin_bridge.wire.errors import RpcError, WireCode
from plugin_bridge.wire.models import IndexProgress

if TYPE_CHECKING:
    from llm_service import LLMService, Message
    from llm_service.embedders import Embedder
    from llm_service.tools import ConfirmCallback, ToolRegistry
    from plugin_bridge.app.settings.providers import Purpose
    from plugin_bridge.vault.semantic.semantic_index import Progress, SemanticIndex
    from plugin_bridge.vault.vault import Vault
    from plugin_bridge.wire.models import Notification

logger = logging.getLogger(__name__)
_DEFAULTS = BridgeSettings.model_construct()
"""Every setting at its default, without reading the environment or the settings file."""


class BridgeApp:
    """Shared state of one server; see the module docstring."""

    def __init__(
        self,
        vault: Vault,
        *,
        confirm: ConfirmCallback,
        providers: ProviderSetup | None = None,
        token: str | None = None,
        max_conversations: int = MAX_CONVERSATIONS,
        store: ConversationStore | None = None,
        budgets: Budgets | None = None,
        settings: BridgeSettings | None = None,
        apply_timeout: float = DEFAULT_APPLY_TIMEOUT,
    ) -> None:
        self.vault = vault
        self.providers = providers if providers is not None else ProviderSetup(None)
        """Where each purpose's model calls go; settings/update replaces it whole."""
        self.token = token or secrets.token_urlsafe(32)
        self.confirm = confirm
        self.writes = WriteThrough(vault.notes, timeout=apply_timeout)
        """Every write the server makes goes through the plugin's editor when it is open."""
        self.settings = settings
        """What serve started with; settings/update replaces it (None in tests without one)."""
        self.clients = ClientKeys(vault.data_dir)
        """The client keys (``clients add``), read again when the file changes."""
        self.usage_log = UsageLog(vault.data_dir)  # first: it takes over the old store's rows
        store = store if store is not None else ConversationStore(vault.data_dir)
        self.spending = Spending(self.usage_log, budgets or Budgets())
        self.context_notes = ContextNoteCache()
        """The vault's context note, read again only when it changed."""
        self.conversations = Conversations(self._new_service, store, limit=max_conversations)
        self.assistant = Assistant(self)
        """The one-off model calls (HTTP /chat and /v1, commands)."""
        self._tools: ToolRegistry | None = None
        self._tool_sources: McpSources | None = None
        self._setup_tools: ToolRegistry | None = None
        self._background: set[asyncio.Task[None]] = set()
        self._applying = asyncio.Lock()
        self.bots: list[BotState] = []
        """The chat-app bots' states, for health (serve sets them when it starts the bots)."""
        self.broadcast: Callable[[Notification], None] = _nobody
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
        elif vault.semantic is not None:
            vault.semantic.confirm_over_usd = confirm_over_usd
            await vault.semantic.switch(embedder)
        else:
            self._follow(
                vault.use_embedder(
                    embedder, confirm_over_usd=confirm_over_usd, ann_threshold=ann_threshold
                )
            )
            assert vault.semantic is not None
            await vault.semantic.start()
        if self._tools is not None:
            offer_related(self._tools, vault)

    async def apply(self, settings: BridgeSettings, *, save: Iterable[str] | None = None) -> None:
        """Put ``settings`` in effect as one transaction: build what is new (providers, a key
        checked with one cheap call, the embedder), write ``save`` (the settings' field names;
        default: every field that changed; empty for settings read from the file) durably to
        the settings file, then swap everything in at once. On any failure, close what was
        built and change nothing: SettingsError (one sentence) or the provider's LLMError."""
        async with self._applying:
            staged = await stage(self, settings)
            fields = staged.changed if save is None else frozenset(save)
            try:
                if fields:
                    await asyncio.to_thread(save_fields, settings, fields)
            except BaseException:
                await staged.discard(self.providers)
                raise
            old = self.providers
            self.settings, self.providers = settings, staged.providers  # the swap: no await
            self.spending.budgets = Budgets(settings.daily_budget_usd, settings.monthly_budget_usd)
            if "exclude" in staged.changed:
                self.vault.set_scope(settings.exclude)
            if staged.embedder_changed:
                await self.use_embedder(
                    staged.embedder,
                    settings.embedder_confirm_over_usd,
                    settings.vector_ann_threshold,
                )
            if "mcp" in staged.changed:
                await self.use_mcp_servers(settings.mcp)
            if old is not staged.providers:
                await old.aclose()

    def _embedding_progress(self, progress: Progress) -> None:
        message = IndexProgress.model_validate(progress, from_attributes=True)
        self.broadcast(message.model_copy(update={"unreadable_pdfs": self.unreadable_pdfs()}))

    def unreadable_pdfs(self) -> int:
        """PDFs the index skipped as unreadable (0 while the index is rebuilt)."""
        return self.vault.index.unreadable_pdfs

    def _embedding_spend(self, model: str, tokens: int) -> None:
        """Record a paid embedding batch like a chat call (purpose "embedding"; only OpenAI's
        own API embeds for money)."""
        usage = Usage(tokens, 0)
        cost = cost_usd(model, usage, "openai")
        self.spending.recorder(None, "embedding", OWNER_CALLER)(model, usage, cost, "openai")

    @property
    def tools(self) -> ToolRegistry:
        """The vault tools without a model (tools/list, tools/execute); built on first use."""
        if self._tools is None:
            self._tools = ToolRegistry(confirm=self.confirm)
            register_vault_tools(
                self._tools, self.vault, write_permission="ask", writer=self.writes.write
            )
        return self._tools

    async def use_mcp_servers(self, mcp: McpSettings) -> None:
        """Offer the model the tools of these MCP servers (started, stopped or restarted to
        match; called at start and when the settings change)."""
        if self._tool_sources is None:
            if not mcp.servers:
                return
            self._tool_sources = McpSources(self.tools)
        await self._tool_sources.apply(mcp)

    def mcp_status(self) -> list[SourceStatus]:
        """Each configured MCP server's state, for health."""
        return [] if self._tool_sources is None else self._tool_sources.status()

    @property
    def setup_tools(self) -> ToolRegistry:
        """The tools of a setup turn (chat/send with setup): the vault tools and
        ``complete_setup``, which writes the context note after the user's review."""
        if self._setup_tools is None:

            def note_path() -> str:
                return self.config.context_note

            self._setup_tools = ToolRegistry(confirm=showing_the_note(self.confirm, note_path))
            register_vault_tools(
                self._setup_tools, self.vault, write_permission="ask", writer=self.writes.write
            )
            register_setup_tool(self._setup_tools, self.vault, note_path, self.writes.write)
        return self._setup_tools

    def prepare_turn(self, service: LLMService, *, setup: bool, has_note: bool) -> None:
        """The system prompt and tools of a turn: the setup conversation's, or every chat's."""
        if setup:
            service.tools = self.setup_tools
            prompt = setup_prompt(self.vault.name, self.config.context_note, has_note)
        else:
            service.tools = self.tools
            prompt = system_prompt(self.vault.name)
        service.set_system_prompt(prompt)

    def tools_asking(self, confirm: ConfirmCallback, caller: Caller) -> ToolRegistry:
        """Every chat's tools with writes approved by ``confirm`` (a chat app's buttons); a
        caller without scope ``write`` is not offered the write tools at all."""
        hidden = () if caller.allows("write") else WRITE_TOOL_NAMES
        return self.tools.view(confirm, hidden=hidden)

    @property
    def config(self) -> BridgeSettings:
        """The settings in effect; the defaults when the app was built without any (tests)."""
        return self.settings if self.settings is not None else _DEFAULTS

    def route(self, purpose: Purpose, client: str | None = None, model: str | None = None) -> Route:
        """The provider and model of a call of ``purpose`` ("chat", "fast" or "deep": the fast
        or deep model when configured, else the chat model; ``model``: this model spec
        instead, a switcher's choice), or -32011 saying what to configure: in the plugin's
        settings when ``client`` (the program's name) is the plugin, else with the flags and
        environment variables (the CLI, other clients)."""
        try:
            route = self.providers.route_spec(model) if model else self.providers.route(purpose)
        except SettingsError as exc:
            raise RpcError(WireCode.NO_PROVIDER, str(exc)) from exc
        if route is None:
            in_plugin = client == PLUGIN_CLIENT
            message = NO_PROVIDER_IN_PLUGIN if in_plugin else self.providers.missing
            raise RpcError(WireCode.NO_PROVIDER, message)
        return route

    def title_later(self, conversation_id: str, exchange: list[Message], caller: Caller) -> None:
        """Ask the fast model, in the background, for the conversation's title (only when a
        fast model is configured: the first words of the question serve otherwise); its usage
        is ``caller``'s."""
        if self.providers.chat is None or not self.providers.configured("fast"):
            return
        title = make_title(
            self.assistant,
            conversation_id,
            exchange,
            caller,
            rename=lambda title: self.conversations.store.execute(
                lambda store: store.rename(conversation_id, title)
            ),
        )
        task = asyncio.create_task(title, name=f"title {conversation_id}")
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def answer_options(self) -> dict[str, Any]:
        """The answer length and temperature the settings give every chat turn."""
        if self.settings is None:
            return {}
        return {"max_tokens": self.settings.max_tokens, "temperature": self.settings.temperature}

    async def aclose(self) -> None:
        """Stop background work, close the conversation store and the provider's client."""
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        if self._tool_sources is not None:
            await self._tool_sources.aclose()
        await self.conversations.settled()  # every completed turn is stored before closing
        await self.conversations.store.execute(ConversationStore.close)
        await self.usage_log.execute(UsageLog.close)  # after the rows posted so far
        await self.clients.execute(ClientKeys.flush_used)
        await self.providers.aclose()

    def _new_service(self, conversation_id: str) -> LLMService:
        """A conversation's service: the same vault tools for every one (built once); its
        usage recorder is set per turn, with the caller (``app/turn/conversation.py``)."""
        return self.assistant.service(self.tools)


def _nobody(notification: Notification) -> None:
    """No server yet: notifications go nowhere."""
