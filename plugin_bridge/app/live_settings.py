"""Settings changed over the wire (``settings/update``): validated, a new key checked with the
provider, persisted to the settings file, and in effect from the next request."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from pydantic import SecretStr, ValidationError

from plugin_bridge.app.config import (
    BridgeSettings,
    build_embedder,
    build_provider,
    choose_provider,
    embedder_problem,
    write_settings_file,
)
from plugin_bridge.app.usage import Budgets
from plugin_bridge.wire.errors import RpcError, WireCode, field_problems

if TYPE_CHECKING:
    from plugin_bridge.app.state import BridgeApp

KEYS: Final = ("anthropic_api_key", "openai_api_key")
"""Write-only settings: set, never read back unmasked."""
CHECKED: Final = frozenset({"provider", "base_url", *KEYS})
"""Changes that make the server check the provider with a cheap call before keeping them."""
EMBEDDER_FIELDS: Final = frozenset({"embedder", "embedder_base_url"})


async def update_settings(app: BridgeApp, changes: dict[str, Any]) -> BridgeSettings:
    """Apply ``changes`` (settings field names; None clears one) or raise, changing nothing:
    -32602 for an invalid value or a provider that cannot work, -32010 when the provider refuses
    a new key."""
    current = app.settings if app.settings is not None else BridgeSettings()
    values = {**current.model_dump(), **changes}
    try:
        updated = BridgeSettings.model_validate(values)
    except ValidationError as exc:
        raise RpcError(
            WireCode.INVALID_PARAMS, f"Invalid settings: {field_problems(exc)}."
        ) from exc
    choice = choose_provider(updated)
    provider = build_provider(updated, choice)
    if changes.keys() & CHECKED:
        if updated.provider is not None and provider is None:
            raise RpcError(WireCode.INVALID_PARAMS, choice.missing)
        if provider is not None:
            await provider.validate_key()
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
    app.provider, app.provider_name, app.model = provider, choice.name, choice.model
    app.spending.budgets = Budgets(updated.daily_budget_usd, updated.monthly_budget_usd)
    if "exclude" in changes:
        app.vault.set_scope(updated.exclude)
    if changes.keys() & EMBEDDER_FIELDS:
        await app.use_embedder(embedder, updated.embedder_confirm_over_usd)
    if old is not None and old is not provider:
        await old.aclose()
    return updated


def _plain(value: Any) -> Any:
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    return list(value) if isinstance(value, tuple) else value
