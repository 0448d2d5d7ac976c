"""Settings changed over the wire (``settings/update``): validated, a new key checked with the
provider, persisted to the settings file, and in effect from the next request."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from pydantic import SecretStr, ValidationError

from plugin_bridge.app.conversations.usage import Budgets
from plugin_bridge.app.settings.config import (
    BridgeSettings,
    McpSettings,
    SettingsError,
    build_embedder,
    build_provider,
    choose_provider,
    embedder_problem,
    with_served_model,
    write_settings_file,
)
from plugin_bridge.wire.errors import RpcError, WireCode, field_problems

if TYPE_CHECKING:
    from llm_service import Provider
    from plugin_bridge.app.state import BridgeApp

KEYS: Final = ("anthropic_api_key", "openai_api_key")
"""Write-only settings: set, never read back unmasked."""
CHECKED: Final = frozenset({"provider", "base_url", *KEYS})
"""Changes that make the server check the provider with a cheap call before keeping them."""
REBUILT: Final = CHECKED | {"model", "timeout", "ollama_host"}
"""Changes that need a new provider instance (other changes keep the one in use)."""
EMBEDDER_FIELDS: Final = frozenset({"embedder", "embedder_base_url"})
"""Changes that switch the embedder (the old vectors serve until the new ones are ready)."""


async def update_settings(app: BridgeApp, changes: dict[str, Any]) -> BridgeSettings:
    """Apply ``changes`` (settings field names; None sets one back to its default) or raise,
    changing nothing: -32602 for an invalid value or a provider that cannot work, -32010 when
    the provider refuses a new key."""
    current = app.settings if app.settings is not None else BridgeSettings()
    values = {**current.model_dump(), **changes}
    for key in [key for key, value in changes.items() if value is None]:
        # back to its default (not to the file's or environment's value it is replacing)
        values[key] = BridgeSettings.model_fields[key].get_default(call_default_factory=True)
    try:
        updated = BridgeSettings.model_validate(values)
        if "mcp" in changes:  # exactly as given: the file's servers would merge back in
            updated = updated.model_copy(update={"mcp": McpSettings.model_validate(changes["mcp"])})
    except ValidationError as exc:
        raise RpcError(
            WireCode.INVALID_PARAMS, f"Invalid settings: {field_problems(exc)}."
        ) from exc
    provider, name, model = app.provider, app.provider_name, app.model
    if changes.keys() & REBUILT:
        provider, name, model = await _provider_for(updated, changes)
    embedder = None
    if changes.keys() & EMBEDDER_FIELDS:
        import asyncio

        embedder = build_embedder(updated)
        problem = await asyncio.to_thread(embedder_problem, updated, embedder)
        if problem is not None:
            raise RpcError(WireCode.INVALID_PARAMS, problem)
    write_settings_file({key: _plain(value) for key, value in changes.items()})
    old = app.provider
    app.settings = updated
    app.provider, app.provider_name, app.model = provider, name, model
    app.spending.budgets = Budgets(updated.daily_budget_usd, updated.monthly_budget_usd)
    if "exclude" in changes:
        app.vault.set_scope(updated.exclude)
    if changes.keys() & EMBEDDER_FIELDS:
        await app.use_embedder(embedder, updated.embedder_confirm_over_usd)
    if "mcp" in changes:
        await app.use_mcp_servers(updated.mcp)
    if old is not None and old is not provider:
        await old.aclose()
    return updated


async def _provider_for(
    settings: BridgeSettings, changes: dict[str, Any]
) -> tuple[Provider | None, str | None, str | None]:
    """The provider, its name and model that ``settings`` select, checked with a cheap call
    when the provider, its address or a key changed."""
    choice = choose_provider(settings)
    provider = build_provider(settings, choice)
    if changes.keys() & CHECKED:
        if settings.provider is not None and provider is None:
            raise RpcError(WireCode.INVALID_PARAMS, choice.missing)
        if provider is not None:
            await provider.validate_key()
    try:
        choice = await with_served_model(choice, provider)
    except SettingsError as exc:
        raise RpcError(WireCode.INVALID_PARAMS, str(exc)) from exc
    return provider, choice.name, choice.model


def _plain(value: Any) -> Any:
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    return list(value) if isinstance(value, tuple) else value
