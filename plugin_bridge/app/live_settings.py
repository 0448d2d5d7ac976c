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
    choose_provider,
    embedder_problem,
    write_settings_file,
)
from plugin_bridge.app.settings.keys import rebound
from plugin_bridge.app.settings.providers import ProviderSetup, build_setup
from plugin_bridge.vault.errors import VaultError
from plugin_bridge.wire.errors import RpcError, WireCode

if TYPE_CHECKING:
    from plugin_bridge.app.state import BridgeApp

KEYS: Final = ("anthropic_api_key", "openai_api_key")
"""Write-only settings: set, never read back unmasked."""
CHECKED: Final = frozenset({"provider", "base_url", "base_urls", *KEYS})
"""Changes that make the server check the provider with a cheap call before keeping them."""
REBUILT: Final = CHECKED | {"model", "fast_model", "deep_model", "timeout", "ollama_host"}
"""Changes that need a new :class:`ProviderSetup` (other changes keep the one in use)."""
EMBEDDER_FIELDS: Final = frozenset({"embedder", "embedder_base_url"})
"""Changes that switch the embedder (the old vectors serve until the new ones are ready)."""


async def update_settings(app: BridgeApp, changes: dict[str, Any]) -> BridgeSettings:
    """Apply ``changes`` (settings field names; None sets one back to its default) or raise,
    changing nothing: -32602 for an invalid value or a provider that cannot work, -32010 when
    the provider refuses a new key."""
    import asyncio

    current = app.settings if app.settings is not None else BridgeSettings()
    updated = _validated(current, changes)
    changes = {**changes, **rebound(current, changes, choose_provider(updated).name)}
    updated = _validated(current, changes)
    await asyncio.to_thread(_check_locations, app, changes)
    providers = app.providers
    if changes.keys() & REBUILT:
        providers = await _providers_for(updated, changes)
    embedder = None
    if changes.keys() & EMBEDDER_FIELDS:
        embedder = build_embedder(updated)
        problem = await asyncio.to_thread(embedder_problem, updated, embedder)
        if problem is not None:
            raise RpcError(WireCode.INVALID_PARAMS, _unrevealing(updated, problem))
    try:
        write_settings_file({key: _plain(value) for key, value in changes.items()})
    except (OSError, ValueError) as exc:
        raise RpcError(
            WireCode.INVALID_PARAMS,
            f"The settings file cannot be written ({exc}): nothing changed.",
        ) from exc
    old = app.providers
    app.settings = updated
    app.providers = providers
    app.spending.budgets = Budgets(updated.daily_budget_usd, updated.monthly_budget_usd)
    if "exclude" in changes:
        app.vault.set_scope(updated.exclude)
    if changes.keys() & EMBEDDER_FIELDS:
        await app.use_embedder(
            embedder, updated.embedder_confirm_over_usd, updated.vector_ann_threshold
        )
    if "mcp" in changes:
        await app.use_mcp_servers(updated.mcp)
    if old is not providers:
        await old.aclose()
    return updated


async def _providers_for(settings: BridgeSettings, changes: dict[str, Any]) -> ProviderSetup:
    """The providers ``settings`` select, the chat provider checked with a cheap call when
    the provider, an address or a key changed: -32602 when they cannot work."""
    checked = bool(changes.keys() & CHECKED)
    if checked and settings.provider is not None:
        choice = choose_provider(settings)
        if choice.name is None:
            raise RpcError(WireCode.INVALID_PARAMS, choice.missing)
    try:
        return await build_setup(settings, check_key=checked)
    except SettingsError as exc:
        raise RpcError(WireCode.INVALID_PARAMS, str(exc)) from exc


def _validated(current: BridgeSettings, changes: dict[str, Any]) -> BridgeSettings:
    """``current`` with ``changes``, or -32602 naming the fields (as the wire names them)."""
    values = {**current.model_dump(), **changes}
    for key in [key for key, value in changes.items() if value is None]:
        # back to its default (not to the file's or environment's value it is replacing)
        values[key] = BridgeSettings.model_fields[key].get_default(call_default_factory=True)
    try:
        validated = BridgeSettings.model_validate(values)
        if "mcp" in changes:  # exactly as given: the file's servers would merge back in
            mcp = McpSettings.model_validate(changes["mcp"])
            validated = validated.model_copy(update={"mcp": mcp})
        return validated
    except ValidationError as exc:
        problems = [
            f"'{_wire_name(error['loc'])}': {error['msg'].rstrip('.')}"
            for error in exc.errors(include_url=False)[:3]
        ]
        raise RpcError(
            WireCode.INVALID_PARAMS, f"Invalid settings: {'; '.join(problems)}."
        ) from exc


def _wire_name(loc: tuple[int | str, ...]) -> str:
    """A settings field as the wire spells it: ``contextNote``, ``exclude.0``."""
    from pydantic.alias_generators import to_camel

    return ".".join(to_camel(part) if isinstance(part, str) else str(part) for part in loc)


LOCATIONS: Final = {
    "context_note": False,
    "prompts_folder": True,
    "conversations_folder": True,
}
"""Path settings, checked when set under the rules of note paths (True: a folder)."""


def _check_locations(app: BridgeApp, changes: dict[str, Any]) -> None:
    """-32602 naming the field for a path setting that is not a vault path notes may use."""
    for field, folder in LOCATIONS.items():
        value = changes.get(field)
        if value is None:
            continue
        try:
            app.vault.notes.check_location(value, folder=folder)
        except VaultError as exc:
            raise RpcError(
                WireCode.INVALID_PARAMS,
                f"Invalid settings: '{_wire_name((field,))}': {exc.message}",
            ) from exc


def _unrevealing(settings: BridgeSettings, problem: str) -> str:
    """The embedder's problem as a client may see it: for a model2vec path, one sentence
    whatever is wrong with it, so a client cannot learn which paths exist."""
    if settings.embedder is not None and settings.embedder.startswith("model2vec:"):
        return (
            "The model2vec embedder cannot use that path: give the folder of a model2vec "
            "model (config.json, tokenizer.json and model.safetensors) that the server can read."
        )
    return problem


def _plain(value: Any) -> Any:
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    return list(value) if isinstance(value, tuple) else value
