"""settings/get (keys masked) and settings/update (partial, validated, persisted, live)."""

from __future__ import annotations

from typing import Any

from plugin_bridge.app.live_settings import update_settings
from plugin_bridge.app.mcp_approval import approve
from plugin_bridge.app.settings.config import (
    BridgeSettings,
    McpSettings,
    config_file,
    shown,
)
from plugin_bridge.app.settings.keys import KEY_FIELDS
from plugin_bridge.app.settings.providers import ProviderSetup
from plugin_bridge.handlers.context import AppRouter, Context
from plugin_bridge.wire.models import (
    SETTINGS_GET,
    SETTINGS_UPDATE,
    BaseUrls,
    Empty,
    KeysModel,
    McpServerInfo,
    McpServerParams,
    ModelsByPurpose,
    SettingsResult,
    SettingsUpdateParams,
)

_PURPOSE_FIELDS = {"chat": "model", "fast": "fast_model", "deep": "deep_model"}


async def get_settings(ctx: Context, params: Empty) -> SettingsResult:
    """The settings in effect; API keys masked (they are write-only)."""
    return _result(ctx.app.settings or BridgeSettings(), ctx.app.providers)


async def update(ctx: Context, params: SettingsUpdateParams) -> SettingsResult:
    """Change some settings: checked (a new key with one cheap provider call), saved to the
    settings file, in effect from the next request. Fields not sent stay; null sets one back
    to its default."""
    changes: dict[str, Any] = {
        name: getattr(params, name)
        for name in params.model_fields_set
        if name not in ("models", "base_urls", "mcp_servers")
    }
    if params.mcp_servers is not None:
        given = {
            name: None if server is None else server.model_dump(mode="json", exclude_none=True)
            for name, server in params.mcp_servers.items()
        }
        changes["mcp"] = _mcp_changed(ctx.app.config.mcp, params.mcp_servers)
        McpSettings.model_validate(changes["mcp"])  # a bad server is -32602 before anyone is asked
        await approve(ctx.app.writes.plugin(), ctx.app.config.mcp, given)
    if params.base_urls is not None:
        known = (ctx.app.settings or BridgeSettings()).base_urls
        urls: dict[str, str | None] = {name: url for name, url in known.items()}
        urls.update(params.base_urls.model_dump(include=params.base_urls.model_fields_set))
        changes["base_urls"] = {name: url for name, url in urls.items() if url is not None}
    if params.models is not None:
        for purpose in params.models.model_fields_set:
            changes[_PURPOSE_FIELDS[purpose]] = getattr(params.models, purpose)
    updated = await update_settings(ctx.app, ctx.app.vault.notes, changes)
    return _result(updated, ctx.app.providers)


def _result(settings: BridgeSettings, providers: ProviderSetup) -> SettingsResult:
    masked = shown(settings)
    mcp: Any = masked["mcp"]
    return SettingsResult(
        provider=settings.provider or providers.name,
        base_url=settings.base_url,
        base_urls=BaseUrls.model_validate(settings.base_urls),
        models=ModelsByPurpose(
            chat=settings.model or providers.model,
            fast=settings.fast_model,
            deep=settings.deep_model,
        ),
        daily_budget_usd=settings.daily_budget_usd,
        monthly_budget_usd=settings.monthly_budget_usd,
        exclude=list(settings.exclude),
        max_tokens=settings.max_tokens,
        temperature=settings.temperature,
        timeout=settings.timeout,
        context_note=settings.context_note,
        prompts_folder=settings.prompts_folder,
        conversations_folder=settings.conversations_folder,
        embedder=settings.embedder,
        embedder_base_url=settings.embedder_base_url,
        mcp_servers=[
            McpServerInfo.model_validate({"name": name, **server})
            for name, server in mcp["servers"].items()
        ],
        keys=KeysModel.model_validate({name: masked[key] for name, key in KEY_FIELDS.items()}),
        config_file=str(config_file()),
    )


def _mcp_changed(
    current: McpSettings, servers: dict[str, McpServerParams | None]
) -> dict[str, Any]:
    """The ``mcp`` table after adding, replacing (given) and removing (null) these servers."""
    table = current.model_dump(mode="json", exclude_none=True)  # TOML has no null
    for name, server in servers.items():
        if server is None:
            table["servers"].pop(name, None)
        else:
            table["servers"][name] = server.model_dump(mode="json", exclude_none=True)
    return table


def register(router: AppRouter) -> None:
    router.register(SETTINGS_GET, get_settings)
    router.register(SETTINGS_UPDATE, update)
