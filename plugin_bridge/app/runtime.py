"""The runtime: what the settings put in effect, as one immutable value.

A :class:`Runtime` holds the settings, the providers they select (one
:class:`~plugin_bridge.app.settings.providers.ProviderSetup`) and those providers' model lists;
the answer options and every route are read from it. The composition root (``app/state.py``)
holds the one in effect; a settings change builds a new one and swaps it in with one assignment,
so a request that read the runtime once sees one consistent set of settings and providers.
Services get a reader (``Callable[[], Runtime]``) and read it when they need it, never a field
of the root.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, TypedDict

from plugin_bridge.app.model_lists import ModelLists
from plugin_bridge.app.settings.config import (
    NO_PROVIDER_IN_PLUGIN,
    PLUGIN_CLIENT,
    BridgeSettings,
    SettingsError,
)
from plugin_bridge.wire.errors import RpcError, WireCode

if TYPE_CHECKING:
    from plugin_bridge.app.settings.providers import ProviderSetup, Purpose, Route

_DEFAULTS: Final = BridgeSettings.model_construct()
"""Every setting at its default, without reading the environment or the settings file."""


class AnswerOptions(TypedDict, total=False):
    """The answer length and temperature the settings give every chat turn."""

    max_tokens: int
    temperature: float | None


@dataclass(frozen=True, slots=True)
class Runtime:
    """The settings in effect and what they built (see the module docstring)."""

    settings: BridgeSettings | None
    """What serve started with, or the last settings applied (None in tests without any)."""
    providers: ProviderSetup
    """Where each purpose's model calls go."""
    lists: ModelLists = field(default_factory=ModelLists)
    """The providers' model lists (kept as long as the providers are)."""

    @property
    def config(self) -> BridgeSettings:
        """The settings in effect; the defaults when the app was built without any (tests)."""
        return self.settings if self.settings is not None else _DEFAULTS

    @property
    def answer_options(self) -> AnswerOptions:
        """The answer length and temperature the settings give every chat turn."""
        if self.settings is None:
            return {}
        return {"max_tokens": self.settings.max_tokens, "temperature": self.settings.temperature}

    def route(self, purpose: Purpose, client: str | None = None, model: str | None = None) -> Route:
        """The provider and model of a call of ``purpose`` ("chat", "fast" or "deep": the fast
        or deep model when configured, else the chat model; ``model``: this model spec
        instead, a switcher's choice), or -32011 saying what to configure: in the plugin's
        settings when ``client`` (the program's name) is the plugin, else with the flags and
        environment variables (the CLI, other clients)."""
        providers = self.providers
        try:
            route = providers.route_spec(model) if model else providers.route(purpose)
        except SettingsError as exc:
            raise RpcError(WireCode.NO_PROVIDER, str(exc)) from exc
        if route is None:
            in_plugin = client == PLUGIN_CLIENT
            message = NO_PROVIDER_IN_PLUGIN if in_plugin else providers.missing
            raise RpcError(WireCode.NO_PROVIDER, message)
        return route
