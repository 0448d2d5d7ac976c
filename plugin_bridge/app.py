"""The bridge application: the vault, the model provider, conversations and the method router.

Built in-process by tests (``BridgeApp(vault, provider=ScriptedProvider(), init_timeout=0.2)``)
and by ``serve`` from the settings. Transport-free: :mod:`plugin_bridge.server` connects it to
WebSockets.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Collection
from typing import TYPE_CHECKING, Final

from plugin_bridge.config import NO_PROVIDER
from plugin_bridge.context import current_request
from plugin_bridge.conversations import MAX_CONVERSATIONS, Conversations
from plugin_bridge.errors import ErrorCode, RpcError
from plugin_bridge.handlers import build_router
from plugin_bridge.models import ToolConfirmParams, ToolConfirmResult, dump
from plugin_bridge.security import DEFAULT_ALLOWED_ORIGINS

if TYPE_CHECKING:
    from llm_service import LLMService, Provider, ToolCall
    from llm_service.tools import ToolRegistry
    from plugin_bridge.connection import Connection
    from plugin_bridge.protocol import Response
    from plugin_bridge.vault.vault import Vault

logger = logging.getLogger("plugin_bridge.app")

CONFIRM_METHOD: Final = "tool/confirm"
DEFAULT_INIT_TIMEOUT: Final = 10.0
DEFAULT_CONFIRM_TIMEOUT: Final = 120.0


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
        provider: Provider | None = None,
        provider_name: str | None = None,
        model: str | None = None,
        no_provider_message: str = NO_PROVIDER,
        token: str | None = None,
        allowed_origins: Collection[str] = DEFAULT_ALLOWED_ORIGINS,
        init_timeout: float = DEFAULT_INIT_TIMEOUT,
        confirm_timeout: float = DEFAULT_CONFIRM_TIMEOUT,
        max_conversations: int = MAX_CONVERSATIONS,
    ) -> None:
        if provider is not None and not model:
            raise ValueError("a provider needs a model name")
        self.vault = vault
        self.provider = provider
        self.provider_name = provider_name if provider is not None else None
        self.model = model if provider is not None else None
        self.no_provider_message = no_provider_message
        self.token = token or secrets.token_urlsafe(32)
        self.allowed_origins = frozenset(allowed_origins)
        self.init_timeout = init_timeout
        self.confirm_timeout = confirm_timeout
        self.router = build_router()
        self.conversations = Conversations(self._new_service, limit=max_conversations)
        self._tools: ToolRegistry | None = None
        self.connections: set[Connection] = set()

    @property
    def tools(self) -> ToolRegistry:
        """The vault tools without a model (tools/list, tools/execute); built on first use."""
        if self._tools is None:
            from llm_service.tools import ToolRegistry
            from plugin_bridge.vault.tools import register_vault_tools

            self._tools = ToolRegistry(confirm=self.confirm_tool_call)
            register_vault_tools(self._tools, self.vault, write_permission="ask")
        return self._tools

    def require_provider(self) -> Provider:
        """The provider, or -32011 saying what to configure."""
        if self.provider is None:
            raise RpcError(ErrorCode.NO_PROVIDER, self.no_provider_message)
        return self.provider

    def require_model(self) -> str:
        self.require_provider()
        assert self.model is not None
        return self.model

    async def confirm_tool_call(self, call: ToolCall) -> bool:
        """Ask the client that sent the running request to approve ``call`` (tool/confirm).

        No answer within ``confirm_timeout`` seconds, an error answer, or no client to ask all
        mean "denied"; denied call ids are recorded on the request's context.
        """
        ctx = current_request.get()
        if ctx is None:
            logger.info("tool %s needs approval and no client is asking: denied", call.name)
            return False
        preview = await asyncio.to_thread(self._preview, call)
        params = ToolConfirmParams(tool=call.name, arguments=call.arguments, preview=preview)
        try:
            async with asyncio.timeout(self.confirm_timeout):
                answer = await ctx.peer.request(CONFIRM_METHOD, dump(params))
        except TimeoutError:
            logger.info(
                "tool/confirm for %s unanswered in %.0f s: denied", call.name, self.confirm_timeout
            )
            approved = False
        else:
            approved = _approved(answer)
        if not approved:
            ctx.denied.add(call.id)
        return approved

    async def shutdown_connections(self) -> None:
        """Cancel the work of every connection (before the transport closes them)."""
        await asyncio.gather(*(c.connection_lost() for c in list(self.connections)))

    async def aclose(self) -> None:
        """Release the provider's HTTP client."""
        if self.provider is not None:
            await self.provider.aclose()

    def _new_service(self) -> LLMService:
        from llm_service import LLMService
        from plugin_bridge.vault.tools import register_vault_tools

        service = LLMService(
            self.require_provider(), model=self.require_model(), confirm=self.confirm_tool_call
        )
        register_vault_tools(service, self.vault, write_permission="ask")
        service.set_system_prompt(system_prompt(self.vault.name))
        return service

    def _preview(self, call: ToolCall) -> str | None:
        from plugin_bridge.vault.errors import VaultError
        from plugin_bridge.vault.tools import preview_tool_call

        try:
            return preview_tool_call(self.vault, call)
        except VaultError:
            return None


def _approved(answer: Response) -> bool:
    from pydantic import ValidationError

    if answer.error is not None:
        return False
    try:
        return ToolConfirmResult.model_validate(answer.result, strict=True).approved
    except ValidationError:
        logger.info("ignoring a malformed tool/confirm answer: denied")
        return False
