"""``serve``'s second stage, before it listens: every setting checked (the settings file and
each value, the embedder, a local model server that must answer, a hosted provider's key). Its
own module because it loads pydantic and the settings, which ``serve``'s first stage (the
arguments and the lock) does without (see :mod:`plugin_bridge.cli.serve`)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from plugin_bridge.app.settings.config import (
    BridgeSettings,
    SettingsError,
    build_embedder,
    choose_provider,
    embedder_problem,
    load_settings,
    startup_problem,
)
from plugin_bridge.app.settings.providers import ProviderSetup, build_setup, key_problem

if TYPE_CHECKING:
    from llm_service.embedders import Embedder  # loaded only with an embedder


async def checked(
    given: dict[str, object], vault_root: Path, info_path: Path
) -> tuple[BridgeSettings, ProviderSetup, Embedder | None] | str:
    """The settings, providers and embedder, or why ``serve`` must not start (one sentence):
    an invalid value or settings file, the embedder, a local server that does not answer, a
    refused key, an OpenAI-compatible server without a loaded model."""
    try:
        settings = load_settings(**{**given, "vault": vault_root, "info_file": info_path})
    except SettingsError as exc:
        return str(exc)
    choice = choose_provider(settings)
    problem = await startup_problem(settings, choice)
    embedder = build_embedder(settings)
    problem = problem or await asyncio.to_thread(embedder_problem, settings, embedder)
    problem = problem or await key_problem(settings, choice)
    if problem is not None:
        return problem
    try:
        return settings, await build_setup(settings), embedder
    except SettingsError as exc:
        return str(exc)
