"""Which provider and model a request's ``model`` names: the routing of the HTTP API.

``provider/model`` (LiteLLM's convention: ``anthropic/claude-…``, ``ollama/llama3.1``) and
``provider:model`` (the settings' convention) both name a provider, as
:func:`llm_service.parse_model_spec` reads them: the id is split at its first ``/`` or ``:``
only when the part before it is a known provider name, so LM Studio's ``qwen/qwen3-4b`` goes
whole to the configured provider. ``lmstudio`` is a runtime reached through the ``openai``
provider with a base URL, not a provider name.

The configured chat provider serves bare ids and its own name; any other provider comes from
the app's :class:`~plugin_bridge.app.settings.providers.ProviderSetup` (its key, its base URL),
which builds each provider once and is replaced whole when the settings change. A known provider
that is not configured is a 400 naming those that are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llm_service.factory import PROVIDER_NAMES, ProviderName, parse_model_spec
from plugin_bridge.app.settings.config import BridgeSettings, SettingsError, default_model
from plugin_bridge.wire.errors import RpcError, WireCode

if TYPE_CHECKING:
    from llm_service import Provider
    from plugin_bridge.app.state import BridgeApp


def split_model(spec: str) -> tuple[ProviderName | None, str]:
    """(provider, model) of a request's model id; provider None means the configured one."""
    parsed = parse_model_spec(spec)
    return parsed.provider, parsed.model


class ProviderPool:
    """The providers the HTTP API routes to (see the module docstring)."""

    def __init__(self, bridge: BridgeApp) -> None:
        self.bridge = bridge

    def resolve(self, spec: str | None) -> tuple[Provider, str]:
        """The provider and model for a request's ``model`` (None: the configured chat model)."""
        bridge = self.bridge
        name, model = split_model(spec) if spec else (None, "")
        if name is None or name == bridge.providers.name:
            chat = bridge.route("chat")
            return chat.provider, model or chat.model
        return self._other(name), model or default_model(name)

    def configured(self) -> list[ProviderName]:
        """The providers this server can route to, the chat provider first."""
        settings = self.bridge.config
        chat = self.bridge.providers.name
        names = [chat] if chat is not None else []
        names += [n for n in PROVIDER_NAMES if n != chat and _has_credentials(settings, n)]
        return names

    def _other(self, name: ProviderName) -> Provider:
        if not _has_credentials(self.bridge.config, name):
            configured = ", ".join(self.configured()) or "none"
            raise RpcError(
                WireCode.INVALID_PARAMS,
                f"Provider {name} is not configured on this server (configured: {configured}): "
                "set its API key in the settings, or use a configured one.",
            )
        try:
            return self.bridge.providers.provider(name)
        except SettingsError as exc:
            raise RpcError(WireCode.INVALID_PARAMS, str(exc)) from exc


def _has_credentials(settings: BridgeSettings, name: ProviderName) -> bool:
    """Whether the settings let this server call ``name`` besides the chat provider."""
    if name == "ollama":
        return settings.ollama_host is not None or "ollama" in settings.base_urls
    key = settings.anthropic_api_key if name == "anthropic" else settings.openai_api_key
    return key is not None and bool(key.get_secret_value().strip())
