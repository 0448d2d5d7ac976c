"""Which provider and model a request's ``model`` names: the routing of the HTTP API.

``provider/model`` (LiteLLM's convention: ``anthropic/claude-…``, ``ollama/llama3.1``) and
``provider:model`` (the settings' convention) both name a provider; the id is split at its first
``/`` or ``:`` only when the part before it is a known provider name, so LM Studio's
``qwen/qwen3-4b`` goes whole to the configured provider. ``lmstudio`` is a runtime reached through
the ``openai`` provider with a base URL, not a provider name.

The configured chat provider serves bare ids and its own name; any other provider is built once
from the settings (its key; its default address) and reused until the settings change. A known
provider that is not configured is a 400 naming those that are.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Final, get_args

from llm_service.factory import ProviderName
from plugin_bridge.app.settings.config import (
    BridgeSettings,
    ProviderChoice,
    build_provider,
    default_model,
)
from plugin_bridge.wire.errors import RpcError, WireCode

if TYPE_CHECKING:
    from llm_service import Provider
    from plugin_bridge.app.state import BridgeApp

PROVIDER_NAMES: Final[tuple[ProviderName, ...]] = get_args(ProviderName)


def split_model(spec: str) -> tuple[ProviderName | None, str]:
    """(provider, model) of a request's model id; provider None means the configured one.

    The one place that parses it: it switches to the library's factory
    (``llm_service.parse_model_spec``) once that lands (issue 25)."""
    for position, char in enumerate(spec):
        if char in "/:":
            prefix = spec[:position]
            for name in PROVIDER_NAMES:
                if prefix == name:
                    return name, spec[position + 1 :]
            break
    return None, spec


class ProviderPool:
    """The providers the HTTP API routes to (see the module docstring)."""

    def __init__(self, bridge: BridgeApp) -> None:
        self.bridge = bridge
        self._built: dict[str, Provider] = {}
        self._settings: BridgeSettings | None = None
        self._closing: set[asyncio.Task[None]] = set()

    def resolve(self, spec: str | None) -> tuple[Provider, str]:
        """The provider and model for a request's ``model`` (None: the configured chat model)."""
        bridge = self.bridge
        if not spec:
            return bridge.require_provider(), bridge.require_model()
        name, model = split_model(spec)
        if name is None or name == bridge.provider_name:
            provider = bridge.require_provider()
            return provider, model or bridge.require_model()
        return self._other(name), model or default_model(name)

    def configured(self) -> list[str]:
        """The providers this server can route to, the chat provider first."""
        settings = self.bridge.config
        names = [self.bridge.provider_name] if self.bridge.provider is not None else []
        for name in PROVIDER_NAMES:
            if name not in names and _has_credentials(settings, name):
                names.append(name)
        return [name for name in names if name is not None]

    def _other(self, name: ProviderName) -> Provider:
        settings = self.bridge.config
        if settings is not self._settings:  # settings/update: keys or addresses may differ
            self._drop_built()
            self._settings = settings
        provider = self._built.get(name)
        if provider is not None:
            return provider
        if not _has_credentials(settings, name):
            configured = ", ".join(self.configured()) or "none"
            raise RpcError(
                WireCode.INVALID_PARAMS,
                f"Provider {name} is not configured on this server (configured: {configured}): "
                "set its API key in the settings, or use a configured one.",
            )
        # The single base_url is the chat provider's own; another provider uses its default.
        own = settings.model_copy(update={"base_url": None})
        provider = build_provider(own, ProviderChoice(name, default_model(name)))
        assert provider is not None
        self._built[name] = provider
        return provider

    def _drop_built(self) -> None:
        for provider in self._built.values():
            task = asyncio.get_running_loop().create_task(provider.aclose())
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)
        self._built = {}

    async def aclose(self) -> None:
        await asyncio.gather(*(p.aclose() for p in self._built.values()), *self._closing)
        self._built = {}


def _has_credentials(settings: BridgeSettings, name: ProviderName) -> bool:
    """Whether the settings let this server call ``name`` besides the chat provider."""
    if name == "ollama":
        return settings.ollama_host is not None
    key = settings.anthropic_api_key if name == "anthropic" else settings.openai_api_key
    return key is not None and bool(key.get_secret_value().strip())
