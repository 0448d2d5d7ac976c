"""``models``: the models the configured provider serves, with context window, output limit,
tool support and prices, from the day's cache unless ``--refresh``."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Final, TextIO

from llm_service import LLMError
from llm_service.discovery import ModelCache, known_models
from plugin_bridge.app.settings.config import SettingsError, choose_provider, load_settings
from plugin_bridge.app.settings.providers import build_provider
from plugin_bridge.vault.datadir import data_dir_for

if TYPE_CHECKING:
    from llm_service.catalog import ModelInfo

SOURCES: Final = {
    "api": "from the provider just now",
    "cache": "from the cache (--refresh asks the provider)",
    "catalog": "from the built-in catalog (the provider cannot be reached)",
}
MODEL_COLUMNS: Final = ("model", "context", "output", "tools", "$/Mtok in", "$/Mtok out")


def run(
    vault: Path,
    data_dir: Path | None,
    *,
    refresh: bool,
    provider: str | None = None,
    base_url: str | None = None,
) -> int:
    flags = {"provider": provider, "base_url": base_url}
    given = {key: value for key, value in flags.items() if value is not None}
    return asyncio.run(_models(vault.expanduser(), data_dir, refresh, given, sys.stdout))


async def _models(
    vault: Path, data_dir: Path | None, refresh: bool, flags: dict[str, str], out: TextIO
) -> int:
    try:
        settings = load_settings(vault=vault, **flags)
    except SettingsError as exc:
        return _fail(str(exc))
    choice = choose_provider(settings)
    provider = build_provider(settings, choice)
    if provider is None:
        return _fail(choice.missing)
    cache = ModelCache(data_dir_for(vault, data_dir))
    try:
        models, source = await known_models(provider, choice.name, cache, refresh=refresh)
    except LLMError as exc:
        return _fail(f"The provider did not list its models: {exc}")
    finally:
        await provider.aclose()
    where = f" at {provider.base_url}" if provider.base_url else ""
    out.write(f"{choice.name}{where}: {len(models)} models, {SOURCES[source]}\n")
    rows = [MODEL_COLUMNS, *(model_row(model) for model in models)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(MODEL_COLUMNS))]
    for row in rows:
        cells = [row[0].ljust(widths[0])]
        cells += [cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)]
        out.write("  " + "  ".join(cells).rstrip() + "\n")
    return 0


def model_row(model: ModelInfo) -> tuple[str, ...]:
    tools = {True: "yes", False: "no", None: "?"}[model.supports_tools]
    return (
        model.id,
        _number(model.context_window),
        _number(model.max_output_tokens),
        tools,
        _price(model.input_price_per_mtok),
        _price(model.output_price_per_mtok),
    )


def _number(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


def _price(value: float | None) -> str:
    return "?" if value is None else f"{value:.2f}"


def _fail(message: str) -> int:
    print(message, file=sys.stderr)
    return 2
