"""The composition root: :class:`BridgeApp` builds the application's services, each with the
collaborators it needs, and holds the :class:`~plugin_bridge.app.runtime.Runtime` in effect.

Built by whoever serves it (``cli/serving.py``, the tests) and handed, with the method router, to
:func:`plugin_bridge.wire.server.start_server`; handlers reach it as ``ctx.app``. It knows nothing
of connections or routing: the confirm round trip comes in as a callback
(:func:`plugin_bridge.app.turn.confirm.ask_client`), which the access policy
(:class:`~plugin_bridge.app.access.ToolAccess`) gives each run with its connection. No other
module of ``app/`` knows it: the services get a runtime reader and their collaborators
(``TurnParts``, the vault, the spending, the access policy…).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING

from llm_service import Usage
from llm_service.pricing import cost_usd
from plugin_bridge.app.access import ToolAccess
from plugin_bridge.app.assistant import Assistant
from plugin_bridge.app.bot_state import BotState
from plugin_bridge.app.clients import OWNER_CALLER, Caller, ClientKeys
from plugin_bridge.app.conversations.live import MAX_CONVERSATIONS, Conversations
from plugin_bridge.app.conversations.store import ConversationStore
from plugin_bridge.app.conversations.titles import make_title
from plugin_bridge.app.conversations.usage import Budgets, Spending
from plugin_bridge.app.conversations.usage_log import UsageLog
from plugin_bridge.app.live_settings import Staged, save_fields, stage
from plugin_bridge.app.runtime import Runtime
from plugin_bridge.app.settings.providers import ProviderSetup
from plugin_bridge.app.tool_sources import McpSources, SourceStatus
from plugin_bridge.app.turn.conversation import TurnParts
from plugin_bridge.app.turn.prompts import ContextNoteCache
from plugin_bridge.app.write_through import DEFAULT_APPLY_TIMEOUT, WriteThrough
from plugin_bridge.vault.semantic.ann import ANN_THRESHOLD
from plugin_bridge.wire.models import IndexProgress

if TYPE_CHECKING:
    from llm_service import LLMService, Message
    from llm_service.embedders import Embedder
    from plugin_bridge.app.settings.config import BridgeSettings, McpSettings
    from plugin_bridge.app.settings.providers import Purpose, Route
    from plugin_bridge.app.turn.confirm import ClientReviewer
    from plugin_bridge.vault.semantic.semantic_index import Progress, SemanticIndex
    from plugin_bridge.vault.vault import Vault
    from plugin_bridge.wire.models import Notification

logger = logging.getLogger(__name__)


class BridgeApp:
    """Shared state of one server; see the module docstring."""

    def __init__(
        self,
        vault: Vault,
        *,
        confirm: ClientReviewer,
        providers: ProviderSetup | None = None,
        token: str | None = None,
        max_conversations: int = MAX_CONVERSATIONS,
        store: ConversationStore | None = None,
        budgets: Budgets | None = None,
        settings: BridgeSettings | None = None,
        apply_timeout: float = DEFAULT_APPLY_TIMEOUT,
    ) -> None:
        self.vault = vault
        self.runtime = Runtime(
            settings, providers if providers is not None else ProviderSetup(None)
        )
        """The settings in effect and their providers; :meth:`apply` swaps it whole."""
        self.token = token or secrets.token_urlsafe(32)
        self.writes = WriteThrough(vault.notes, timeout=apply_timeout)
        """Every write the server makes goes through the plugin's editor when it is open."""
        self.access = ToolAccess(vault, self.writes, lambda: self.runtime.config, confirm)
        """Who sees which tools, which writes run and who reviews them, for every transport."""
        self.clients = ClientKeys(vault.data_dir)
        """The client keys (``clients add``), read again when the file changes."""
        self.usage_log = UsageLog(vault.data_dir)  # first: it takes over the old store's rows
        store = store if store is not None else ConversationStore(vault.data_dir)
        self.spending = Spending(self.usage_log, budgets or Budgets())
        self.context_notes = ContextNoteCache()
        """The vault's context note, read again only when it changed."""
        self.conversations = Conversations(self._new_service, store, limit=max_conversations)
        parts = TurnParts(
            lambda: self.runtime,
            vault,
            self.conversations,
            self.spending,
            self.context_notes,
            tools=self.access,
            title_later=self.title_later,
        )
        self.assistant = Assistant(parts, self.access)
        """Every model call: conversations' turns, the one-off calls (HTTP, commands)."""
        self._tool_sources: McpSources | None = None
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

    @property
    def settings(self) -> BridgeSettings | None:
        """The runtime's settings (None in tests built without any)."""
        return self.runtime.settings

    @property
    def providers(self) -> ProviderSetup:
        """The runtime's providers."""
        return self.runtime.providers

    @property
    def config(self) -> BridgeSettings:
        """The runtime's settings; the defaults when the app was built without any (tests)."""
        return self.runtime.config

    def route(self, purpose: Purpose, client: str | None = None, model: str | None = None) -> Route:
        """The runtime's route of ``purpose`` (:meth:`Runtime.route`)."""
        return self.runtime.route(purpose, client, model)

    async def apply(self, settings: BridgeSettings, *, save: Iterable[str] | None = None) -> None:
        """Put ``settings`` in effect as one transaction: stage the next runtime (new providers,
        a key checked with one cheap call, the embedder), write ``save`` (the settings' field
        names; default: every field that changed; empty for settings read from the file)
        durably to the settings file, then swap the runtime in with one assignment. A failure
        before the swap closes what was built and changes nothing: SettingsError (one
        sentence) or the provider's LLMError.

        After the swap the settings are in effect, as the file says: what follows them (the
        vault's scope, the embedder, the MCP servers) and closing the old providers cannot undo
        that. Each of those steps runs whatever the others did; a failure is logged in one line
        (never a key), and the old providers are closed once, even when cancelled."""
        async with self._applying:
            old = self.runtime
            staged = await stage(old, settings)
            fields = staged.changed if save is None else frozenset(save)
            try:
                if fields:
                    await asyncio.to_thread(save_fields, settings, fields)
            except BaseException:
                await staged.discard()
                raise
            self.runtime = staged.runtime  # the swap: one assignment, no await before budgets
            self.spending.budgets = Budgets(settings.daily_budget_usd, settings.monthly_budget_usd)
            try:
                await self._follow_settings(staged)
            finally:
                if staged.new_providers:
                    await _logged("closing the old providers", old.providers.aclose())

    async def _follow_settings(self, staged: Staged) -> None:
        """What follows the settings just swapped in (see :meth:`apply`)."""
        settings = staged.runtime.config
        if "exclude" in staged.changed:
            self.vault.set_scope(settings.exclude)
        if staged.embedder_changed:
            switching = self.use_embedder(
                staged.embedder, settings.embedder_confirm_over_usd, settings.vector_ann_threshold
            )
            await _logged("switching the embedder", switching)
        if "mcp" in staged.changed:  # their starts run in the background, shown by health
            await _logged("following the MCP servers", self.use_mcp_servers(settings.mcp))

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

    async def use_mcp_servers(self, mcp: McpSettings) -> None:
        """Offer the model the tools of these MCP servers (started, stopped or restarted to
        match; called at start and when the settings change)."""
        if self._tool_sources is None:
            if not mcp.servers:
                return
            self._tool_sources = McpSources(self.access.tools)
        await self._tool_sources.apply(mcp)

    def mcp_status(self) -> list[SourceStatus]:
        """Each configured MCP server's state, for health."""
        return [] if self._tool_sources is None else self._tool_sources.status()

    def title_later(self, conversation_id: str, exchange: list[Message], caller: Caller) -> None:
        """Ask the fast model, in the background, for the conversation's title (only when a
        fast model is configured: the first words of the question serve otherwise); its usage
        is ``caller``'s."""
        providers = self.runtime.providers
        if providers.chat is None or not providers.configured("fast"):
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
        await self.runtime.providers.aclose()

    def _new_service(self, conversation_id: str) -> LLMService:
        """A conversation's service: the same vault tools for every one (built once); its
        usage recorder is set per turn, with the caller (``app/turn/conversation.py``)."""
        return self.assistant.service(self.access.tools)


async def _logged(step: str, work: Awaitable[None]) -> None:
    """Await ``work``, a step after the swap of :meth:`BridgeApp.apply`: a failure is logged in
    one line (its type and sentence), never raised (the settings are in effect already)."""
    try:
        await work
    except Exception as exc:
        logger.warning("Settings applied, but %s failed (%s: %s).", step, type(exc).__name__, exc)


def _nobody(notification: Notification) -> None:
    """No server yet: notifications go nowhere."""
