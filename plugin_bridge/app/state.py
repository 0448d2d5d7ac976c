"""The bridge application's state: the vault, the model provider, conversations, the tools.

Built by whoever serves it (``cli/serve.py``, the tests) and handed, with the method router, to
:func:`plugin_bridge.wire.server.start_server`; handlers reach it as ``ctx.app``. It knows nothing
of connections or routing: the confirm round trip comes in as a callback
(:func:`plugin_bridge.app.confirm.ask_client`).
"""

from __future__ import annotations

import logging
import secrets
from typing import TYPE_CHECKING

from plugin_bridge.app.config import NO_PROVIDER, BridgeSettings
from plugin_bridge.app.conversations import MAX_CONVERSATIONS, Conversations
from plugin_bridge.app.store import ConversationStore
from plugin_bridge.app.usage import Budgets, Spending
from plugin_bridge.wire.errors import RpcError, WireCode

if TYPE_CHECKING:
    from llm_service import LLMService, Provider
    from llm_service.tools import ConfirmCallback, ToolRegistry
    from plugin_bridge.vault.vault import Vault

logger = logging.getLogger(__name__)


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
        provider_name: str | None = None,
        model: str | None = None,
        no_provider_message: str = NO_PROVIDER,
        token: str | None = None,
        max_conversations: int = MAX_CONVERSATIONS,
        store: ConversationStore | None = None,
        budgets: Budgets | None = None,
        settings: BridgeSettings | None = None,
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
        self.settings = settings
        """What serve started with; settings/update replaces it (None in tests without one)."""
        store = store if store is not None else ConversationStore(vault.data_dir)
        self.spending = Spending(store, budgets or Budgets())
        self.conversations = Conversations(self._new_service, store, limit=max_conversations)
        self._tools: ToolRegistry | None = None

    @property
    def tools(self) -> ToolRegistry:
        """The vault tools without a model (tools/list, tools/execute); built on first use."""
        if self._tools is None:
            from llm_service.tools import ToolRegistry
            from plugin_bridge.vault.tools import register_vault_tools

            self._tools = ToolRegistry(confirm=self.confirm)
            register_vault_tools(self._tools, self.vault, write_permission="ask")
        return self._tools

    def require_provider(self) -> Provider:
        """The provider, or -32011 saying what to configure."""
        if self.provider is None:
            raise RpcError(WireCode.NO_PROVIDER, self.no_provider_message)
        return self.provider

    def require_model(self) -> str:
        self.require_provider()
        assert self.model is not None
        return self.model

    async def aclose(self) -> None:
        """Close the conversation store and the provider's HTTP client."""
        self.conversations.store.close()
        if self.provider is not None:
            await self.provider.aclose()

    def _new_service(self, conversation_id: str) -> LLMService:
        from llm_service import LLMService
        from plugin_bridge.vault.tools import register_vault_tools

        service = LLMService(
            self.require_provider(),
            model=self.require_model(),
            confirm=self.confirm,
            on_usage=self.spending.recorder(conversation_id, "chat"),
        )
        register_vault_tools(service.tools, self.vault, write_permission="ask")
        service.set_system_prompt(system_prompt(self.vault.name))
        return service
